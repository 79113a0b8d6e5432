"""Un mensaje que el modelo no entiende justo después de un desenlace se contesta en contexto.

El caso típico: el cliente escribió «¿ya está?» mientras un encargado decidía; el mensaje se
guardó y llega al agente justo DESPUÉS de la respuesta con el desenlace (el reembolso
tramitado, el rechazo con su motivo). Responder con la presentación de serie («Hola, soy el
asistente...») enterraría ese desenlace: se recuerda lo que acaba de pasar («Sigo aquí: he
tramitado el reembolso R-... de 90,00 EUR...») y se ofrece seguir.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from agente.modelo_offline.texto import RE_PEDIDO
from nucleo.operaciones import OPERACIONES

__all__ = ["desenlace_reciente", "sigo_aqui", "solo_seguimiento"]

_CON_EFECTO = frozenset(h for op in OPERACIONES for h in op.herramientas)


def desenlace_reciente(anteriores: Sequence[BaseMessage]) -> str | None:
    """El texto de la última respuesta del asistente si cerró un turno con una operación con
    efecto (ejecutada, rechazada o fallida); ``None`` si no hubo ninguna o el cliente ya
    escribió después."""
    for indice in range(len(anteriores) - 1, -1, -1):
        mensaje = anteriores[indice]
        if isinstance(mensaje, HumanMessage):
            return None
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls and str(mensaje.content).strip():
            turno = anteriores[:indice]
            for previo in reversed(turno):
                if isinstance(previo, HumanMessage):
                    return None
                if isinstance(previo, ToolMessage) and previo.name in _CON_EFECTO:
                    return str(mensaje.content).strip()
            return None
    return None


def solo_seguimiento(tipo: str, texto: str) -> bool:
    """¿Una tarea que solo pregunta «¿y qué hay de lo mío?»? Lo que no se entiende o una
    pregunta por el estado que no nombra ningún pedido («¿hay novedades?», «¿ya está?»)."""
    return tipo == "ayuda" or (tipo == "estado" and not RE_PEDIDO.search(texto))


def sigo_aqui(desenlace: str) -> str:
    resumen = desenlace[:1].lower() + desenlace[1:]
    return (
        f"Sigo aquí: {resumen}\n\n¿Necesitas algo más? Si es sobre otro pedido, dime su número "
        "(empieza por P-, como P-20260917-0041)."
    )
