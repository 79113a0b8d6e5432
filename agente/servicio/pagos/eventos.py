"""Los eventos (webhooks) de un proveedor de pagos real, aplicados al libro una sola vez.

La pasarela verifica la firma y traduce el evento (``PasarelaConEventos.leer_evento``;
una firma falsa o un evento más viejo que la tolerancia es ``EventoNoValido``: no se
toca nada). Un id ya apuntado en ``pasarela_eventos`` se ignora. Si no, se aplica al
asiento de su referencia por el mismo camino que una respuesta de la pasarela
(``movimientos.aplicar``), condicionado a que siga pendiente, y después se apunta el id:
si el proceso muere entre las dos cosas, el proveedor lo reenvía y aplicarlo otra vez no
cambia nada.

Un evento que da por fallido un movimiento ya completado (un reembolso ``succeeded`` que
pasa a ``failed`` o ``canceled``; un pago confirmado que el banco rechaza después) es un
**fallo tardío** (``estados_proveedor.fallo_tardio``): el asiento vuelve a pendiente,
marcado para una persona, y el cliente recibe la verdad en su chat (y por correo si no
está). Resultado ``fallo_tardio``; la auditoría lo enseña (``fallos_tardios``). Después,
ningún evento de ese movimiento cambia nada: lo decide una persona.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from psycopg_pool import ConnectionPool

from caja import estados_proveedor, movimientos
from caja.pasarela import FALLIDO, PasarelaConEventos
from nucleo.errores import ErrorPasarela, EventoNoValido
from nucleo.registro_log import evento as evento_log

__all__ = ["ResultadoEvento", "recibir_evento"]

logger = logging.getLogger("agente.pasarela")

SELECT_EVENTO_SQL = "SELECT resultado FROM pasarela_eventos WHERE id = %(id)s"

INSERT_EVENTO_SQL = """
INSERT INTO pasarela_eventos (id, tipo, referencia, resultado)
VALUES (%(id)s, %(tipo)s, %(referencia)s, %(resultado)s)
ON CONFLICT (id) DO NOTHING
"""

SELECT_ASIENTO_SQL = """
SELECT tipo, id, referencia, importe, estado, completado, concepto, sustitucion_id,
       thread_id, pedido_id, intentos, requiere_persona, fallo_tardio_en
FROM libro_movimientos WHERE referencia = %(referencia)s AND tipo = %(tipo)s
"""


@dataclass(frozen=True)
class ResultadoEvento:
    id: str
    tipo: str
    referencia: str | None
    # aplicado, en_curso, fallido, caducado, fallo_tardio, ya_estaba, repetido, ajeno, desconocido
    resultado: str


def recibir_evento(pool: ConnectionPool, pasarela, cuerpo: bytes, firma: str | None) -> ResultadoEvento:
    if not isinstance(pasarela, PasarelaConEventos):
        raise EventoNoValido("la pasarela configurada no recibe webhooks")
    evento = pasarela.leer_evento(cuerpo, firma)
    respuesta = evento.movimiento
    referencia = respuesta.referencia if respuesta is not None else None
    with pool.connection() as conexion:
        if conexion.execute(SELECT_EVENTO_SQL, {"id": evento.id}).fetchone() is not None:
            return ResultadoEvento(evento.id, evento.tipo, referencia, "repetido")
    resultado = _aplicar(pool, respuesta)
    with pool.connection() as conexion:
        conexion.execute(INSERT_EVENTO_SQL, {"id": evento.id, "tipo": evento.tipo,
                                             "referencia": referencia, "resultado": resultado})
    evento_log(logger, "evento_pasarela", evento=evento.id, tipo=evento.tipo,
               referencia=referencia, resultado=resultado)
    return ResultadoEvento(evento.id, evento.tipo, referencia, resultado)


def _aplicar(pool: ConnectionPool, respuesta) -> str:
    if respuesta is None:
        return "ajeno"
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_ASIENTO_SQL, {
            "referencia": respuesta.referencia, "tipo": respuesta.tipo}).fetchone()
    if fila is None:
        return "desconocido"
    mov = movimientos.Movimiento.de_fila(fila)
    if fila["fallo_tardio_en"] is not None:
        return "ya_estaba"  # el proveedor ya se desdijo: lo decide una persona
    if mov.completado and respuesta.estado == FALLIDO:
        if not estados_proveedor.fallo_tardio(pool, mov, respuesta):
            return "ya_estaba"
        logger.error("%s: el proveedor lo dio por hecho y después falló (%s); marcado para una persona",
                     mov.referencia, respuesta.detalle or respuesta.estado)
        return "fallo_tardio"
    if mov.estado != "pendiente":
        return "ya_estaba"
    try:
        hecho = movimientos.aplicar(pool, mov, respuesta, por_sistema=True)
    except ErrorPasarela as exc:
        return exc.datos.get("estado") or "fallido"
    return "aplicado" if hecho.ahora else "ya_estaba"
