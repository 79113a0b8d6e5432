"""El manejador de LangChain hacia Langfuse, sin los spans de envoltorio del grafo.

``create_agent`` ejecuta cada llamada al modelo dentro del nodo ``model`` y cada
herramienta dentro del nodo ``tools``: el ``CallbackHandler`` del SDK crea un span por
nodo y otro dentro (la generación, la herramienta), y cada span del nodo serializa y
enmascara el estado entero (todo el historial) como entrada y salida. Ese span de
envoltorio no dice nada que su único hijo no diga, y costaba tanto como el propio hijo.

``ManejadorLangfuse`` no abre esos spans y cuelga a sus hijos del abuelo. Se conservan
la raíz de cada ejecución (``turno_cliente``, ``decision_encargado``...), las
generaciones, las herramientas y los nodos de middleware (``HumanInTheLoopMiddleware
.after_model`` lleva la pausa y el evento del veredicto); de estos últimos, sin el estado
como entrada y salida (es el mismo historial que ya lleva la generación anterior): solo
cuántos mensajes había. La salida de la raíz tampoco repite el historial: cuántos mensajes
hay, la última respuesta y el resto del estado (la interrupción, si la hay); el historial
entero está en la entrada de la última generación.

Las definiciones de las herramientas (≈ 10 KB, las mismas en cada llamada al modelo) el
SDK las añade a la entrada de cada generación; aquí viajan enteras en la primera
generación de cada ejecución y, en las siguientes, solo sus nombres: en una traza con
cuatro llamadas eran la mitad de lo que se enmascaraba, serializaba y enviaba.

Trampa: el SDK busca el padre por ``parent_run_id`` y, si no lo conoce, abre una traza
NUEVA. Por eso cada evento cuyo padre es un nodo omitido se reescribe con el ancestro
conservado más cercano, antes de llegar al SDK.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langfuse.langchain import CallbackHandler

__all__ = ["NODOS_OMITIDOS", "ManejadorLangfuse"]

# Los nodos de create_agent que solo envuelven a un hijo (la generación o la herramienta).
NODOS_OMITIDOS = frozenset({"model", "tools"})

_EVENTOS_CON_PADRE = (
    "on_llm_start",
    "on_llm_new_token",
    "on_llm_end",
    "on_llm_error",
    "on_tool_start",
    "on_tool_end",
    "on_tool_error",
    "on_retriever_start",
    "on_retriever_end",
    "on_retriever_error",
    "on_agent_action",
    "on_agent_finish",
)


class ManejadorLangfuse(CallbackHandler):
    """``CallbackHandler`` de Langfuse que omite los nodos de ``NODOS_OMITIDOS``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # run_id omitido -> el ancestro conservado que hereda a sus hijos.
        self._omitidos: dict[UUID, UUID | None] = {}
        self._resumidos: set[UUID] = set()
        self._raices: set[UUID] = set()
        self._definiciones_enviadas = False

    def _padre(self, parent_run_id: UUID | None) -> UUID | None:
        while parent_run_id is not None and parent_run_id in self._omitidos:
            parent_run_id = self._omitidos[parent_run_id]
        return parent_run_id

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        padre = self._padre(parent_run_id)
        # La raíz de la ejecución nunca se omite: de ella cuelga la traza entera.
        if padre is not None and kwargs.get("name") in NODOS_OMITIDOS:
            self._omitidos[run_id] = padre
            return None
        if padre is not None and _es_de_middleware(kwargs.get("name")):
            self._resumidos.add(run_id)
            inputs = _resumen(inputs)
        if padre is None:
            self._raices.add(run_id)
        return super().on_chain_start(
            serialized, inputs, run_id=run_id, parent_run_id=padre, **kwargs
        )

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        parametros = kwargs.get("invocation_params")
        herramientas = parametros.get("tools") if isinstance(parametros, dict) else None
        if isinstance(herramientas, list) and herramientas:
            if self._definiciones_enviadas:
                kwargs["invocation_params"] = {**parametros, "tools": [_solo_nombre(h) for h in herramientas]}
            self._definiciones_enviadas = True
        return super().on_chat_model_start(
            serialized, messages, run_id=run_id, parent_run_id=self._padre(parent_run_id), **kwargs
        )

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> Any:
        if self._omitidos.pop(run_id, False) is not False:
            return None
        if run_id in self._resumidos:
            self._resumidos.discard(run_id)
            outputs, kwargs["inputs"] = _resumen(outputs), None
        elif run_id in self._raices:
            self._raices.discard(run_id)
            outputs = _salida_de_raiz(outputs)
        return super().on_chain_end(
            outputs, run_id=run_id, parent_run_id=self._padre(parent_run_id), **kwargs
        )

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        if self._omitidos.pop(run_id, False) is not False:
            return None
        self._resumidos.discard(run_id)
        self._raices.discard(run_id)
        return super().on_chain_error(
            error, run_id=run_id, parent_run_id=self._padre(parent_run_id), **kwargs
        )


def _es_de_middleware(nombre: Any) -> bool:
    # Los nodos de middleware de create_agent se llaman «Clase.gancho».
    return isinstance(nombre, str) and "." in nombre


def _resumen(estado: Any) -> Any:
    if isinstance(estado, dict) and isinstance(estado.get("messages"), list):
        return {"mensajes": len(estado["messages"])}
    return None


def _solo_nombre(herramienta: Any) -> Any:
    # El formato de OpenAI que el SDK reconoce como herramienta, sin descripción ni esquema.
    funcion = herramienta.get("function") if isinstance(herramienta, dict) else None
    if isinstance(funcion, dict) and "name" in funcion:
        return {"type": "function", "function": {"name": funcion["name"]}}
    return herramienta


def _salida_de_raiz(estado: Any) -> Any:
    if isinstance(estado, dict) and isinstance(estado.get("messages"), list) and estado["messages"]:
        mensajes = estado["messages"]
        resto = {k: v for k, v in estado.items() if k != "messages"}
        return {"mensajes": len(mensajes), "respuesta": mensajes[-1], **resto}
    return estado


def _reencaminar(nombre: str):
    original = getattr(CallbackHandler, nombre)

    def evento(self: ManejadorLangfuse, *args: Any, parent_run_id: UUID | None = None, **kwargs: Any):
        return original(self, *args, parent_run_id=self._padre(parent_run_id), **kwargs)

    evento.__name__ = nombre
    evento.__doc__ = original.__doc__
    return evento


for _nombre in _EVENTOS_CON_PADRE:
    setattr(ManejadorLangfuse, _nombre, _reencaminar(_nombre))
