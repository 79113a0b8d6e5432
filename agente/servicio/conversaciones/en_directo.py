"""Un turno en directo: el grafo con ``stream`` de LangGraph y sus trozos de texto, según llegan.

``Ejecutor.ejecutar(..., al_trozo=...)`` recorre ``graph.stream(..., stream_mode=["messages",
"values"], version="v2")`` en lugar de ``invoke``: el mismo grafo, la misma configuración
(candado, ``durability="sync"``, ``context=``, trazas de Langfuse y callbacks de quien
llama) y el mismo resultado (``Ejecucion``: el último estado y sus interrupciones, como
hace ``invoke(version="v2")`` por dentro). Con ``"messages"`` en los modos, LangGraph
pide al modelo de chat que emita por trozos (su ``_stream``) y ejecuta los nodos en hilos
de su executor para emitir mientras corren: algo más de CPU por turno que ``invoke``
(medido con el modelo offline: unos 35 ms frente a 27 ms por turno con una herramienta),
por eso solo la respuesta en directo va por aquí.

``al_trozo(tipo, texto)`` recibe:

- ``("token", texto)``: un trozo del texto del nodo del modelo (lo que escriben
  las herramientas u otros nodos no se emite);
- ``("descartar", "")``: la llamada al modelo terminó pidiendo herramientas: lo emitido
  hasta ahora no es la respuesta. Se avisa al cerrarse ese paso del grafo (la parte
  ``values`` que lo sigue).

Si ``al_trozo`` falla (p. ej. el bucle de eventos de la web ya se cerró), el turno sigue
sin emitir nada más: quien escucha es secundario; lo que queda guardado, no.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.messages import AIMessage

from agente.servicio.resultados import Ejecucion

__all__ = ["NODO_MODELO", "AlTrozo", "recorrer"]

logger = logging.getLogger(__name__)

NODO_MODELO = "model"  # el nodo del modelo de ``create_agent``
AlTrozo = Callable[[str, str], None]


def _protegido(al_trozo: AlTrozo) -> AlTrozo:
    """``al_trozo`` que, si falla una vez, deja de llamarse (el turno sigue)."""
    roto = False

    def emitir(tipo: str, texto: str) -> None:
        nonlocal roto
        if roto:
            return
        try:
            al_trozo(tipo, texto)
        except Exception:
            roto = True
            logger.warning("la respuesta en directo dejó de emitirse; el turno sigue", exc_info=True)

    return emitir


def recorrer(partes: Iterable[dict[str, Any]], al_trozo: AlTrozo) -> Ejecucion:
    """Pasa a ``al_trozo`` los trozos del modelo y devuelve la ``Ejecucion`` final."""
    al_trozo = _protegido(al_trozo)
    valores: Any = None
    interrupciones: list[Any] = []
    pidio_herramientas = False
    for parte in partes:
        if parte["type"] == "values":
            valores = parte["data"]
            interrupciones.extend(parte.get("interrupts") or ())
            if pidio_herramientas:
                al_trozo("descartar", "")
                pidio_herramientas = False
            continue
        if parte["type"] != "messages" or parte.get("ns"):
            continue
        trozo, metadata = parte["data"]
        if metadata.get("langgraph_node") != NODO_MODELO or not isinstance(trozo, AIMessage):
            continue  # AIMessageChunk también es un AIMessage
        if texto := trozo.text:
            al_trozo("token", texto)
        if trozo.tool_calls or getattr(trozo, "tool_call_chunks", None):
            pidio_herramientas = True
    return Ejecucion(valores=dict(valores or {}), interrupciones=tuple(interrupciones))
