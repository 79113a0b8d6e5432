"""Reembolsos: idempotentes por (hilo, tool_call_id) y con la pasarela fuera de transacción.

Orden (outbox): 1) en una transacción, con el pedido bloqueado, se comprueba y se
apunta el reembolso 'pendiente' y su devolución; COMMIT. 2) Se llama a la pasarela con
la referencia del reembolso (idempotente en la pasarela). 3) Se marca 'emitido'.
Si el proceso muere entre 1 y 3, repetir la misma llamada (misma clave) termina el
trabajo sin mover dinero dos veces; ``completar_pendientes`` hace lo mismo en lote.
Los libros nunca dicen 'emitido' sin movimiento en la pasarela.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import (
    ConflictoIdempotencia,
    ErrorDominio,
    ErrorPasarela,
    ImporteNoValido,
    PedidoNoEncontrado,
)
from herramientas.pasarela import Pasarela
from herramientas.pedidos import (
    clave_idempotencia,
    formato_eur,
    importe_decimal,
    normalizar_id,
    texto_dinero,
)

logger = logging.getLogger(__name__)

SELECT_REEMBOLSO_POR_CLAVE_SQL = """
SELECT id, numero, pedido_id, cliente_id, importe, estado
FROM reembolsos WHERE clave_idempotencia = %(clave)s
"""

# El candado del pedido serializa los reembolsos de un mismo pedido: dos distintos no
# pueden pasar a la vez la comprobación de lo reembolsable.
BLOQUEAR_PEDIDO_SQL = """
SELECT id, cliente_id, tienda, importe FROM pedidos
WHERE id = %(pedido)s AND cliente_id = %(cliente_id)s
FOR UPDATE
"""

# Sentencia aparte, tras coger el candado: en READ COMMITTED ve lo que otros confirmaron.
SELECT_REEMBOLSADO_SQL = """
SELECT COALESCE(sum(importe), 0) AS reembolsado FROM reembolsos WHERE pedido_id = %(pedido)s
"""

SELECT_LINEAS_IMPORTE_SQL = """
SELECT linea, importe FROM lineas_pedido WHERE pedido_id = %(pedido)s
"""

INSERT_REEMBOLSO_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                        tienda, importe, motivo, lineas, aprobado_por, trace_id)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(motivo)s, %(lineas)s, %(aprobado_por)s, %(trace_id)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id, numero, pedido_id, cliente_id, importe, estado
"""

# La devolución hace que el recuento de devoluciones de la política la vea.
INSERT_DEVOLUCION_SQL = """
INSERT INTO devoluciones (pedido_id, cliente_id, tienda, importe, motivo, reembolso_id)
VALUES (%(pedido)s, %(cliente_id)s, %(tienda)s, %(importe)s, %(motivo)s, %(reembolso_id)s)
"""

MARCAR_EMITIDO_SQL = """
UPDATE reembolsos SET estado = 'emitido', emitido_en = now()
WHERE id = %(id)s AND estado = 'pendiente'
"""

SELECT_PENDIENTES_SQL = """
SELECT id, numero, pedido_id, cliente_id, importe, estado
FROM reembolsos
WHERE estado = 'pendiente' AND creado < now() - make_interval(secs => %(segundos)s)
ORDER BY creado
LIMIT %(limite)s
"""


def reembolsar(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    importe: Decimal | str | int | float,
    motivo: str,
    lineas: list[int] | None = None,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    pasarela: Pasarela,
) -> dict[str, Any]:
    """Reembolsa ``importe`` de un pedido del cliente; devuelve el resultado en JSON-able.

    Repetir la misma clave devuelve el mismo reembolso con ``repetido: True`` (y termina
    el trabajo si quedó 'pendiente'); la misma clave con otro pedido o importe es
    ``ConflictoIdempotencia``. Una comprobación fallida no escribe nada.
    """
    clave = clave_idempotencia(thread_id, tool_call_id)
    pedido = normalizar_id(pedido)
    importe = importe_decimal(importe)

    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, {"clave": clave}).fetchone()
    nuevo = False
    if fila is None:
        fila, nuevo = _apuntar(
            pool,
            clave=clave,
            contexto=contexto,
            thread_id=thread_id,
            tool_call_id=tool_call_id,
            pedido=pedido,
            importe=importe,
            motivo=motivo,
            lineas=lineas,
            aprobado_por=aprobado_por,
            trace_id=trace_id,
        )
    if not nuevo:
        _comprobar_misma_operacion(fila, contexto=contexto, pedido=pedido, importe=importe)
    if fila["estado"] == "pendiente":
        _emitir(pool, fila, pasarela)
    return {
        "reembolso": fila["numero"],
        "pedido": fila["pedido_id"],
        "importe": texto_dinero(fila["importe"]),
        "estado": "emitido",
        "repetido": not nuevo,
    }


def _apuntar(
    pool: ConnectionPool,
    *,
    clave: str,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    importe: Decimal,
    motivo: str,
    lineas: list[int] | None,
    aprobado_por: str | None,
    trace_id: str | None,
) -> tuple[dict, bool]:
    """Paso 1: comprueba y apunta 'pendiente' + devolución. Devuelve (fila, es_nueva)."""
    with pool.connection() as conexion, conexion.transaction():
        fila_pedido = conexion.execute(
            BLOQUEAR_PEDIDO_SQL, {"pedido": pedido, "cliente_id": contexto.cliente_id}
        ).fetchone()
        if fila_pedido is None:
            raise PedidoNoEncontrado(pedido)
        # Una llamada gemela pudo confirmar mientras esperábamos el candado.
        ya = conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, {"clave": clave}).fetchone()
        if ya is not None:
            return ya, False

        reembolsado = conexion.execute(SELECT_REEMBOLSADO_SQL, {"pedido": pedido}).fetchone()[
            "reembolsado"
        ]
        reembolsable = max(fila_pedido["importe"] - reembolsado, Decimal("0"))
        if importe <= 0:
            raise ImporteNoValido(
                f"el importe {formato_eur(importe)} no es válido: debe ser mayor que cero "
                f"(lo reembolsable del pedido es {formato_eur(reembolsable)})",
                maximo=texto_dinero(reembolsable),
            )
        if importe > reembolsable:
            raise ImporteNoValido(
                f"el importe {formato_eur(importe)} supera lo reembolsable del pedido "
                f"({formato_eur(reembolsable)})",
                maximo=texto_dinero(reembolsable),
            )
        lineas = _comprobar_lineas(conexion, pedido=pedido, lineas=lineas, importe=importe)

        nueva = conexion.execute(
            INSERT_REEMBOLSO_SQL,
            {
                "clave": clave,
                "thread_id": thread_id,
                "tool_call_id": tool_call_id,
                "pedido": pedido,
                "cliente_id": contexto.cliente_id,
                "tienda": fila_pedido["tienda"],
                "importe": importe,
                "motivo": motivo,
                "lineas": Jsonb(lineas) if lineas is not None else None,
                "aprobado_por": aprobado_por,
                "trace_id": trace_id,
            },
        ).fetchone()
        if nueva is None:
            # La clave la confirmó a la vez una llamada sobre otro pedido; aquí no se escribió nada.
            return conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, {"clave": clave}).fetchone(), False
        conexion.execute(
            INSERT_DEVOLUCION_SQL,
            {
                "pedido": pedido,
                "cliente_id": contexto.cliente_id,
                "tienda": fila_pedido["tienda"],
                "importe": importe,
                "motivo": motivo,
                "reembolso_id": nueva["id"],
            },
        )
        return nueva, True


def _comprobar_lineas(conexion, *, pedido: str, lineas: list[int] | None, importe: Decimal):
    if not lineas:
        return None
    importes = {
        fila["linea"]: fila["importe"]
        for fila in conexion.execute(SELECT_LINEAS_IMPORTE_SQL, {"pedido": pedido}).fetchall()
    }
    pedidas = sorted(set(lineas))
    faltan = [str(n) for n in pedidas if n not in importes]
    if faltan:
        raise ErrorDominio(
            f"el pedido {pedido} no tiene la línea {', '.join(faltan)}; "
            f"sus líneas son {', '.join(str(n) for n in sorted(importes))}",
            pedido=pedido,
        )
    tope = sum((importes[n] for n in pedidas), Decimal("0"))
    if importe > tope:
        raise ImporteNoValido(
            f"el importe {formato_eur(importe)} supera el de las líneas indicadas "
            f"({formato_eur(tope)})",
            maximo=texto_dinero(tope),
        )
    return pedidas


def _comprobar_misma_operacion(
    fila: dict, *, contexto: ContextoCliente, pedido: str, importe: Decimal
) -> None:
    if (
        fila["cliente_id"] != contexto.cliente_id
        or fila["pedido_id"] != pedido
        or fila["importe"] != importe
    ):
        raise ConflictoIdempotencia(
            "esta llamada ya se ejecutó con otros datos (reembolso "
            f"{fila['numero']}); no se ha hecho nada nuevo",
            reembolso=fila["numero"],
        )


def _emitir(pool: ConnectionPool, fila: dict, pasarela: Pasarela) -> None:
    """Pasos 2 y 3: la pasarela (sin transacción abierta) y después 'emitido'."""
    numero = fila["numero"]
    try:
        movimiento = pasarela.emitir_reembolso(numero, fila["importe"])
        if movimiento.importe != fila["importe"]:
            raise ErrorPasarela(f"la pasarela devolvió otro importe para {numero}")
    except Exception as exc:
        if not isinstance(exc, ErrorPasarela):
            logger.exception("fallo inesperado de la pasarela con el reembolso %s", numero)
        motivo = exc.mensaje if isinstance(exc, ErrorPasarela) else type(exc).__name__
        raise ErrorPasarela(
            f"la pasarela de pagos no ha confirmado el reembolso {numero} ({motivo}); queda "
            "registrado como pendiente y se completará sin cobrar dos veces: no propongas "
            "otro reembolso por lo mismo",
            reembolso=numero,
        ) from exc
    with pool.connection() as conexion:
        conexion.execute(MARCAR_EMITIDO_SQL, {"id": fila["id"]})


def completar_pendientes(
    pool: ConnectionPool, *, pasarela: Pasarela, antiguedad_segundos: int = 60, limite: int = 100
) -> list[str]:
    """Termina los reembolsos que se quedaron 'pendiente' (caída o pasarela caída).

    Seguro de repetir y de ejecutar a la vez que ``reembolsar``: la pasarela deduplica por
    referencia. Devuelve los números completados; los que vuelven a fallar siguen pendientes.
    """
    with pool.connection() as conexion:
        filas = conexion.execute(
            SELECT_PENDIENTES_SQL, {"segundos": antiguedad_segundos, "limite": limite}
        ).fetchall()
    hechos = []
    for fila in filas:
        try:
            _emitir(pool, fila, pasarela)
        except ErrorPasarela:
            logger.warning("el reembolso %s sigue pendiente: la pasarela falla", fila["numero"])
            continue
        hechos.append(fila["numero"])
    return hechos
