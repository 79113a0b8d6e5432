"""Las ejecuciones (*runs*) del protocolo: una fila por turno o firma que entra por él."""

from __future__ import annotations

import uuid
from typing import Any

from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

__all__ = ["Ejecuciones"]

CREAR_SQL = """
INSERT INTO ejecuciones_protocolo (run_id, thread_id, assistant_id, autor, tipo, metadatos)
VALUES (%(run_id)s, %(thread_id)s, %(assistant_id)s, %(autor)s, %(tipo)s, %(metadatos)s)
RETURNING *
"""
TERMINAR_SQL = """
UPDATE ejecuciones_protocolo SET estado = %(estado)s, actualizada = now()
WHERE run_id = %(run_id)s RETURNING *
"""
LEER_SQL = """
SELECT * FROM ejecuciones_protocolo WHERE thread_id = %(thread_id)s AND run_id = %(run_id)s
"""
LISTAR_SQL = """
SELECT * FROM ejecuciones_protocolo WHERE thread_id = %(thread_id)s
ORDER BY creada DESC, run_id LIMIT %(limite)s OFFSET %(desplazamiento)s
"""


class Ejecuciones:
    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    def crear(self, *, thread_id: str, assistant_id: str, autor: str, tipo: str,
              metadatos: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._pool.connection() as c:
            return c.execute(CREAR_SQL, {
                "run_id": uuid.uuid4(), "thread_id": thread_id, "assistant_id": assistant_id,
                "autor": autor, "tipo": tipo, "metadatos": Jsonb(metadatos or {}),
            }).fetchone()

    def terminar(self, run_id: Any, estado: str) -> dict[str, Any] | None:
        with self._pool.connection() as c:
            return c.execute(TERMINAR_SQL, {"run_id": run_id, "estado": estado}).fetchone()

    def leer(self, thread_id: str, run_id: str) -> dict[str, Any] | None:
        try:
            uuid.UUID(run_id)
        except ValueError:
            return None
        with self._pool.connection() as c:
            return c.execute(LEER_SQL, {"thread_id": thread_id, "run_id": run_id}).fetchone()

    def listar(self, thread_id: str, *, limite: int = 10, desplazamiento: int = 0) -> list[dict[str, Any]]:
        with self._pool.connection() as c:
            return c.execute(LISTAR_SQL, {"thread_id": thread_id, "limite": limite,
                                          "desplazamiento": desplazamiento}).fetchall()
