"""Lo que preguntan la operación y la observabilidad: salud de la base y tamaño de la cola.

La web expone esto en ``/healthz`` y ``/metrics`` sin escribir SQL propio.
"""

from __future__ import annotations

import logging

from psycopg_pool import ConnectionPool

__all__ = ["base_responde", "pendientes_por_tienda"]

logger = logging.getLogger(__name__)

SALUD_SQL = "SELECT 1"
CONTAR_PENDIENTES_SQL = """
SELECT t.id AS tienda, count(a.thread_id) AS pendientes
FROM tiendas t LEFT JOIN aprobaciones_pendientes a ON a.tienda = t.id
GROUP BY t.id ORDER BY t.id
"""


def base_responde(pool: ConnectionPool, *, espera: float = 3.0) -> bool:
    """True si la base contesta en ``espera`` segundos (pool agotado o caído: False)."""
    try:
        with pool.connection(timeout=espera) as conexion:
            conexion.execute(SALUD_SQL)
    except Exception as exc:  # PoolTimeout, OperationalError, pool cerrado: da igual cuál
        logger.warning("la base de datos no responde: %s", exc)
        return False
    return True


def pendientes_por_tienda(pool: ConnectionPool) -> list[tuple[str, int]]:
    """``(tienda, aprobaciones pendientes)`` de cada tienda, también las que tienen cero."""
    with pool.connection() as conexion:
        return [(f["tienda"], f["pendientes"]) for f in conexion.execute(CONTAR_PENDIENTES_SQL)]
