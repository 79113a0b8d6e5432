"""El cliente simulado: los turnos del guion (modelo offline) o un LLM que hace de cliente.

El LLM recibe la persona y el objetivo de la tarea y la conversación hasta ahora, y
escribe el siguiente mensaje del cliente o ``FIN`` cuando ya tiene lo que quería (o ve
que no lo va a conseguir). Nunca ve las instrucciones del agente ni la base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agente.evaluacion.tareas import Tarea

__all__ = ["ClienteGuion", "ClienteLLM", "ClienteSimulado", "FIN"]

FIN = "FIN"
PROMPT_CLIENTE = """Haces de cliente de una tienda en un chat de atención al cliente, en español.
Eres el cliente {cliente}. {persona}
Tu objetivo: {objetivo}
Escribe SOLO tu siguiente mensaje al asistente, breve y natural, como lo escribiría una
persona. Usa los datos que conoces (por ejemplo, el número de pedido) tal cual. Si el
asistente te pide confirmar algo que encaja con tu objetivo, confírmalo. Cuando tengas lo
que querías, o veas que no lo vas a conseguir, o la operación quede pendiente de la tienda,
responde exactamente FIN.
Tu primer mensaje podría ser, por ejemplo: «{primero}»."""


class ClienteSimulado(Protocol):
    def siguiente(self, transcripcion: Sequence[dict[str, str]]) -> str | None:
        """El siguiente mensaje del cliente, o None si ya no dice nada más."""


class ClienteGuion:
    """Dice los turnos de la tarea en orden, sin mirar las respuestas."""

    def __init__(self, *, tarea: Tarea) -> None:
        self._turnos = list(tarea.turnos)

    def siguiente(self, transcripcion: Sequence[dict[str, str]]) -> str | None:
        return self._turnos.pop(0) if self._turnos else None


class ClienteLLM:
    """Un modelo de chat (LangChain) que hace de cliente; como mucho ``max_turnos`` mensajes."""

    def __init__(self, *, tarea: Tarea, modelo: Any, max_turnos: int | None = None) -> None:
        self.tarea = tarea
        self.modelo = modelo
        self.max_turnos = max_turnos or len(tarea.turnos) + 2
        self._dichos = 0

    def siguiente(self, transcripcion: Sequence[dict[str, str]]) -> str | None:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        if self._dichos >= self.max_turnos:
            return None
        sistema = PROMPT_CLIENTE.format(
            cliente=self.tarea.cliente, persona=self.tarea.persona,
            objetivo=self.tarea.objetivo or "lo que dicen tus mensajes de ejemplo",
            primero=self.tarea.turnos[0],
        )
        # Para el LLM-cliente, el asistente de la tienda es «el otro»: sus mensajes son Human.
        mensajes: list[Any] = [SystemMessage(sistema)]
        for m in transcripcion:
            mensajes.append(AIMessage(m["texto"]) if m["rol"] == "cliente" else HumanMessage(m["texto"]))
        if len(mensajes) == 1:
            mensajes.append(HumanMessage("(El chat se abre. Escribe tu primer mensaje.)"))
        texto = str(self.modelo.invoke(mensajes).content).strip()
        if not texto or texto.upper().startswith(FIN):
            return None
        self._dichos += 1
        return texto
