"""Movimientos: todo el dinero y toda la mercancía que se movieron, automáticos o firmados.

Una fila por movimiento (la pestaña «Movimientos», su CSV y ``GET /api/movimientos``):

- ``reembolso``: un reembolso de una devolución (``reembolsos``, concepto ``devolucion``);
- ``diferencia_devuelta``: la diferencia a favor del cliente de un cambio más barato;
- ``cobro``: la diferencia a cargo del cliente de un cambio más caro (``cobros``);
- ``cobro_devuelto``: el cobro devuelto de un cambio anulado sin stock (concepto ``anulacion``);
- ``cancelacion``: un pedido cancelado y lo que se le devuelve (con la referencia y el estado
  de su reembolso, que no sale aparte);
- ``cambio``: el cambio de artículo (mercancía; su dinero va en las tres filas de arriba);
- ``reenvio``: el envío otra vez de unas unidades (mercancía: su valor);
- ``vale``: un vale de compensación (un pasivo de la tienda, sin pasarela).

Con cada uno, quién lo autorizó (las personas que firmaron esa llamada, o «automático
(política)» si la política no pedía firma), el veredicto guardado de la política, la
referencia en la pasarela (el número del asiento, que es la referencia que se le manda, y
el id del proveedor) y su estado. ``estado`` es uno de ``ESTADOS``: solo un movimiento
``completado`` lleva ``importe_final`` (lo que de verdad se movió); uno ``fallido`` (el
último intento en la pasarela falló, fallo tardío o marcado para una persona), pendiente
o anulado no, y no suma en ``importe_final`` de los totales.

Los totales por tipo cuadran con el libro que mira ``agente auditoria``: el de los tipos
que salen por la pasarela es la suma de los asientos completados (``libro_movimientos``),
que la auditoría cruza uno a uno con los movimientos de la pasarela.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg

from nucleo import dinero

__all__ = ["ESTADOS", "FLUJOS", "TIPOS", "TITULOS", "Filtros", "buscar", "totales"]

TITULOS = {
    "reembolso": "Reembolso", "diferencia_devuelta": "Diferencia de cambio devuelta",
    "cobro": "Cobro de diferencia de cambio", "cobro_devuelto": "Cobro devuelto (cambio anulado)",
    "cancelacion": "Cancelación", "cambio": "Cambio de artículo", "reenvio": "Reenvío", "vale": "Vale",
}
TIPOS = tuple(TITULOS)
# Hacia dónde va: dinero al cliente, dinero del cliente, un vale (pasivo) o mercancía.
FLUJOS = {"reembolso": "sale", "diferencia_devuelta": "sale", "cobro": "entra", "cobro_devuelto": "sale",
          "cancelacion": "sale", "cambio": "mercancia", "reenvio": "mercancia", "vale": "vale"}
ESTADOS = ("completado", "pendiente", "fallido", "anulado")

# El estado de un asiento de la pasarela (``r``: una fila de reembolsos o cobros). Fallido: la
# pasarela falló al menos una vez (``intentos`` solo cuenta fallos; «en curso» no lo sube).
_ESTADO_ASIENTO = """CASE WHEN {r}.estado IN ('emitido', 'confirmado') THEN 'completado'
     WHEN {r}.estado = 'caducado' THEN 'anulado'
     WHEN {r}.fallo_tardio_en IS NOT NULL OR {r}.requiere_persona OR {r}.intentos > 0 THEN 'fallido'
     ELSE 'pendiente' END"""
_PASARELA = """{r}.numero AS referencia, {r}.id_proveedor, {r}.estado AS estado_pasarela, {r}.intentos,
       {r}.ultimo_error, {r}.requiere_persona, {r}.fallo_tardio_en"""
_SIN_PASARELA = """NULL::text AS referencia, NULL::text AS id_proveedor, NULL::text AS estado_pasarela,
       0 AS intentos, NULL::text AS ultimo_error, false AS requiere_persona, NULL::timestamptz AS fallo_tardio_en"""

# Todos los movimientos con su autorización y su veredicto, filtrados. ``firmantes``: quienes
# aprobaron o editaron esa llamada (la n-ésima de su pausa) en ``firmas_aprobacion``.
MOVIMIENTOS_SQL = f"""
WITH base AS (
SELECT CASE r.concepto WHEN 'devolucion' THEN 'reembolso' WHEN 'diferencia' THEN 'diferencia_devuelta'
            ELSE 'cobro_devuelto' END AS tipo,
       r.numero, coalesce(s.numero, r.numero) AS operacion, r.creado AS fecha, r.emitido_en AS completado_en,
       r.tienda, r.pedido_id, r.cliente_id, r.importe, r.thread_id, r.tool_call_id,
       {_ESTADO_ASIENTO.format(r="r")} AS estado, {_PASARELA.format(r="r")},
       CASE WHEN s.id IS NOT NULL THEN po.nombre || ' por ' || pn.nombre ELSE r.motivo END AS detalle
FROM reembolsos r
LEFT JOIN sustituciones s ON s.id = r.sustitucion_id
LEFT JOIN productos po ON po.sku = s.sku_original
LEFT JOIN productos pn ON pn.sku = s.sku_nuevo
WHERE r.concepto <> 'cancelacion'
UNION ALL
SELECT 'cobro', c.numero, s.numero, c.creado, c.confirmado_en, c.tienda, c.pedido_id, c.cliente_id,
       c.importe, c.thread_id, c.tool_call_id, {_ESTADO_ASIENTO.format(r="c")}, {_PASARELA.format(r="c")},
       po.nombre || ' por ' || pn.nombre
FROM cobros c
JOIN sustituciones s ON s.id = c.sustitucion_id
LEFT JOIN productos po ON po.sku = s.sku_original
LEFT JOIN productos pn ON pn.sku = s.sku_nuevo
UNION ALL
SELECT 'cancelacion', ca.numero, ca.numero, ca.creada, coalesce(r.emitido_en, ca.creada), ca.tienda,
       ca.pedido_id, ca.cliente_id, ca.importe, ca.thread_id, ca.tool_call_id,
       CASE WHEN r.id IS NULL THEN 'completado' ELSE {_ESTADO_ASIENTO.format(r="r")} END,
       {_PASARELA.format(r="r")}, ca.motivo
FROM cancelaciones ca
LEFT JOIN reembolsos r ON r.cancelacion_id = ca.id
UNION ALL
SELECT 'cambio', s.numero, s.numero, s.creada, s.completada_en, s.tienda, s.pedido_id, s.cliente_id,
       NULL::numeric, s.thread_id, s.tool_call_id,
       CASE s.estado WHEN 'hecha' THEN 'completado' WHEN 'anulada' THEN 'anulado' ELSE 'pendiente' END,
       {_SIN_PASARELA},
       po.nombre || ' por ' || pn.nombre || CASE WHEN s.diferencia > 0 THEN ', diferencia a cargo del cliente: '
                                                  WHEN s.diferencia < 0 THEN ', diferencia a favor del cliente: '
                                                  ELSE ', sin diferencia' END
       || CASE WHEN s.diferencia <> 0 THEN replace(abs(s.diferencia)::text, '.', ',') || ' EUR' ELSE '' END
FROM sustituciones s
LEFT JOIN productos po ON po.sku = s.sku_original
LEFT JOIN productos pn ON pn.sku = s.sku_nuevo
UNION ALL
SELECT 'reenvio', rv.numero, rv.numero, rv.creado, rv.creado, rv.tienda, rv.pedido_id, rv.cliente_id,
       rv.valor, rv.thread_id, rv.tool_call_id, 'completado', {_SIN_PASARELA},
       rv.unidades::text || CASE WHEN rv.unidades = 1 THEN ' unidad de «' ELSE ' unidades de «' END
       || p.nombre || CASE rv.motivo WHEN 'no_llego' THEN '»: no llegó' ELSE '»: llegó roto' END
FROM reenvios rv
LEFT JOIN productos p ON p.sku = rv.sku
UNION ALL
SELECT 'vale', v.numero, v.numero, v.creado, v.creado, v.tienda, v.pedido_id, v.cliente_id, v.importe,
       v.thread_id, v.tool_call_id, CASE WHEN v.estado = 'anulado' THEN 'anulado' ELSE 'completado' END,
       {_SIN_PASARELA},
       CASE v.estado WHEN 'canjeado' THEN 'canjeado' ELSE 'caduca el ' || to_char(v.caduca, 'DD/MM/YYYY') END
FROM vales v
),
filtrados AS (
SELECT b.* FROM base b
WHERE (%(tiendas)s::text[] IS NULL OR b.tienda = ANY(%(tiendas)s))
  AND (%(tienda)s::text IS NULL OR b.tienda = %(tienda)s)
  AND (%(desde)s::timestamptz IS NULL OR b.fecha >= %(desde)s)
  AND (%(hasta)s::timestamptz IS NULL OR b.fecha < %(hasta)s)
  AND (%(tipo)s::text IS NULL OR b.tipo = %(tipo)s)
  AND (%(estado)s::text IS NULL OR b.estado = %(estado)s)
)
"""  # noqa: S608 - fragmentos constantes de este módulo

SELECT_MOVIMIENTOS_SQL = MOVIMIENTOS_SQL + """
SELECT f.*, coalesce(ti.nombre, f.tienda) AS tienda_nombre, cl.nombre AS cliente_nombre,
       ev.requiere_encargado, ev.motivos, fi.firmantes, count(*) OVER () AS total
FROM filtrados f
LEFT JOIN tiendas ti ON ti.id = f.tienda
LEFT JOIN clientes cl ON cl.id = f.cliente_id
LEFT JOIN evaluaciones_politica ev ON ev.thread_id = f.thread_id AND ev.tool_call_id = f.tool_call_id
LEFT JOIN LATERAL (
    SELECT string_agg(coalesce(en.nombre, fa.encargado_id) || ' (' || fa.rol || ')', '; ' ORDER BY fa.id) AS firmantes
    FROM decisiones_encargado d
    CROSS JOIN LATERAL jsonb_array_elements_text(d.peticion -> 'tool_call_ids') WITH ORDINALITY AS t(tool_call_id, n)
    JOIN firmas_aprobacion fa ON fa.thread_id = d.thread_id AND fa.interrupt_id = d.interrupt_id
    LEFT JOIN encargados en ON en.id = fa.encargado_id
    WHERE d.thread_id = f.thread_id AND t.tool_call_id = f.tool_call_id
      AND fa.decisiones -> (t.n::int - 1) ->> 'type' IN ('approve', 'edit')
) fi ON true
ORDER BY f.fecha DESC, f.numero DESC
LIMIT %(limite)s OFFSET %(desplazamiento)s
"""  # noqa: S608 - constantes de este módulo

# Por tipo: cuántos, cuánto en total, cuánto se movió de verdad (solo los completados) y
# cuántos siguen pendientes o fallaron.
SELECT_TOTALES_SQL = MOVIMIENTOS_SQL + """
SELECT tipo, count(*) AS movimientos, sum(importe) AS importe,
       coalesce(sum(importe) FILTER (WHERE estado = 'completado'), 0) AS importe_final,
       count(*) FILTER (WHERE estado = 'pendiente') AS pendientes,
       count(*) FILTER (WHERE estado = 'fallido') AS fallidos,
       count(*) FILTER (WHERE estado = 'anulado') AS anulados
FROM filtrados GROUP BY tipo
"""  # noqa: S608 - constantes de este módulo


@dataclass(frozen=True, kw_only=True)
class Filtros:
    """Los filtros de los movimientos (None = sin filtrar); ``desde`` incluida, ``hasta`` no."""

    desde: datetime | None = None
    hasta: datetime | None = None
    tipo: str | None = None
    estado: str | None = None
    tienda: str | None = None
    pagina: int = 1
    por_pagina: int = 50

    def __post_init__(self) -> None:
        if self.tipo is not None and self.tipo not in TIPOS:
            raise ValueError(f"tipo de movimiento desconocido: {self.tipo}")
        if self.estado is not None and self.estado not in ESTADOS:
            raise ValueError(f"estado de movimiento desconocido: {self.estado}")
        if self.pagina < 1 or not 1 <= self.por_pagina <= 10_000:
            raise ValueError("página o tamaño de página fuera de rango")


def _parametros(tiendas: list[str] | None, filtros: Filtros) -> dict[str, Any]:
    return {"tiendas": tiendas, "tienda": filtros.tienda, "desde": filtros.desde, "hasta": filtros.hasta,
            "tipo": filtros.tipo, "estado": filtros.estado, "limite": filtros.por_pagina,
            "desplazamiento": (filtros.pagina - 1) * filtros.por_pagina}


def _texto(valor: Decimal | None) -> str | None:
    return dinero.texto(valor) if valor is not None else None


def _veredicto(fila: dict[str, Any]) -> str:
    if fila["requiere_encargado"] is None:
        return "sin veredicto guardado"
    if not fila["requiere_encargado"]:
        return "automático: dentro de la política"
    motivos = "; ".join(str(m) for m in fila["motivos"] or [])
    return "pedía firma" + (f": {motivos}" if motivos else "")


def _autorizado(fila: dict[str, Any]) -> str:
    if fila["firmantes"]:
        return fila["firmantes"]
    return "automático (política)" if fila["requiere_encargado"] is False else "sin firma registrada"


def _movimiento(f: dict[str, Any]) -> dict[str, Any]:
    completado = f["estado"] == "completado"
    return {
        "tipo": f["tipo"], "titulo": TITULOS[f["tipo"]], "flujo": FLUJOS[f["tipo"]],
        "numero": f["numero"], "operacion": f["operacion"], "fecha": f["fecha"],
        "completado_en": f["completado_en"] if completado else None,
        "tienda": f["tienda"], "tienda_nombre": f["tienda_nombre"],
        "pedido": f["pedido_id"], "cliente": {"id": f["cliente_id"], "nombre": f["cliente_nombre"]},
        "importe": _texto(f["importe"]),
        # Solo lo que de verdad se movió: un fallido o pendiente no «pagó» nada.
        "importe_final": _texto(f["importe"]) if completado else None,
        "estado": f["estado"], "autorizado_por": _autorizado(f), "veredicto": _veredicto(f),
        "pasarela": None if f["referencia"] is None else {
            "referencia": f["referencia"], "id_proveedor": f["id_proveedor"], "estado": f["estado_pasarela"],
            "intentos": f["intentos"], "error": f["ultimo_error"], "requiere_persona": f["requiere_persona"],
            "fallo_tardio_en": f["fallo_tardio_en"]},
        "detalle": f["detalle"], "thread_id": f["thread_id"],
    }


def buscar(
    conexion: psycopg.Connection, tiendas: list[str] | None, filtros: Filtros
) -> tuple[list[dict[str, Any]], int]:
    """(página de movimientos, el más reciente primero; total que cumple los filtros).
    ``tiendas=None``: todas (CLI)."""
    filas = conexion.execute(SELECT_MOVIMIENTOS_SQL, _parametros(tiendas, filtros)).fetchall()
    return [_movimiento(f) for f in filas], (filas[0]["total"] if filas else 0)


def totales(conexion: psycopg.Connection, tiendas: list[str] | None, filtros: Filtros) -> list[dict[str, Any]]:
    """Un total por tipo (en el orden de ``TIPOS``, solo los que tienen movimientos), con
    los mismos filtros y sin paginar: ``importe_final`` suma solo los completados."""
    por_tipo = {f["tipo"]: f for f in conexion.execute(SELECT_TOTALES_SQL, _parametros(tiendas, filtros))}
    return [{
        "tipo": tipo, "titulo": TITULOS[tipo], "flujo": FLUJOS[tipo], "movimientos": f["movimientos"],
        "importe": _texto(f["importe"]), "importe_final": _texto(f["importe_final"]) if f["importe"] is not None else None,
        "pendientes": f["pendientes"], "fallidos": f["fallidos"], "anulados": f["anulados"],
    } for tipo in TIPOS if (f := por_tipo.get(tipo))]
