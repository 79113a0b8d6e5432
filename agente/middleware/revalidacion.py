"""La pausa que sale del efecto: cuando la revalidación dice que ya no sale sin firma.

El ``when`` de ``HumanInTheLoopMiddleware`` decide antes de la herramienta; el efecto vuelve
a decidir dentro de su transacción, bajo el candado del cliente (``politicas.revalidacion``).
Si otra conversación del mismo cliente consumió entre tanto lo que la regla contaba (un vale,
un reenvío, una devolución), el efecto lanza ``NecesitaFirma`` sin escribir nada y este
middleware:

1. guarda el veredicto nuevo («pide firma», con sus motivos y su autoridad);
2. interrumpe con la misma forma que la pausa del middleware de LangChain
   (``action_requests`` y ``review_configs``, más ``tool_call_ids``): el servicio la encola,
   avisa a quien firma y dice al cliente que se está revisando, como cualquier otra;
3. al reanudar, aplica la decisión: aprobar ejecuta la llamada (ya firmada: no se revalida),
   editar ejecuta la editada con el aviso de edición, rechazar devuelve el rechazo al modelo.

Trampa: al reanudar, LangGraph vuelve a ejecutar la herramienta desde el principio y la
primera ``interrupt()`` devuelve la decisión. Por eso, si el veredicto ya está elevado
(``revalidada``), se interrumpe *antes* de ejecutar nada; nunca se ejecuta primero.

Va antes de los errores de herramientas: ``NecesitaFirma`` no es un error para el modelo.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
from langchain_core.messages import ToolMessage, add_notification_metadata
from langgraph.types import Command, interrupt

from agente.middleware.aprobacion import AVISO_EDICION
from nucleo.errores import NecesitaFirma
from politicas import PoliticaAprobacion, hilo_de

__all__ = ["RevalidacionEfectos"]


class RevalidacionEfectos(AgentMiddleware):
    """Convierte un ``NecesitaFirma`` del efecto en una pausa normal para un encargado.

    - ``politica``: la ``PoliticaAprobacion`` del agente (guarda el veredicto elevado).
    - ``descripcion``: la misma redacción de la tarjeta que usa la firma de LangChain.
    - ``decisiones``: ``herramienta -> decisiones permitidas`` (``Registro.decisiones_permitidas``);
      solo esas herramientas se vigilan.
    """

    def __init__(
        self,
        *,
        politica: PoliticaAprobacion,
        descripcion: Callable[[Mapping[str, Any], Any, Any], str],
        decisiones: Mapping[str, list[str]],
    ) -> None:
        super().__init__()
        if not decisiones:
            raise ValueError("sin herramientas con firma no hay nada que revalidar")
        self._politica = politica
        self._descripcion = descripcion
        self._decisiones = {nombre: list(permitidas) for nombre, permitidas in decisiones.items()}

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        llamada = request.tool_call
        if llamada.get("name") not in self._decisiones or not llamada.get("id"):
            return handler(request)
        hilo = hilo_de(request.runtime)
        if self._politica.revalidada(thread_id=hilo, tool_call_id=llamada["id"]):
            return self._pausar(request, handler)
        try:
            return handler(request)
        except NecesitaFirma as exc:
            self._politica.elevar(thread_id=hilo, tool_call_id=llamada["id"],
                                  revalidacion=exc.revalidacion)
            return self._pausar(request, handler)

    def _pausar(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        llamada = request.tool_call
        nombre = llamada["name"]
        permitidas = self._decisiones[nombre]
        respuesta = interrupt({
            "action_requests": [{
                "name": nombre, "args": llamada["args"],
                "description": self._descripcion(llamada, request.state, request.runtime),
            }],
            "review_configs": [{"action_name": nombre, "allowed_decisions": permitidas}],
            # La pausa es de esta llamada, no de todas las del último mensaje del modelo.
            "tool_call_ids": [llamada["id"]],
        })
        decisiones = (respuesta or {}).get("decisions") or []
        if len(decisiones) != 1:
            raise ValueError(f"se esperaba una decisión para {nombre}, llegaron {len(decisiones)}")
        decision = decisiones[0]
        tipo = decision.get("type")
        if tipo not in permitidas:
            raise ValueError(f"decisión {tipo!r} no permitida para {nombre} (permitidas: {permitidas})")
        if tipo == "approve":
            return handler(request)
        if tipo == "edit":
            editada = decision["edited_action"]
            resultado = handler(request.override(tool_call={**llamada, "args": editada["args"]}))
            if isinstance(resultado, ToolMessage) and isinstance(resultado.content, str):
                return resultado.model_copy(update={"content": f"{AVISO_EDICION}\n{resultado.content}"})
            return resultado
        return _rechazo(llamada, decision)


def _rechazo(llamada: Mapping[str, Any], decision: Mapping[str, Any]) -> ToolMessage:
    """El mismo mensaje que deja un rechazo de ``HumanInTheLoopMiddleware`` (texto y marca
    ``lc_data``): el modelo offline y el servicio lo leen igual venga de donde venga la pausa."""
    if motivo := decision.get("message"):
        contenido = f"User rejected the tool call for `{llamada['name']}` with reason: {motivo}"
    else:
        contenido = (f"User rejected the tool call for `{llamada['name']}` with id {llamada['id']}. The tool "
                     "was not executed. Do not retry this tool call unless the user explicitly requests it.")
    return add_notification_metadata(
        ToolMessage(content=contenido, name=llamada["name"], tool_call_id=llamada["id"], status="error"),
        source="hitl_interrupt_decision",
        data={"decision": "reject"},
    )
