"""El libro de compensaciones: qué unidades de cada línea quedan libres y quién las ocupa.

Regla: cada unidad de una línea se compensa una vez como mucho, reembolsada (del todo o
en parte: un encargado que edita 120 -> 90 sobre una unidad de 120 la consume entera)
o cambiada, nunca las dos cosas. Lo reembolsable de una línea es el precio de sus
unidades libres (vista ``libro_lineas``). Lo hace cumplir la base de datos: la clave
primaria de ``compensaciones_unidad`` es (pedido, línea, unidad) y un disparador impide
pasar del precio de la unidad, así que dos herramientas a la vez sobre el mismo pedido
no pueden ocupar la misma unidad aunque fallara el candado del pedido.

La asignación de unidades a un reembolso (pura, sin base) está en ``caja.asignacion``.

También aquí: los hechos de elegibilidad (vista ``elegibilidad_pedidos``, la que lee la
política) y los movimientos de stock de un cambio, que el cobro confirmado completa.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg

from caja.asignacion import UnidadLibre
from nucleo.contexto import ContextoCliente
from nucleo.errores import (
    AprobacionCaducada,
    ContextoAusente,
    ErrorDominio,
    PedidoNoEncontrado,
)
from nucleo.puertos import CLAVE_EN_REVISION, CLAVE_IMPOSIBLE, Revalidador, texto_en_revision

__all__ = [
    "Llamada",
    "apuntar_unidades",
    "bloquear_pedido",
    "elegibilidad",
    "exigir_entregado",
    "exigir_no_evaluada_imposible",
    "exigir_veredicto_vigente",
    "historial",
    "lineas_del_libro",
    "mover_stock",
    "numeros_de_linea",
    "unidades_libres",
]

# El candado del pedido serializa las compensaciones de un mismo pedido (reembolsos y
# cambios); la clave primaria del libro lo garantiza aunque alguien se lo saltara.
BLOQUEAR_PEDIDO_SQL = """
SELECT id, cliente_id, tienda, importe FROM pedidos
WHERE id = %(pedido)s AND cliente_id = %(cliente_id)s
FOR UPDATE
"""

SELECT_LIBRO_LINEAS_SQL = """
SELECT linea, sku, unidades, precio_unitario, pagado, reembolsado, unidades_reembolsadas,
       unidades_cambiadas, valor_cambiado, unidades_libres, reembolsable
FROM libro_lineas WHERE pedido_id = %(pedido)s ORDER BY linea
"""

# Las unidades sin compensar, en el orden de asignación (línea, unidad).
SELECT_UNIDADES_LIBRES_SQL = """
SELECT l.linea, l.sku, g.unidad, l.precio_unitario AS precio
FROM lineas_pedido l
CROSS JOIN LATERAL generate_series(1, l.unidades) AS g(unidad)
WHERE l.pedido_id = %(pedido)s
  AND NOT EXISTS (SELECT 1 FROM compensaciones_unidad c
                  WHERE c.pedido_id = l.pedido_id AND c.linea = l.linea AND c.unidad = g.unidad)
ORDER BY l.linea, g.unidad
"""

SELECT_NUMEROS_DE_LINEA_SQL = """
SELECT linea FROM lineas_pedido WHERE pedido_id = %(pedido)s ORDER BY linea
"""

# Todas las unidades de una operación en una sentencia.
INSERT_UNIDADES_SQL = """
INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, sustitucion_id, importe)
SELECT %(pedido)s, x.linea, x.unidad, %(reembolso_id)s, %(sustitucion_id)s, x.importe
FROM unnest(%(lineas)s::int[], %(unidades)s::int[], %(importes)s::numeric[])
     AS x(linea, unidad, importe)
"""

SELECT_ELEGIBILIDAD_SQL = """
SELECT pedido_id, cliente_id, tienda, estado, entregado, entregado_en, dias_desde_entrega,
       ventana_dias, dentro_de_ventana, reembolsos, sustituciones, compensado,
       unidades_libres, reembolsable
FROM elegibilidad_pedidos WHERE pedido_id = %(pedido)s
"""

# Lo mismo y, en la misma sentencia, si la política dio por imposible esta llamada: el
# efecto lee los dos hechos de un viaje (una sentencia menos por reembolso o cambio).
SELECT_ELEGIBILIDAD_DE_LLAMADA_SQL = """
SELECT e.pedido_id, e.cliente_id, e.tienda, e.estado, e.entregado, e.entregado_en,
       e.dias_desde_entrega, e.ventana_dias, e.dentro_de_ventana, e.reembolsos, e.sustituciones,
       e.compensado, e.unidades_libres, e.reembolsable,
       (SELECT ev.umbrales ->> %(clave)s FROM evaluaciones_politica ev
        WHERE ev.thread_id = %(thread_id)s AND ev.tool_call_id = %(tool_call_id)s) AS razon_imposible,
       (SELECT ev.umbrales ->> %(clave_revision)s FROM evaluaciones_politica ev
        WHERE ev.thread_id = %(thread_id)s AND ev.tool_call_id = %(tool_call_id)s) AS en_revision
FROM elegibilidad_pedidos e WHERE e.pedido_id = %(pedido)s
"""

# Lo compensado de un pedido, por orden de fecha: lo que la tarjeta del encargado enseña.
SELECT_HISTORIAL_SQL = """
SELECT 'reembolso' AS tipo, r.numero, r.concepto, r.importe, r.estado, r.creado AS fecha,
       (SELECT string_agg(DISTINCT c.linea::text, ', ') FROM compensaciones_unidad c
         WHERE c.reembolso_id = r.id) AS lineas,
       s.numero AS cambio, 1 AS orden
FROM reembolsos r LEFT JOIN sustituciones s ON s.id = r.sustitucion_id
WHERE r.pedido_id = %(pedido)s
UNION ALL
SELECT 'cambio', s.numero, s.sku_original || ' -> ' || s.sku_nuevo, s.diferencia, s.estado,
       s.creada, s.linea::text, NULL, 0
FROM sustituciones s WHERE s.pedido_id = %(pedido)s
UNION ALL
SELECT 'cobro', c.numero, 'diferencia', c.importe, c.estado, c.creado, NULL, s.numero, 1
FROM cobros c JOIN sustituciones s ON s.id = c.sustitucion_id
WHERE c.pedido_id = %(pedido)s
ORDER BY fecha, orden, numero
"""

RETIRAR_UNIDAD_SQL = """
UPDATE stock SET unidades = unidades - 1
WHERE tienda = %(tienda)s AND sku = %(sku)s AND unidades > 0
RETURNING unidades
"""

DEVOLVER_UNIDAD_SQL = """
INSERT INTO stock (sku, tienda, unidades) VALUES (%(sku)s, %(tienda)s, 1)
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = stock.unidades + 1
"""

# La razón por la que la política no pidió firma a esta llamada: la vio imposible.
SELECT_EVALUADA_IMPOSIBLE_SQL = """
SELECT umbrales ->> %(clave)s AS razon, umbrales ->> %(clave_revision)s AS en_revision
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

CADUCADA = "la aprobación ha caducado"


def clave_idempotencia(thread_id: str | None, tool_call_id: str | None) -> str:
    """La clave de un efecto: (hilo, llamada). Sin cualquiera de los dos no hay garantía."""
    if not tool_call_id:
        raise ContextoAusente(
            "falta el identificador de la llamada (tool_call_id): sin él no se puede "
            "garantizar que la operación no se ejecute dos veces"
        )
    if not thread_id:
        raise ContextoAusente(
            "falta el identificador del hilo (thread_id): sin él no se puede garantizar "
            "que la operación no se ejecute dos veces"
        )
    return f"{thread_id}:{tool_call_id}"


@dataclass(frozen=True, kw_only=True)
class Llamada:
    """Una ejecución de una herramienta con efectos: el cliente (del contexto, nunca de los
    argumentos del modelo), el hilo, la llamada del modelo y sus metadatos.

    ``clave`` es la de idempotencia (``hilo:llamada``); sin hilo o sin llamada, construirla
    es ``ContextoAusente``: no hay garantía de no ejecutar dos veces.

    ``revalidador``: la política que vuelve a decidir la regla en la transacción del efecto
    (``exigir_veredicto_vigente``); el agente siempre lo pasa. Sin él (una prueba que llama
    a la función de dominio sin agente) no se revalida.
    """

    contexto: ContextoCliente
    thread_id: str
    tool_call_id: str
    aprobado_por: str | None = None
    trace_id: str | None = None
    revalidador: Revalidador | None = None
    clave: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "clave", clave_idempotencia(self.thread_id, self.tool_call_id))

    def parametros(self) -> dict[str, Any]:
        """Las columnas comunes de un asiento: clave, hilo, llamada, cliente, firma, traza."""
        return {
            "clave": self.clave,
            "thread_id": self.thread_id,
            "tool_call_id": self.tool_call_id,
            "cliente_id": self.contexto.cliente_id,
            "aprobado_por": self.aprobado_por,
            "trace_id": self.trace_id,
        }


def bloquear_pedido(conexion: psycopg.Connection, *, pedido: str, cliente_id: str) -> dict:
    """Bloquea el pedido del cliente (``FOR UPDATE``) y lo devuelve; si no existe o es de
    otro cliente, ``PedidoNoEncontrado`` (el mismo texto en los dos casos)."""
    fila = conexion.execute(BLOQUEAR_PEDIDO_SQL, {"pedido": pedido, "cliente_id": cliente_id}).fetchone()
    if fila is None:
        raise PedidoNoEncontrado(pedido)
    return fila


def unidades_libres(conexion: psycopg.Connection, pedido: str) -> list[UnidadLibre]:
    """Las unidades sin compensar del pedido; llamar con el pedido bloqueado."""
    return [
        UnidadLibre(linea=f["linea"], unidad=f["unidad"], precio=f["precio"], sku=f["sku"])
        for f in conexion.execute(SELECT_UNIDADES_LIBRES_SQL, {"pedido": pedido}).fetchall()
    ]


def numeros_de_linea(conexion: psycopg.Connection, pedido: str) -> list[int]:
    return [f["linea"] for f in conexion.execute(SELECT_NUMEROS_DE_LINEA_SQL, {"pedido": pedido})]


def apuntar_unidades(
    conexion: psycopg.Connection,
    *,
    pedido: str,
    asignacion: Iterable[tuple[UnidadLibre, Decimal]],
    reembolso_id: int | None = None,
    sustitucion_id: int | None = None,
) -> None:
    """Ocupa las unidades en el libro. Si otra transacción ocupó una a la vez, la clave
    primaria lo impide y se responde con un error claro (la transacción se deshace)."""
    filas = list(asignacion)
    try:
        conexion.execute(
            INSERT_UNIDADES_SQL,
            {
                "pedido": pedido,
                "lineas": [u.linea for u, _ in filas],
                "unidades": [u.unidad for u, _ in filas],
                "importes": [parte for _, parte in filas],
                "reembolso_id": reembolso_id,
                "sustitucion_id": sustitucion_id,
            },
        )
    except psycopg.errors.UniqueViolation as exc:
        raise ErrorDominio(
            f"una unidad del pedido {pedido} acaba de reembolsarse o cambiarse en otra "
            "operación; no se ha hecho nada: consulta el pedido otra vez",
            pedido=pedido,
        ) from exc


def lineas_del_libro(conexion: psycopg.Connection, pedido: str) -> list[dict]:
    return conexion.execute(SELECT_LIBRO_LINEAS_SQL, {"pedido": pedido}).fetchall()


def historial(conexion: psycopg.Connection, pedido: str) -> list[dict]:
    """Reembolsos (con su concepto y líneas), cambios y cobros del pedido, por fecha.

    Para la tarjeta del encargado: qué se ha reembolsado o cambiado ya de este pedido.
    """
    return conexion.execute(SELECT_HISTORIAL_SQL, {"pedido": pedido}).fetchall()


def elegibilidad(conexion: psycopg.Connection, pedido: str, *, llamada: Llamada | None = None) -> dict | None:
    """Los hechos de ``elegibilidad_pedidos`` del pedido (o None si no existe). Con
    ``llamada``, también ``razon_imposible`` (ver ``exigir_no_evaluada_imposible``)."""
    if llamada is None:
        return conexion.execute(SELECT_ELEGIBILIDAD_SQL, {"pedido": pedido}).fetchone()
    return conexion.execute(SELECT_ELEGIBILIDAD_DE_LLAMADA_SQL, {
        "pedido": pedido, "clave": CLAVE_IMPOSIBLE, "clave_revision": CLAVE_EN_REVISION,
        "thread_id": llamada.thread_id, "tool_call_id": llamada.tool_call_id,
    }).fetchone()


def exigir_entregado(hechos: dict, *, accion: str = "cambiar un producto") -> None:
    """Un cambio necesita el pedido entregado: cancelado o sin entregar se rechaza."""
    if hechos["entregado"]:
        return
    pedido = hechos["pedido_id"]
    if hechos["estado"] == "cancelado":
        motivo = f"el pedido {pedido} está cancelado: no se puede {accion} de un pedido cancelado"
    else:
        motivo = (
            f"el pedido {pedido} aún no se ha entregado (estado: {hechos['estado']}): solo se "
            f"puede {accion} de un pedido ya recibido"
        )
    raise ErrorDominio(motivo, pedido=pedido, estado=hechos["estado"])


def exigir_no_evaluada_imposible(
    conexion: psycopg.Connection, llamada: Llamada, *, hechos: dict | None = None
) -> None:
    """Una operación que la política no mandó a firmar porque era imposible no sale sin firma.

    Se llama en la transacción del efecto, con el pedido bloqueado y tras las comprobaciones
    propias (que dan el error verdadero si sigue siendo imposible). Si llega aquí, los datos
    cambiaron entre la evaluación y la ejecución (o la llamada esperó a la firma de otra del
    mismo lote): se rechaza sin escribir nada. Con ``hechos`` de ``elegibilidad(...,
    llamada=llamada)`` no vuelve a la base.
    """
    if hechos is not None and "razon_imposible" in hechos:
        fila = {"razon": hechos["razon_imposible"], "en_revision": hechos.get("en_revision")}
    else:
        fila = conexion.execute(SELECT_EVALUADA_IMPOSIBLE_SQL, {
            "clave": CLAVE_IMPOSIBLE, "clave_revision": CLAVE_EN_REVISION,
            "thread_id": llamada.thread_id, "tool_call_id": llamada.tool_call_id,
        }).fetchone()
    if fila is not None and fila["en_revision"]:
        # Otra conversación espera ya la firma por estas unidades: ni efecto ni otra tarjeta.
        pedido = hechos["pedido_id"] if hechos else None
        raise ErrorDominio(texto_en_revision(pedido or "indicado"), en_revision=fila["en_revision"])
    if fila is not None and fila["razon"]:
        raise ErrorDominio(
            f"esta operación no pasó por un encargado porque al proponerla no era posible "
            f"({fila['razon']}) y los datos han cambiado desde entonces; no se ha hecho nada. "
            "Vuelve a proponerla para que se revise de nuevo",
            razon=fila["razon"],
        )


def exigir_veredicto_vigente(
    conexion: psycopg.Connection, llamada: Llamada, *, hechos: dict | None = None
) -> None:
    """El veredicto que dejó salir la llamada sin firma sigue valiendo al escribir el efecto.

    Se llama en la transacción del efecto, con el pedido bloqueado, tras las comprobaciones
    propias y justo antes de escribir: primero lo imposible (``exigir_no_evaluada_imposible``);
    después el revalidador toma el candado del cliente y vuelve a decidir la regla con los
    hechos de ahora (otras conversaciones del mismo cliente pudieron dar un vale, reenviar la
    línea o devolver algo mientras tanto). Si ya no sale sin firma, ``NecesitaFirma`` y la
    transacción se deshace sin escribir nada.
    """
    exigir_no_evaluada_imposible(conexion, llamada, hechos=hechos)
    if llamada.revalidador is not None:
        llamada.revalidador.revalidar(
            conexion, thread_id=llamada.thread_id, tool_call_id=llamada.tool_call_id,
            cliente_id=llamada.contexto.cliente_id,
        )


def mover_stock(
    conexion: psycopg.Connection, *, tienda: str, sku_original: str, sku_nuevo: str
) -> None:
    """El original vuelve al stock y el nuevo sale; sin stock del nuevo, ``AprobacionCaducada``.

    Siempre en el mismo orden de SKU: dos cambios cruzados no se bloquean mutuamente.
    """
    for sku in sorted((sku_original, sku_nuevo)):
        if sku == sku_original:
            conexion.execute(DEVOLVER_UNIDAD_SQL, {"tienda": tienda, "sku": sku})
            continue
        if conexion.execute(RETIRAR_UNIDAD_SQL, {"tienda": tienda, "sku": sku}).fetchone() is None:
            raise AprobacionCaducada(
                f"{CADUCADA}: ya no queda stock de {sku} en la tienda; consulta de nuevo las "
                "alternativas y vuelve a proponer el cambio",
                sku=sku,
            )
