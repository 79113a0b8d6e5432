"""Lo que sale del modelo no lleva el carácter nulo (U+0000).

PostgreSQL no admite U+0000 en ``text`` ni en ``jsonb`` (``agente/nucleo/texto.py``): un
modelo que lo escribe en los argumentos de una llamada rompía el ``when`` de la firma (el
veredicto guarda los argumentos) y el turno acababa en disculpa; en su texto final, el
cierre del turno. La web lo rechaza en la puerta (422), pero el modelo no pasa por ella.
Aquí, justo alrededor del modelo, cada U+0000 del texto y de los argumentos (claves y
valores, a cualquier profundidad) se cambia por U+FFFD: el argumento sigue sin valer (un
pedido con U+FFFD no existe) y la herramienta contesta su error de siempre. Lo encontró
el modelo del caos (``tests/integracion/test_caos.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage

from agente.nucleo.texto import NULO, contiene_nulo

__all__ = ["SUSTITUTO", "SalidaSinNulos", "sin_nulos"]

SUSTITUTO = "\ufffd"


def sin_nulos(valor: Any) -> Any:
    """``valor`` con cada U+0000 de sus textos (también claves) cambiado por U+FFFD."""
    if isinstance(valor, str):
        return valor.replace(NULO, SUSTITUTO)
    if isinstance(valor, dict):
        return {sin_nulos(k): sin_nulos(v) for k, v in valor.items()}
    if isinstance(valor, list | tuple):
        return type(valor)(sin_nulos(v) for v in valor)
    return valor


def _limpio(mensaje: Any) -> Any:
    if not isinstance(mensaje, AIMessage) or not contiene_nulo([mensaje.content, [t["args"] for t in mensaje.tool_calls]]):
        return mensaje
    llamadas = [{**t, "args": sin_nulos(t["args"])} for t in mensaje.tool_calls]
    return mensaje.model_copy(update={"content": sin_nulos(mensaje.content), "tool_calls": llamadas})


def _limpiar(respuesta: Any) -> Any:
    if isinstance(respuesta, ModelResponse):
        return replace(respuesta, result=[_limpio(m) for m in respuesta.result])
    return _limpio(respuesta)


class SalidaSinNulos(AgentMiddleware):
    """Cambia U+0000 por U+FFFD en la respuesta del modelo, antes de que nadie la lea."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        return _limpiar(handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        return _limpiar(await handler(request))
