"""El historial de decisiones de los encargados: la pestaña «Historial» y su CSV.

Solo las tiendas de quien pregunta (``reclamos.tiendas_de``). Filtros opcionales, todos
a la vez: fechas (``desde`` incluida, ``hasta`` excluida), tipo de decisión (el que
manda, como en la puntuación: reject > edit > respond > approve; ``caducada`` = la
decidió el sistema), encargado (cualquiera de sus firmantes), cliente, pedido y tienda. La
más reciente primero.

Cada decisión lleva ``firmas``: todas las personas que firmaron esa pausa
(``firmas_aprobacion``), la primera antes, con su rol, la hora y lo que decidió cada una
(una aprobación de dos firmas tiene dos). ``encargado`` es quien la completó (la última).
Una caducada solo lleva las firmas que llegaron a darse antes del plazo.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agente.servicio.decisiones.decidir import SISTEMA
from nucleo import dinero, hoja_csv
from nucleo.fechas import fecha_hora
from nucleo.operaciones import por_herramienta

__all__ = [
    "CADUCADA", "FORMATOS_CSV", "NOMBRES_DECISION", "TIPOS", "Filtros", "buscar", "como_csv",
    "como_csv_hoja", "lo_que_decidio",
    "nombre_decision", "nombre_operacion", "tipo_de_nombre", "tipo_principal",
]

CADUCADA = "caducada"
_ORDEN = ("reject", "edit", "respond", "approve")
TIPOS = (*_ORDEN, CADUCADA)
# Lo que lee una persona (CLI, CSV para hojas de cálculo); la API sigue con los tipos de
# LangChain (``approve``...), que son su contrato (docs/api.md).
NOMBRES_DECISION = {"approve": "aprobada", "edit": "editada", "reject": "rechazada",
                    "respond": "respondida", CADUCADA: "caducada"}


def nombre_decision(tipo: str | None) -> str:
    """«aprobada», «editada»... (el tipo tal cual si no se conoce)."""
    return NOMBRES_DECISION.get(tipo or "", tipo or "")


def tipo_de_nombre(nombre: str) -> str:
    """El tipo de la API para lo que escribe una persona («editada» o «edit»).

    ``ValueError`` con los nombres válidos si no es ninguno."""
    valor = nombre.strip().lower()
    for tipo, espanol in NOMBRES_DECISION.items():
        if valor in (tipo, espanol):
            return tipo
    validos = ", ".join(NOMBRES_DECISION.values())
    raise ValueError(f"decisión desconocida «{nombre}»: usa una de estas: {validos}")


def nombre_operacion(herramienta: str | None) -> str:
    """El título de la operación declarada («Reembolso»), no el nombre de la herramienta."""
    operacion = por_herramienta(herramienta)
    return operacion.titulo if operacion else (herramienta or "")

# La página primero (la ventana cuenta el total); las firmas, solo de las filas de la página.
SELECT_DECISIONES_SQL = """
SELECT p.*, coalesce(fi.firmas, '[]'::jsonb) AS firmas
FROM (
SELECT d.id, d.thread_id, d.interrupt_id, d.tienda, coalesce(ti.nombre, d.tienda) AS tienda_nombre, d.encargado_id, e.nombre AS encargado_nombre,
       e.rol AS encargado_rol, c.cliente_id, cl.nombre AS cliente_nombre, d.decidida, d.aplicada,
       d.resultado, d.espera_segundos, d.peticion, d.decisiones, d.nota, d.fallo, count(*) OVER () AS total
FROM decisiones_encargado d
JOIN consultas_asistente c ON c.thread_id = d.thread_id
JOIN clientes cl ON cl.id = c.cliente_id
LEFT JOIN tiendas ti ON ti.id = d.tienda
LEFT JOIN encargados e ON e.id = d.encargado_id
WHERE (%(tiendas)s::text[] IS NULL OR d.tienda = ANY(%(tiendas)s))
  AND (%(tienda)s::text IS NULL OR d.tienda = %(tienda)s)
  AND (%(desde)s::timestamptz IS NULL OR d.decidida >= %(desde)s)
  AND (%(hasta)s::timestamptz IS NULL OR d.decidida < %(hasta)s)
  AND (%(encargado)s::text IS NULL OR d.encargado_id = %(encargado)s
       OR EXISTS (SELECT 1 FROM firmas_aprobacion f
                  WHERE f.thread_id = d.thread_id AND f.interrupt_id = d.interrupt_id
                    AND f.encargado_id = %(encargado)s))
  AND (%(cliente)s::text IS NULL OR c.cliente_id = %(cliente)s)
  AND (%(pedido)s::text IS NULL OR d.peticion -> 'action_requests'
       @> jsonb_build_array(jsonb_build_object('args', jsonb_build_object('pedido', %(pedido)s::text))))
  AND (%(tipo)s::text IS NULL
       OR (%(tipo)s = 'caducada' AND d.encargado_id = %(sistema)s)
       OR (d.encargado_id <> %(sistema)s AND %(tipo)s = (
             SELECT t FROM unnest(%(orden)s::text[]) WITH ORDINALITY AS o(t, n)
             WHERE d.decisiones @> jsonb_build_array(jsonb_build_object('type', o.t))
             ORDER BY o.n LIMIT 1)))
ORDER BY d.decidida DESC, d.id DESC
LIMIT %(limite)s OFFSET %(desplazamiento)s
) p
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object(
               'encargado', f.encargado_id, 'nombre', en.nombre, 'rol', f.rol,
               'fecha', f.firmada, 'decisiones', f.decisiones, 'canal', f.canal) ORDER BY f.id) AS firmas
    FROM firmas_aprobacion f LEFT JOIN encargados en ON en.id = f.encargado_id
    WHERE f.thread_id = p.thread_id AND f.interrupt_id = p.interrupt_id
) fi ON true
ORDER BY p.decidida DESC, p.id DESC
"""


@dataclass(frozen=True, kw_only=True)
class Filtros:
    """Los filtros del historial (None = sin filtrar). ``pagina`` empieza en 1."""

    desde: datetime | None = None
    hasta: datetime | None = None
    tipo: str | None = None
    encargado: str | None = None
    cliente: str | None = None
    pedido: str | None = None
    tienda: str | None = None
    pagina: int = 1
    por_pagina: int = 50

    def __post_init__(self) -> None:
        if self.tipo is not None and self.tipo not in TIPOS:
            raise ValueError(f"tipo de decisión desconocido: {self.tipo}")
        if self.pagina < 1 or not 1 <= self.por_pagina <= 10_000:
            raise ValueError("página o tamaño de página fuera de rango")


def tipo_principal(encargado_id: str, decisiones: list[dict[str, Any]]) -> str:
    if encargado_id == SISTEMA:
        return CADUCADA
    tipos = {d.get("type") for d in decisiones}
    return next((t for t in _ORDEN if t in tipos), "approve")


def _campo_importe(herramienta: str | None) -> str:
    """El argumento con el importe: el primero de dinero de su operación declarada
    (``importe`` en una herramienta sin operación)."""
    operacion = por_herramienta(herramienta)
    return next((c.nombre for c in operacion.campos if c.dinero), "importe") if operacion else "importe"


def _acciones(peticion: dict[str, Any], decisiones: list[dict[str, Any]], *, fallida: bool = False) -> list[dict[str, Any]]:
    """Cada operación de la pausa con lo decidido. ``importe_final``: lo aprobado o editado, y
    nada en una decisión fallida (el efecto no se hizo: no se pagó nada)."""
    salida = []
    for n, accion in enumerate(peticion.get("action_requests") or []):
        args = accion.get("args") or {}
        decision = decisiones[n] if n < len(decisiones) else {}
        final = (decision.get("edited_action") or {}).get("args") or args
        campo = _campo_importe(accion.get("name"))
        propuesto, importe = dinero.importe_o_none(args.get(campo)), dinero.importe_o_none(final.get(campo))
        salida.append({
            "nombre": accion.get("name"),
            "titulo": nombre_operacion(accion.get("name")),
            "pedido": args.get("pedido"),
            "tipo": decision.get("type"),
            "importe_propuesto": dinero.texto(propuesto) if propuesto is not None else None,
            "importe_final": (dinero.texto(importe) if importe is not None else None)
            if decision.get("type") in ("approve", "edit") and not fallida else None,
            "motivo": decision.get("message"),
        })
    return salida


def _lo_decidido(decisiones: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Lo que decidió una firma en cada operación: tipo, importe si editó, motivo o texto."""
    salida = []
    for decision in decisiones:
        editada = decision.get("edited_action") or {}
        args = editada.get("args") or {}
        campo = _campo_importe(editada.get("name"))
        importe = dinero.importe_o_none(args.get(campo)) if decision.get("type") == "edit" else None
        salida.append({"tipo": decision.get("type"),
                       "importe": dinero.texto(importe) if importe is not None else None,
                       "motivo": decision.get("message")})
    return salida


def _firmas(f: dict[str, Any]) -> list[dict[str, Any]]:
    """Todas las firmas de la pausa, la primera antes. Una decisión sin filas de firma (de
    antes de ``firmas_aprobacion`` y no migrada) cuenta como la firma de quien la registró."""
    firmas = [{
        "encargado": x["encargado"], "nombre": x["nombre"] or x["encargado"], "rol": x["rol"],
        "fecha": datetime.fromisoformat(x["fecha"]), "decision": tipo_principal(x["encargado"], x["decisiones"]),
        "acciones": _lo_decidido(list(x["decisiones"])), "canal": x.get("canal"),
    } for x in f["firmas"] or []]
    if not firmas and f["encargado_id"] != SISTEMA:
        firmas.append({
            "encargado": f["encargado_id"], "nombre": f["encargado_nombre"] or f["encargado_id"],
            "rol": f["encargado_rol"] or "encargado", "fecha": f["decidida"],
            "decision": tipo_principal(f["encargado_id"], list(f["decisiones"])),
            "acciones": _lo_decidido(list(f["decisiones"])), "canal": None,
        })
    return firmas


def buscar(
    conexion: psycopg.Connection, tiendas: list[str] | None, filtros: Filtros
) -> tuple[list[dict[str, Any]], int]:
    """(página de decisiones, total que cumple los filtros). ``tiendas=None``: todas (CLI)."""
    filas = conexion.execute(SELECT_DECISIONES_SQL, {
        "tiendas": tiendas, "tienda": filtros.tienda, "desde": filtros.desde, "hasta": filtros.hasta,
        "encargado": filtros.encargado, "cliente": filtros.cliente, "pedido": filtros.pedido,
        "tipo": filtros.tipo, "sistema": SISTEMA, "orden": list(_ORDEN),
        "limite": filtros.por_pagina, "desplazamiento": (filtros.pagina - 1) * filtros.por_pagina,
    }).fetchall()
    total = filas[0]["total"] if filas else 0
    return [{
        "id": f["id"], "thread_id": f["thread_id"], "tienda": f["tienda"], "tienda_nombre": f["tienda_nombre"],
        "encargado": {"id": f["encargado_id"], "nombre": f["encargado_nombre"] or f["encargado_id"]},
        "cliente": {"id": f["cliente_id"], "nombre": f["cliente_nombre"]},
        "decidida": f["decidida"], "aplicada": f["aplicada"], "resultado": f["resultado"],
        "espera_segundos": int(f["espera_segundos"]),
        "tipo": tipo_principal(f["encargado_id"], list(f["decisiones"])),
        "acciones": _acciones(f["peticion"] or {}, list(f["decisiones"]), fallida=bool(f["fallo"])),
        "firmas": _firmas(f),
        "nota": f["nota"],
        "estado": _estado(f), "fallo": f["fallo"],
    } for f in filas], total


def _estado(fila: dict[str, Any]) -> str:
    """aplicada | fallida (el efecto aprobado no se pudo hacer) | sin_aplicar."""
    return "fallida" if fila["fallo"] else ("aplicada" if fila["aplicada"] else "sin_aplicar")


COLUMNAS_CSV = ("id", "decidida", "tienda", "hilo", "cliente", "cliente_nombre", "encargado",
                "encargado_nombre", "decision", "operacion", "pedido", "importe_propuesto",
                "importe_final", "espera_segundos", "motivo", "nota", "estado", "fallo", "firmas")


def lo_que_decidio(firma: dict[str, Any], n: int) -> dict[str, Any]:
    """Lo que decidió ``firma`` en la operación ``n`` (su decisión principal si no consta)."""
    acciones = firma.get("acciones") or []
    return acciones[n] if n < len(acciones) else {"tipo": firma["decision"], "importe": None, "motivo": None}


def _firmas_csv(firmas: list[dict[str, Any]], n: int) -> str:
    """«Nombre (id, rol) fecha decisión [importe][: motivo]» de cada firmante, con «; »."""
    partes = []
    for f in firmas:
        decidio = lo_que_decidio(f, n)
        texto = " ".join(filter(None, [decidio["tipo"], decidio["importe"]]))
        if decidio["motivo"]:
            texto += f": {decidio['motivo']}"
        partes.append(f"{f['nombre']} ({f['encargado']}, {f['rol']}) {f['fecha'].isoformat()} {texto}")
    return "; ".join(partes)


def como_csv(decisiones: list[dict[str, Any]]) -> str:
    """Una fila por operación decidida (una decisión puede tener varias); en ``firmas``, cada
    persona que firmó y lo que decidió en esa operación."""
    return hoja_csv.escribir(COLUMNAS_CSV, (
        (d["id"], d["decidida"], d["tienda"], d["thread_id"], d["cliente"]["id"],
         d["cliente"]["nombre"], d["encargado"]["id"], d["encargado"]["nombre"], d["tipo"],
         a.get("nombre"), a.get("pedido"), a.get("importe_propuesto"), a.get("importe_final"),
         d["espera_segundos"], a.get("motivo"), d["nota"], d["estado"], d["fallo"],
         _firmas_csv(d.get("firmas") or [], n))
        for d in decisiones for n, a in enumerate(d["acciones"] or [{}])), hoja=False)


# El CSV por defecto es para una hoja de cálculo en español (Excel, LibreOffice): «;» entre
# columnas, UTF-8 con BOM (sin él Excel lo lee como Windows-1252), coma decimal y la hora de
# la tienda con su zona. El de ``como_csv`` («maquina») no cambia: lo leen programas.
FORMATOS_CSV = hoja_csv.FORMATOS
COLUMNAS_CSV_HOJA = (
    "Id", "Decidida", "Zona horaria", "Tienda", "Hilo", "Cliente", "Nombre del cliente", "Encargado",
    "Nombre del encargado", "Decisión", "Operación", "Pedido", "Importe propuesto (EUR)",
    "Importe final (EUR)", "Espera (segundos)", "Motivo", "Nota", "Estado", "Fallo", "Firmas",
)
_ESTADOS_HOJA = {"aplicada": "aplicada", "fallida": "fallida", "sin_aplicar": "sin aplicar"}


def _firmas_hoja(firmas: list[dict[str, Any]], n: int) -> str:
    partes = []
    for f in firmas:
        decidio = lo_que_decidio(f, n)
        texto = nombre_decision(decidio["tipo"])
        if decidio["importe"]:
            texto += f" a {dinero.eur(decidio['importe'])}"
        if decidio["motivo"]:
            texto += f": {decidio['motivo']}"
        partes.append(f"{f['nombre']} ({f['encargado']}, {f['rol']}) {texto} · {fecha_hora(f['fecha'])}")
    return "; ".join(partes)


def como_csv_hoja(decisiones: list[dict[str, Any]]) -> str:
    """Lo mismo que ``como_csv``, para abrirlo con doble clic en una hoja de cálculo española
    (``nucleo.hoja_csv``): cabeceras y valores en español, decisiones («editada») y
    operaciones («Reembolso») por su nombre. Empieza por el BOM."""
    def filas():
        for d in decisiones:
            decidida, zona = hoja_csv.hora_tienda(d["decidida"])
            for n, a in enumerate(d["acciones"] or [{}]):
                yield (d["id"], decidida, zona, d["tienda"], d["thread_id"], d["cliente"]["id"],
                       d["cliente"]["nombre"], d["encargado"]["id"], d["encargado"]["nombre"],
                       nombre_decision(d["tipo"]), nombre_operacion(a.get("nombre")) if a else "", a.get("pedido"),
                       hoja_csv.coma(a.get("importe_propuesto")), hoja_csv.coma(a.get("importe_final")),
                       d["espera_segundos"], a.get("motivo"), d["nota"], _ESTADOS_HOJA.get(d["estado"], d["estado"]),
                       d["fallo"], _firmas_hoja(d.get("firmas") or [], n))
    return hoja_csv.escribir(COLUMNAS_CSV_HOJA, filas(), hoja=True)
