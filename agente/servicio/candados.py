"""Un candado de PostgreSQL por hilo: una sola ejecución del agente por hilo a la vez.

Es un advisory lock de sesión sobre una conexión del pool que no tiene transacción
abierta: no retiene filas mientras el modelo piensa (un LLM real tarda segundos) y
lo ve cualquier proceso o servidor que comparta la base de datos.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from psycopg_pool import ConnectionPool

from agente.nucleo.errores import AprobacionPendiente

ESPACIO_HILOS = 7_310_002  # primer entero del advisory lock de dos claves

TRY_LOCK_HILO_SQL = "SELECT pg_try_advisory_lock(%(espacio)s, hashtext(%(hilo)s)) AS ok"
UNLOCK_HILO_SQL = "SELECT pg_advisory_unlock(%(espacio)s, hashtext(%(hilo)s))"


@contextmanager
def candado_hilo(
    pool: ConnectionPool, thread_id: str, *, esperar: float = 30.0
) -> Iterator[bool]:
    """Retiene el candado del hilo. Con ``esperar=0`` cede ``False`` si otro lo tiene."""
    params = {"espacio": ESPACIO_HILOS, "hilo": thread_id}
    with pool.connection() as conexion:
        # Espera con lock_timeout: si otro proceso ejecuta el hilo, no se le pisa.
        obtenido = conexion.execute(TRY_LOCK_HILO_SQL, params).fetchone()["ok"]
        if not obtenido and esperar > 0:
            conexion.execute(f"SET lock_timeout = '{int(esperar * 1000)}ms'")
            try:
                conexion.execute(
                    "SELECT pg_advisory_lock(%(espacio)s, hashtext(%(hilo)s))", params
                )
                obtenido = True
            except Exception as exc:  # LockNotAvailable u OperationalError
                raise AprobacionPendiente(
                    "la conversación está ocupada con otra operación; inténtalo en unos segundos",
                    thread_id=thread_id,
                ) from exc
            finally:
                conexion.execute("RESET lock_timeout")
        try:
            yield obtenido
        finally:
            if obtenido:
                conexion.execute(UNLOCK_HILO_SQL, params)

