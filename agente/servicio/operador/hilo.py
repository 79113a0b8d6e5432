"""Inspección de un hilo para un ingeniero (``agente hilo``): lo que guarda el checkpointer."""

from __future__ import annotations

from agente.servicio.conversaciones.ejecucion import Ejecutor, config_lectura
from agente.servicio.conversaciones.turnos import Conversaciones
from agente.servicio.resultados import EstadoHilo, PasoHistoria

__all__ = ["HISTORIA_MAXIMA", "estado_hilo"]

HISTORIA_MAXIMA = 50  # checkpoints, el más reciente primero


def estado_hilo(ejecutor: Ejecutor, conversaciones: Conversaciones, thread_id: str) -> EstadoHilo:
    """Consulta, siguiente paso, pausas pendientes, mensajes e historia de checkpoints."""
    consulta = conversaciones.consulta(thread_id)
    estado = ejecutor.estado(thread_id)
    historia = [
        PasoHistoria(
            checkpoint_id=s.config["configurable"].get("checkpoint_id"),
            paso=(s.metadata or {}).get("step"),
            siguiente=tuple(s.next),
            mensajes=len(s.values.get("messages", [])),
        )
        for s in ejecutor.agente.get_state_history(config_lectura(thread_id), limit=HISTORIA_MAXIMA)
    ]
    return EstadoHilo(
        consulta=consulta,
        siguiente=tuple(estado.next),
        interrupciones=[{"id": i.id, "valor": i.value} for t in estado.tasks for i in t.interrupts],
        mensajes=estado.values.get("messages", []),
        historia=historia,
    )
