"""Límites por turno y por hilo, en un solo ``wrap_model_call`` (sin nodos en el grafo).

Por qué no ``ModelCallLimitMiddleware`` + ``ToolCallLimitMiddleware`` de LangChain (se
usaron primero y se midieron, ver docs/rendimiento.md): cada uno añade nodos
``before_model``/``after_model`` que, con ``durability="sync"``, guardan un checkpoint por
nodo y llamada al modelo; con los tres límites el turno costaba el doble que un
``create_agent`` pelado. Además sus contadores "por ejecución" vuelven a cero en cada
``invoke`` (también al reanudar tras una pausa).

Aquí los contadores se derivan de los mensajes, que ya están en el checkpoint:
- llamadas al modelo del turno = AIMessage desde el último mensaje del cliente (se
  mantiene a través de una pausa: la reanudación sigue siendo el mismo turno);
- llamadas al modelo del hilo = todos los AIMessage;
- llamadas a una herramienta en el turno = sus tool_calls desde el último mensaje del cliente.

Al pasarse, la respuesta del modelo se sustituye por un aviso en español sin llamadas a
herramientas: el turno termina antes de pedir firma o ejecutar nada, y el historial
sigue siendo válido para cualquier proveedor (no queda ninguna llamada sin respuesta).
El aviso lleva ``response_metadata["limite_alcanzado"]`` para que el servicio pase el
hilo a «necesita persona».
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

MENSAJE_LIMITE = (
    "Lo siento, tu consulta necesita la atención de una persona de la tienda. "
    "Hemos avisado al equipo y te contestarán por este mismo canal."
)
MARCA_LIMITE = "limite_alcanzado"


def aviso_de_limite(motivo: str) -> AIMessage:
    return AIMessage(content=MENSAJE_LIMITE, response_metadata={MARCA_LIMITE: motivo})


def limite_alcanzado(mensaje: BaseMessage | None) -> bool:
    return isinstance(mensaje, AIMessage) and bool(mensaje.response_metadata.get(MARCA_LIMITE))


def _del_turno(mensajes: list[BaseMessage]) -> list[BaseMessage]:
    for n in range(len(mensajes) - 1, -1, -1):
        if isinstance(mensajes[n], HumanMessage):
            return mensajes[n + 1 :]
    return mensajes


class LimitesTurno(AgentMiddleware):
    """Corta el turno al pasarse de llamadas al modelo o de operaciones por herramienta."""

    def __init__(
        self,
        *,
        llamadas_modelo_turno: int = 8,
        llamadas_modelo_hilo: int = 60,
        max_por_herramienta: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__()
        por_herramienta = dict(max_por_herramienta or {})
        if llamadas_modelo_turno < 1 or llamadas_modelo_hilo < llamadas_modelo_turno:
            raise ValueError("límites de llamadas al modelo no válidos (1 <= turno <= hilo)")
        if any(n < 1 for n in por_herramienta.values()):
            raise ValueError("cada límite por herramienta debe ser al menos 1")
        self.llamadas_modelo_turno = llamadas_modelo_turno
        self.llamadas_modelo_hilo = llamadas_modelo_hilo
        self.max_por_herramienta = por_herramienta

    def _antes(self, mensajes: list[BaseMessage]) -> AIMessage | None:
        turno = sum(isinstance(m, AIMessage) for m in _del_turno(mensajes))
        hilo = sum(isinstance(m, AIMessage) for m in mensajes)
        if turno >= self.llamadas_modelo_turno:
            return aviso_de_limite(f"llamadas al modelo en el turno ({turno})")
        if hilo >= self.llamadas_modelo_hilo:
            return aviso_de_limite(f"llamadas al modelo en la conversación ({hilo})")
        return None

    def _despues(self, mensajes: list[BaseMessage], respuesta: Any) -> Any:
        resultado = respuesta.result if isinstance(respuesta, ModelResponse) else [respuesta]
        nuevas = [t for m in resultado if isinstance(m, AIMessage) for t in m.tool_calls]
        if not nuevas:
            return respuesta
        previas = [t for m in _del_turno(mensajes) if isinstance(m, AIMessage) for t in m.tool_calls]
        for nombre, maximo in self.max_por_herramienta.items():
            usadas = sum(t["name"] == nombre for t in previas + nuevas)
            if usadas > maximo:
                return aviso_de_limite(f"{usadas} llamadas a {nombre} en el turno (máximo {maximo})")
        return respuesta

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage:
        mensajes = request.state.get("messages", [])
        if (aviso := self._antes(mensajes)) is not None:
            return aviso
        return self._despues(mensajes, handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage:
        mensajes = request.state.get("messages", [])
        if (aviso := self._antes(mensajes)) is not None:
            return aviso
        return self._despues(mensajes, await handler(request))
