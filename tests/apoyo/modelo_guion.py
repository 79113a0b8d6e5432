"""Un chat model de guion para pruebas: devuelve, en orden, los mensajes que se le dan."""

from __future__ import annotations

import uuid

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage


class ModeloGuion(GenericFakeChatModel):
    """``GenericFakeChatModel`` con ``bind_tools`` (create_agent lo exige)."""

    def bind_tools(self, tools, **kwargs):
        return self


def llamada(nombre: str, **args) -> dict:
    return {"name": nombre, "args": args, "id": f"call_{uuid.uuid4().hex}", "type": "tool_call"}


def guion(*mensajes: AIMessage | str) -> ModeloGuion:
    return ModeloGuion(messages=iter([m if isinstance(m, AIMessage) else AIMessage(m) for m in mensajes]))
