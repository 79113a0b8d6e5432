"""Lo que sale del modelo: sin el carácter nulo (U+0000) y un ``tool_call_id`` por llamada.

PostgreSQL no admite U+0000 en ``text`` ni en ``jsonb`` (``nucleo/texto.py``): un
modelo que lo escribe en los argumentos de una llamada rompía el ``when`` de la firma (el
veredicto guarda los argumentos) y el turno acababa en disculpa; en su texto final, el
cierre del turno. La web lo rechaza en la puerta (422), pero el modelo no pasa por ella.
Aquí, justo alrededor del modelo, cada U+0000 del texto y de los argumentos (claves y
valores, a cualquier profundidad) se cambia por U+FFFD: el argumento sigue sin valer (un
pedido con U+FFFD no existe) y la herramienta contesta su error de siempre. Lo encontró
el modelo del caos (``tests/integracion/test_caos.py``).

Un ``tool_call_id`` nombra una llamada: su herramienta y sus argumentos. El veredicto de la
política, la tarjeta, la autoridad que pide y la clave de idempotencia del efecto son por
``(hilo, tool_call_id)``. Un modelo que repite un id con otra herramienta u otros
argumentos (en el mismo mensaje o en uno anterior) hacía que un reenvío se ejecutase con el
veredicto y la autoridad calculados para un reembolso de otro pedido. Aquí cada repetición
con otra llamada recibe un id nuevo (``id~2``, ``id~3``...); la misma llamada repetida en
el mismo mensaje se queda una vez, y repetida en otro mensaje conserva su id (el efecto
dice ``repetido``, como con cualquier reintento).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage

from nucleo.texto import NULO, contiene_nulo

__all__ = ["SUSTITUTO", "SalidaModelo", "ids_unicos", "sin_nulos"]

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


def _sin_nulos(mensaje: AIMessage) -> AIMessage:
    if not contiene_nulo([mensaje.content, [t["args"] for t in mensaje.tool_calls]]):
        return mensaje
    llamadas = [{**t, "args": sin_nulos(t["args"])} for t in mensaje.tool_calls]
    return mensaje.model_copy(update={"content": sin_nulos(mensaje.content), "tool_calls": llamadas})


def ids_unicos(mensaje: AIMessage, historial: list[Any]) -> AIMessage:
    """``mensaje`` con un id por llamada distinta (ver el docstring del módulo)."""
    vistas: dict[str, tuple[str, Any]] = {
        t["id"]: (t["name"], t["args"]) for m in historial if isinstance(m, AIMessage) for t in m.tool_calls
    }
    en_este: set[str] = set()
    llamadas, cambiado = [], False
    for t in mensaje.tool_calls:
        ident, llamada = t["id"], (t["name"], t["args"])
        if ident in vistas and vistas[ident] == llamada and ident in en_este:
            cambiado = True  # la misma llamada dos veces en el mismo mensaje: una
            continue
        if ident in vistas and (vistas[ident] != llamada or ident in en_este):
            n = 2
            while f"{ident}~{n}" in vistas:
                n += 1
            ident, cambiado = f"{ident}~{n}", True
        vistas[ident] = llamada
        en_este.add(ident)
        llamadas.append({**t, "id": ident})
    return mensaje.model_copy(update={"tool_calls": llamadas}) if cambiado else mensaje


def _limpiar(respuesta: Any, historial: list[Any]) -> Any:
    def limpio(m: Any) -> Any:
        return ids_unicos(_sin_nulos(m), historial) if isinstance(m, AIMessage) else m

    if isinstance(respuesta, ModelResponse):
        return replace(respuesta, result=[limpio(m) for m in respuesta.result])
    return limpio(respuesta)


class SalidaModelo(AgentMiddleware):
    """La respuesta del modelo sin U+0000 y con un id por llamada, antes de que nadie la lea."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        return _limpiar(handler(request), request.state.get("messages", []))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        return _limpiar(await handler(request), request.state.get("messages", []))
