"""``ModeloOffline``: el ``BaseChatModel`` de reglas que conduce las herramientas."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from agente.modelo_offline.plan import planificar

__all__ = ["ModeloOffline", "decidir"]


def _id_llamada() -> str:
    return f"call_{uuid.uuid4().hex}"


def decidir(mensajes: Sequence[BaseMessage], herramientas: set[str] | None = None) -> AIMessage:
    """El siguiente mensaje del asistente para ``mensajes`` (función pura salvo los ids).

    ``herramientas``: nombres disponibles; ``None`` = todas (uso sin ``bind_tools``).
    """
    plan = planificar(mensajes, herramientas)
    if plan.llamadas:
        llamadas = [
            {"name": nombre, "args": args, "id": _id_llamada(), "type": "tool_call"}
            for nombre, args in plan.llamadas
        ]
        return AIMessage(content="", tool_calls=llamadas)
    return AIMessage(content=plan.texto, additional_kwargs=dict(plan.extra))


def _nombres(herramientas: Any) -> set[str] | None:
    if herramientas is None:
        return None
    nombres = set()
    for herramienta in herramientas:
        if isinstance(herramienta, dict):
            funcion = herramienta.get("function") if "function" in herramienta else herramienta
            if isinstance(funcion, dict) and funcion.get("name"):
                nombres.add(str(funcion["name"]))
    return nombres


class ModeloOffline(BaseChatModel):
    """Modelo de chat determinista por reglas. NO es un LLM.

    Sirve para la demo y las pruebas sin clave de API: conduce las mismas herramientas
    que un LLM con llamadas reales (ids ``call_<uuid4>``) y responde en español con los
    datos que devuelven las herramientas, sin inventar números. Admite ``bind_tools``
    (lo llama ``create_agent``; solo usa los nombres, para no llamar a una herramienta
    que no tiene) y streaming (la respuesta final palabra a palabra).
    """

    # LangChain lo pone como ``ls_model_name`` en los metadatos de cada llamada y Langfuse
    # lo lee de ahí: la generación sale con su modelo en la traza (sin él, el SDK avisa en
    # cada turno de que no sabe qué modelo es).
    model_name: str = "offline-reglas"

    @property
    def _llm_type(self) -> str:
        return "offline-reglas"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"modelo": "offline-reglas"}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # Solo se usan los nombres; tool_choice se ignora (las reglas deciden).
        formateadas = [convert_to_openai_tool(herramienta) for herramienta in tools]
        return self.bind(tools=formateadas, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        mensaje = decidir(messages, _nombres(kwargs.get("tools")))
        return ChatResult(generations=[ChatGeneration(message=mensaje)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        mensaje = decidir(messages, _nombres(kwargs.get("tools")))
        if mensaje.tool_calls:
            trozos = [
                {
                    "name": llamada["name"],
                    "args": json.dumps(llamada["args"], ensure_ascii=False),
                    "id": llamada["id"],
                    "index": indice,
                    "type": "tool_call_chunk",
                }
                for indice, llamada in enumerate(mensaje.tool_calls)
            ]
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=trozos))
            return
        for n, palabra in enumerate(re.findall(r"\S+\s*|\s+", str(mensaje.content))):
            # Lo que no es texto (la propuesta de cambio) va con el primer trozo.
            extra = dict(mensaje.additional_kwargs) if n == 0 else {}
            trozo = ChatGenerationChunk(message=AIMessageChunk(content=palabra, additional_kwargs=extra))
            if run_manager:
                run_manager.on_llm_new_token(palabra, chunk=trozo)
            yield trozo
