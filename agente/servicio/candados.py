"""Un candado de PostgreSQL por hilo: una sola ejecución del agente por hilo a la vez.

Es un advisory lock de sesión sobre una conexión del pool que no tiene transacción
abierta: no retiene filas mientras el modelo piensa (un LLM real tarda segundos) y
lo ve cualquier proceso o servidor que comparta la base de datos. Si otro lo retiene
más de ``esperar`` segundos, ``HiloOcupado`` (409 con ``Retry-After``): no es una
aprobación pendiente, la conversación solo está ocupada.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from psycopg import errors
from psycopg_pool import ConnectionPool

from agente.nucleo.errores import HiloOcupado

__all__ = ["ESPACIO_HILOS", "candado_hilo"]

ESPACIO_HILOS = 7_310_002  # primer entero del advisory lock de dos claves

TRY_LOCK_HILO_SQL = "SELECT pg_try_advisory_lock(%(espacio)s, hashtext(%(hilo)s)) AS ok"
LOCK_HILO_SQL = "SELECT pg_advisory_lock(%(espacio)s, hashtext(%(hilo)s))"
UNLOCK_HILO_SQL = "SELECT pg_advisory_unlock(%(espacio)s, hashtext(%(hilo)s))"
FIJAR_ESPERA_SQL = "SELECT set_config('lock_timeout', %(ms)s, false)"
QUITAR_ESPERA_SQL = "RESET lock_timeout"


@contextmanager
def candado_hilo(
    pool: ConnectionPool, thread_id: str, *, esperar: float = 30.0
) -> Iterator[bool]:
    """Retiene el candado del hilo. Con ``esperar=0`` cede ``False`` si otro lo tiene.

    Raises:
        HiloOcupado: con ``esperar > 0``, si otro lo retuvo más de ``esperar`` segundos.
    """
    params = {"espacio": ESPACIO_HILOS, "hilo": thread_id}
    with pool.connection() as conexion:
        obtenido = conexion.execute(TRY_LOCK_HILO_SQL, params).fetchone()["ok"]
        if not obtenido and esperar > 0:
            # Espera con lock_timeout: si otro proceso ejecuta el hilo, no se le pisa.
            conexion.execute(FIJAR_ESPERA_SQL, {"ms": f"{int(esperar * 1000)}ms"})
            try:
                conexion.execute(LOCK_HILO_SQL, params)
                obtenido = True
            except errors.LockNotAvailable:
                raise HiloOcupado(
                    thread_id=thread_id, reintentar_en=max(1, min(30, round(esperar)))
                ) from None
            finally:
                conexion.execute(QUITAR_ESPERA_SQL)
        try:
            yield obtenido
        finally:
            if obtenido:
                conexion.execute(UNLOCK_HILO_SQL, params)
