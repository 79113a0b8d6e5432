"""El checkpointer: ``PostgresSaver`` sobre el pool compartido, sin su candado de instancia.

``PostgresSaver`` serializa todas las consultas de una instancia tras un
``threading.Lock``, también sobre un pool; LangGraph escribe checkpoints desde hilos de
fondo, así que con varios turnos a la vez en un proceso el candado se convierte en el
cuello de botella (medido en docs/rendimiento.md). Sobre un pool y sin pipeline
compartido, cada llamada toma su propia conexión del pool: el candado no protege nada.

``vigencia`` (opcional): ``thread_id -> None`` que lanza si la ejecución perdió el
candado del hilo (*fencing*, ``agente.servicio.conversaciones.candados``); se llama antes de cada
escritura, así una ejecución anulada no pisa los checkpoints de quien tomó el hilo.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

__all__ = ["SaverDePool"]


class SaverDePool(PostgresSaver):
    def __init__(self, pool: ConnectionPool, *, vigencia: Callable[[str], None] | None = None,
                 **kwargs) -> None:
        if not isinstance(pool, ConnectionPool):
            # Con una conexión suelta el candado sí hace falta: una conexión, un hilo.
            raise TypeError("SaverDePool necesita un psycopg_pool.ConnectionPool")
        super().__init__(pool, **kwargs)
        self.lock = contextlib.nullcontext()
        self._vigencia = vigencia

    def _comprobar(self, config) -> None:
        if self._vigencia is not None:
            self._vigencia(config["configurable"]["thread_id"])

    def put(self, config, checkpoint, metadata, new_versions):
        self._comprobar(config)
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        self._comprobar(config)
        return super().put_writes(config, writes, task_id, task_path)
