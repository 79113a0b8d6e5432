"""El grafo que sirven los pares (aegra y langgraph-api) en ``python -m bench --solo pares``.

Es el agente del producto sin el servicio alrededor: ``agente.construir.construir_agente``
(``create_agent`` con la firma de ``HumanInTheLoopMiddleware``, cuyo ``when`` lee las
mismas tablas de negocio, las mismas herramientas y la misma pasarela simulada), el mismo
cliente de modelo (``langchain-openai`` contra el proveedor local con latencia) y sin
checkpointer propio: cada servidor pone el suyo (aegra, ``AsyncPostgresSaver``;
langgraph-api en memoria, el suyo en memoria). Sin candado de hilo, sin cola de
aprobaciones, sin auditoría ni trazas: eso es lo que el producto hace de más.

Lo carga cada servidor desde su virtualenv (``bench.pares`` lo instala), con el código
del producto en ``PYTHONPATH``. Variables: ``AGENTE_PARES_BD`` (la base de negocio) y
``AGENTE_MODELO_BASE_URL`` (el proveedor local).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from agente.bd.pool import abrir_pool
from agente.construir import construir_agente
from agente.modelos import crear_modelo
from caja.pasarela import PasarelaSimulada

__all__ = ["graph"]

_pool = abrir_pool(os.environ["AGENTE_PARES_BD"], max_size=int(os.environ.get("AGENTE_PARES_POOL", "8")))

_HILOS = ThreadPoolExecutor(max_workers=int(os.environ.get("AGENTE_PARES_HILOS", "256")),
                            thread_name_prefix="grafo")
_FIN = object()


def _en_hilo(clase: type) -> type:
    class GrafoEnHilo(clase):
        async def astream(self, input, config=None, **kwargs):
            bucle = asyncio.get_running_loop()
            cola: asyncio.Queue = asyncio.Queue()
            parar = threading.Event()

            def correr() -> None:
                try:
                    for parte in self.stream(input, config, **kwargs):
                        bucle.call_soon_threadsafe(cola.put_nowait, (None, parte))
                        if parar.is_set():
                            break
                except BaseException as exc:  # se relanza en el bucle del servidor
                    bucle.call_soon_threadsafe(cola.put_nowait, (exc, None))
                finally:
                    bucle.call_soon_threadsafe(cola.put_nowait, (_FIN, None))

            tarea = bucle.run_in_executor(_HILOS, contextvars.copy_context().run, correr)
            try:
                while True:
                    error, parte = await cola.get()
                    if error is _FIN:
                        break
                    if error is not None:
                        raise error
                    yield parte
            finally:
                parar.set()
                await asyncio.shield(tarea)

    GrafoEnHilo.__name__ = clase.__name__
    return GrafoEnHilo


graph = construir_agente(
    crear_modelo("openai:latencia", base_url=os.environ["AGENTE_MODELO_BASE_URL"], sin_reintentos=True),
    None,
    pool=_pool,
    pasarela=PasarelaSimulada(pool=_pool),
)
graph.__class__ = _en_hilo(type(graph))
