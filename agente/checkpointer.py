"""El checkpointer: ``PostgresSaver`` sobre el pool compartido, sin su candado de instancia.

``PostgresSaver`` serializa todas las consultas de una instancia tras un
``threading.Lock``, también sobre un pool; LangGraph escribe checkpoints desde hilos de
fondo, así que con varios turnos a la vez en un proceso el candado se convierte en el
cuello de botella (medido en docs/rendimiento.md). Sobre un pool y sin pipeline
compartido, cada llamada toma su propia conexión del pool: el candado no protege nada.
"""

from __future__ import annotations

import contextlib

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool


class SaverDePool(PostgresSaver):
    def __init__(self, pool: ConnectionPool, **kwargs) -> None:
        if not isinstance(pool, ConnectionPool):
            # Con una conexión suelta el candado sí hace falta: una conexión, un hilo.
            raise TypeError("SaverDePool necesita un psycopg_pool.ConnectionPool")
        super().__init__(pool, **kwargs)
        self.lock = contextlib.nullcontext()
