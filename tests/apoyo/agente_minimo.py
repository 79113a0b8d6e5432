"""El agente mínimo de las pruebas de trazas: un modelo guionizado, un ``reembolsar`` falso con firma.

Lo usan las pruebas de trazas y los subprocesos que lanzan (``from tests.apoyo import
agente_minimo``). No importa ``langfuse``: el subproceso sin claves comprueba que el SDK no
llega a cargarse.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.types import Command

from agente.trazas import Trazador
from nucleo.contexto import ContextoCliente

__all__ = [
    "CLIENTE", "CONTEXTO", "HILO", "MENSAJE_CON_PII", "ModeloGuion", "aprobar", "config_de",
    "construir_agente", "propuesta_reembolso", "reembolsar", "respuesta_final", "turno_hasta_la_pausa",
]

HILO = "hilo-0001"
CLIENTE = "C-0001"
MENSAJE_CON_PII = (
    "Soy ana.garcia@example.com, mi teléfono es +34 600 111 001 y el fijo 91 123 45 67. "
    "Devolvedme los 120,00 EUR del pedido P-20260917-0041 al IBAN ES91 2100 0418 4502 0005 1332; "
    "pagué con la tarjeta 4111 1111 1111 1111."
)


class ModeloGuion(BaseChatModel):
    """Modelo de chat que responde lo que dice el guion, en orden."""

    respuestas: list[AIMessage]
    posicion: int = 0

    @property
    def _llm_type(self) -> str:
        return "guion"

    def _get_ls_params(self, stop=None, **kwargs):
        parametros = super()._get_ls_params(stop=stop, **kwargs)
        parametros["ls_model_name"] = "guion"  # así Langfuse no avisa de modelo desconocido
        return parametros

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        respuesta = self.respuestas[self.posicion]
        self.posicion += 1
        return ChatResult(generations=[ChatGeneration(message=respuesta)])


@tool
def reembolsar(pedido: str, importe: str, motivo: str) -> str:
    """Reembolsa un pedido."""
    return json.dumps(
        {"reembolso": "RE-000001", "pedido": pedido, "importe": importe, "estado": "emitido"}
    )


def propuesta_reembolso() -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {
                "name": "reembolsar",
                "args": {
                    "pedido": "P-20260917-0041",
                    "importe": "120.00",
                    "motivo": "cafetera rota; llamar al 600 111 001",
                },
                "id": "call_1",
            }
        ],
    )


def respuesta_final() -> AIMessage:
    return AIMessage(content="Hecho: reembolso RE-000001 de 120,00 EUR del pedido P-20260917-0041.")


def construir_agente(checkpointer, respuestas: list[AIMessage], cuando=None):
    regla: dict[str, Any] = {"allowed_decisions": ["approve", "edit", "reject"]}
    if cuando is not None:
        regla["when"] = cuando
    return create_agent(
        ModeloGuion(respuestas=respuestas),
        [reembolsar],
        checkpointer=checkpointer,
        context_schema=ContextoCliente,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"reembolsar": regla})],
    )


CONTEXTO = ContextoCliente(cliente_id=CLIENTE, tienda="talavera", nombre="Ana García Pérez")


def config_de(trazador: Trazador, trace_id: str | None, tipo: str, encargado_id: str | None = None):
    config = trazador.config_ejecucion(
        trace_id=trace_id,
        thread_id=HILO,
        cliente_id=CLIENTE,
        tienda="talavera",
        canal="web",
        encargado_id=encargado_id,
        tipo=tipo,
    )
    config["configurable"] = {"thread_id": HILO}
    return config


def turno_hasta_la_pausa(agente, trazador: Trazador, trace_id: str | None):
    salida = agente.invoke(
        {"messages": [{"role": "user", "content": MENSAJE_CON_PII}]},
        config_de(trazador, trace_id, "turno_cliente"),
        context=CONTEXTO,
        version="v2",
    )
    assert len(salida.interrupts) == 1, "el reembolso debía quedar esperando al encargado"
    return salida.interrupts[0]


def aprobar(agente, trazador: Trazador, trace_id: str | None):
    return agente.invoke(
        Command(resume={"decisions": [{"type": "approve"}]}),
        config_de(trazador, trace_id, "decision_encargado", encargado_id="enc-talavera"),
        context=CONTEXTO,
        version="v2",
    )
