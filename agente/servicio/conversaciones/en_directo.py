"""Un turno en directo: el grafo con ``stream`` de LangGraph y sus trozos de texto, según llegan.

``Ejecutor.ejecutar(..., al_trozo=...)`` recorre ``graph.stream(..., stream_mode=["messages",
"values"], version="v2")`` en lugar de ``invoke``: el mismo grafo, la misma configuración
(candado, ``durability="sync"``, ``context=``, trazas de Langfuse y callbacks de quien
llama) y el mismo resultado (``Ejecucion``: el último estado y sus interrupciones, como
hace ``invoke(version="v2")`` por dentro). Con ``"messages"`` en los modos, LangGraph
pide al modelo de chat que emita por trozos (su ``_stream``).

``al_trozo(tipo, texto)`` recibe:

- ``("token", texto)``: un trozo del texto del nodo del modelo (lo que escriben
  las herramientas u otros nodos no se emite);
- ``("descartar", "")``: la llamada al modelo terminó pidiendo herramientas: lo emitido
  hasta ahora no es la respuesta. Se avisa al cerrarse ese paso del grafo (la parte
  ``values`` que lo sigue).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.messages import AIMessage

from agente.servicio.resultados import Ejecucion

__all__ = ["NODO_MODELO", "AlTrozo", "recorrer"]

NODO_MODELO = "model"  # el nodo del modelo de ``create_agent``
AlTrozo = Callable[[str, str], None]


def recorrer(partes: Iterable[dict[str, Any]], al_trozo: AlTrozo) -> Ejecucion:
    """Pasa a ``al_trozo`` los trozos del modelo y devuelve la ``Ejecucion`` final."""
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
