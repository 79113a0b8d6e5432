"""Avisos al cliente de los movimientos que completó el sistema (no su propio turno).

Cuando la cola de movimientos (``caja.movimientos.completar_pendientes``) completa
un reembolso o un cobro que en el turno del cliente quedó pendiente, el asiento queda
con ``avisar``. El servicio pide ``avisos_pendientes``, escribe cada texto en la
conversación (``thread_id``) por el mismo camino que las decisiones y llama a
``marcar_avisado``. Si muere entre las dos cosas, el aviso se repite: mejor dos avisos
que ninguno.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql
from psycopg_pool import ConnectionPool

from caja.movimientos import TABLAS
from caja.pasarela import COBRO
from nucleo import dinero

__all__ = ["Aviso", "avisos_pendientes", "marcar_avisado"]

SELECT_AVISOS_SQL = """
SELECT m.tipo, m.id, m.referencia, m.importe, m.concepto, m.thread_id, m.pedido_id,
       m.completado, m.estado, m.ultimo_error, m.fallo_tardio_en, s.numero AS sustitucion, s.estado AS estado_sustitucion,
       (SELECT r.numero FROM reembolsos r
         WHERE r.sustitucion_id = m.sustitucion_id AND r.concepto = 'anulacion') AS anulacion
FROM libro_movimientos m
LEFT JOIN sustituciones s ON s.id = m.sustitucion_id
WHERE (m.completado OR m.estado = 'caducado' OR m.requiere_persona)
  AND m.avisar AND m.avisado_en IS NULL
ORDER BY m.completado_en, m.tipo, m.id
LIMIT %(limite)s
"""

MARCAR_AVISADO_SQL = sql.SQL("UPDATE {tabla} SET avisado_en = now() WHERE id = %(id)s")


@dataclass(frozen=True)
class Aviso:
    """Un mensaje para el chat del cliente sobre un movimiento que el sistema completó."""

    tipo: str
    id: int
    referencia: str
    thread_id: str
    texto: str
    # Para el correo al cliente (agente.notificaciones.avisos_cliente): datos llanos.
    importe: str | None = None
    pedido: str | None = None
    concepto: str | None = None
    # El suceso del correo (y su clave, una vez por suceso): ``pago`` (completado),
    # ``caducado`` (el enlace de pago caducó), ``marcado`` (no se completó: lo revisa una
    # persona) o ``fallo_tardio`` (lo dimos por hecho y el proveedor se desdijo).
    suceso: str = "pago"


def _texto_aviso(fila: dict) -> str:
    importe = dinero.eur(fila["importe"])
    ref, pedido, cambio = fila["referencia"], fila["pedido_id"], fila["sustitucion"]
    if not fila.get("completado", True):
        return _texto_no_completado(fila, importe)
    if fila["tipo"] == COBRO:
        if fila["estado_sustitucion"] == "anulada":
            return (
                f"Hemos cobrado la diferencia de {importe} del cambio {cambio} del pedido "
                f"{pedido}, pero ya no quedaba stock del producto nuevo: el cambio queda anulado "
                f"y te devolvemos ese importe (reembolso {fila['anulacion']})."
            )
        return (
            f"Ya está hecho el cambio {cambio} del pedido {pedido}: hemos cobrado la "
            f"diferencia de {importe} (cobro {ref})."
        )
    if fila["concepto"] == "diferencia":
        return (
            f"Ya te hemos devuelto la diferencia de {importe} del cambio {cambio} del pedido "
            f"{pedido} a tu medio de pago original (reembolso {ref})."
        )
    if fila["concepto"] == "anulacion":
        return (
            f"Ya te hemos devuelto los {importe} que te cobramos por el cambio {cambio} del "
            f"pedido {pedido}, que no se pudo completar (reembolso {ref})."
        )
    return (
        f"Ya está hecho el reembolso {ref} de {importe} del pedido {pedido}: lo verás en tu "
        "medio de pago original en unos días."
    )


def _texto_no_completado(fila: dict, importe: str) -> str:
    """Un enlace de pago caducado o un movimiento que el proveedor rechazó: la verdad."""
    ref, pedido, cambio = fila["referencia"], fila["pedido_id"], fila["sustitucion"]
    if fila.get("fallo_tardio_en") is not None:
        return _texto_fallo_tardio(fila, importe)
    if fila["estado"] == "caducado":
        return (
            f"El enlace para pagar la diferencia de {importe} del cambio {cambio} del pedido "
            f"{pedido} ha caducado sin pagarse: el cambio queda anulado y no se te ha cobrado "
            "nada. Si aún lo quieres, pídenos el cambio otra vez."
        )
    motivo = f" ({fila['ultimo_error']})" if fila.get("ultimo_error") else ""
    if fila["tipo"] == COBRO:
        return (
            f"No se ha podido cobrar la diferencia de {importe} del cambio {cambio} del pedido "
            f"{pedido}{motivo}: el cambio sigue sin hacer. Una persona del equipo lo revisa y te "
            "escribirá por aquí."
        )
    return (
        f"El reembolso {ref} de {importe} del pedido {pedido} no se ha podido completar"
        f"{motivo}: todavía no te hemos devuelto ese dinero. Una persona del equipo lo revisa "
        "y te escribirá por aquí."
    )


def _texto_fallo_tardio(fila: dict, importe: str) -> str:
    """Lo que dimos por hecho y el proveedor deshizo después: la verdad, sin rodeos."""
    ref, pedido, cambio = fila["referencia"], fila["pedido_id"], fila["sustitucion"]
    if fila["tipo"] == COBRO:
        return (
            f"Te dijimos que habíamos cobrado la diferencia de {importe} del cambio {cambio} del "
            f"pedido {pedido} (cobro {ref}), pero tu banco ha rechazado después ese pago: no se te "
            "ha cobrado. Una persona del equipo lo revisa y te escribirá por aquí."
        )
    return (
        f"Te dijimos que el reembolso {ref} de {importe} del pedido {pedido} estaba hecho, pero "
        "el proveedor de pagos nos avisa de que ha fallado después: todavía no te hemos devuelto "
        "ese dinero. Una persona del equipo lo revisa y te escribirá por aquí."
    )


def _suceso(fila: dict) -> str:
    if fila["fallo_tardio_en"] is not None:
        return "fallo_tardio"
    if fila["completado"]:
        return "pago"
    return "caducado" if fila["estado"] == "caducado" else "marcado"


def avisos_pendientes(pool: ConnectionPool, *, limite: int = 100) -> list[Aviso]:
    """Movimientos que completó el sistema y de los que aún no se ha avisado al cliente."""
    with pool.connection() as conexion:
        filas = conexion.execute(SELECT_AVISOS_SQL, {"limite": limite}).fetchall()
    return [
        Aviso(tipo=f["tipo"], id=f["id"], referencia=f["referencia"], thread_id=f["thread_id"],
              texto=_texto_aviso(f), importe=dinero.texto(f["importe"]), pedido=f["pedido_id"],
              concepto=f["concepto"], suceso=_suceso(f))
        for f in filas
    ]


def marcar_avisado(pool: ConnectionPool, aviso: Aviso) -> None:
    with pool.connection() as conexion:
        conexion.execute(
            MARCAR_AVISADO_SQL.format(tabla=sql.Identifier(TABLAS[aviso.tipo])), {"id": aviso.id}
        )
