"""Límites por turno y por hilo, sobre ``ModelCallLimitMiddleware`` y ``ToolCallLimitMiddleware``.

Trampa: los contadores "por ejecución" de LangChain no se guardan en el checkpoint y
vuelven a cero en cada ``invoke``, también en cada reanudación; lo que deba valer a
través de una pausa se apoya en los límites por hilo.

Los límites de LangChain terminan el turno con un texto en inglés; ``AvisoLimites``
lo sustituye (mismo id de mensaje) por un aviso en español y marca el estado
``limite_alcanzado`` para que el servicio pase el hilo a «necesita persona».
"""

from __future__ import annotations

from typing import Any, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelCallLimitMiddleware,
    ToolCallLimitMiddleware,
)
from langchain_core.messages import AIMessage, ToolMessage

MENSAJE_LIMITE = (
    "Lo siento, tu consulta necesita la atención de una persona de la tienda. "
    "Hemos avisado al equipo y te contestarán por este mismo canal."
)
_MARCAS_LIMITE = ("Model call limits exceeded", "Tool call limit")


class EstadoLimites(AgentState):
    limite_alcanzado: NotRequired[bool]


class AvisoLimites(AgentMiddleware):
    """Traduce el final por límite a un aviso en español y lo marca en el estado."""

    state_schema = EstadoLimites

    def after_agent(self, state: dict[str, Any], runtime: Any) -> dict[str, Any] | None:
        mensajes = state.get("messages") or []
        if not mensajes or not isinstance(mensajes[-1], AIMessage):
            return None
        ultimo = mensajes[-1]
        texto = ultimo.content if isinstance(ultimo.content, str) else str(ultimo.content)
        bloqueada = any(
            isinstance(m, ToolMessage) and str(m.content).startswith("Tool call limit")
            for m in mensajes[-6:]
        )
        if not (texto.startswith(_MARCAS_LIMITE) or (bloqueada and not ultimo.tool_calls)):
            return None
        return {
            "messages": [AIMessage(content=MENSAJE_LIMITE, id=ultimo.id)],
            "limite_alcanzado": True,
        }


def middleware_limites(
    *,
    llamadas_modelo_turno: int = 8,
    llamadas_modelo_hilo: int = 60,
    reembolsos_turno: int = 2,
    sustituciones_turno: int = 2,
) -> list[AgentMiddleware]:
    return [
        AvisoLimites(),
        ModelCallLimitMiddleware(
            run_limit=llamadas_modelo_turno, thread_limit=llamadas_modelo_hilo, exit_behavior="end"
        ),
        ToolCallLimitMiddleware(tool_name="reembolsar", run_limit=reembolsos_turno, exit_behavior="end"),
        ToolCallLimitMiddleware(
            tool_name="sustituir", run_limit=sustituciones_turno, exit_behavior="end"
        ),
    ]
