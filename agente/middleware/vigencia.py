"""*Fencing* antes de las herramientas con efectos: la ejecución sigue teniendo su hilo.

El candado del hilo (``agente.servicio.conversaciones.candados``) se puede perder a mitad de una
ejecución (la conexión que lo retiene se cae); otro proceso podría entonces tomar el
hilo. Antes de mover dinero o stock se comprueba en memoria que la tenencia sigue
valiendo; si no, :class:`nucleo.errores.CandadoPerdido` detiene la ejecución (no
se convierte en un resultado para el modelo). Es un ``wrap_tool_call``: no añade nodos
al grafo.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest


class VigenciaCandado(AgentMiddleware):
    """``comprobar(thread_id)`` lanza si la ejecución perdió el candado del hilo."""

    def __init__(self, *, comprobar: Callable[[str], None], con_efectos: Iterable[str]) -> None:
        super().__init__()
        self.comprobar = comprobar
        self.con_efectos = frozenset(con_efectos)

    def _antes(self, request: ToolCallRequest) -> None:
        if request.tool_call.get("name") in self.con_efectos:
            config = getattr(request.runtime, "config", None) or {}
            thread_id = (config.get("configurable") or {}).get("thread_id")
            if thread_id:
                self.comprobar(thread_id)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable) -> object:
        self._antes(request)
        return handler(request)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Awaitable]) -> object:
        self._antes(request)
        return await handler(request)
