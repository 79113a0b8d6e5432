"""Los objetos del protocolo (Thread, ThreadState, Run, Assistant) desde lo que da el servicio.

Los ``values`` de un hilo son ``{"messages": [...]}`` con la transcripción que ve el cliente
(lo que escribió, lo que le contestó el agente y lo que la aplicación le dijo: la espera,
la nota del encargado, lo que una persona de la tienda le escribió), como mensajes de
LangChain serializados. No son los mensajes internos del grafo (llamadas a herramientas,
avisos en inglés de la edición): esos los ve un ingeniero con ``agente hilo``.

Un mensaje de la tienda («Escribir al cliente») es un ``ai`` más, en su orden, con el nombre
de quien lo firmó en ``name`` y ``additional_kwargs`` ``{"rol": "tienda", "autor": ...}``
para distinguirlo del agente. No está en el estado del grafo (escribirlo ahí con una pausa
pendiente rompería la aprobación): solo en esta transcripción.

Las ``interrupts`` (la petición de firma por lotes: ``action_requests`` y
``review_configs``) solo las ve quien firma: llevan los motivos de la política, y un
cliente no puede responderlas.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from agente.web.protocolo_langgraph.identidad import Quien

__all__ = [
    "ASISTENTE",
    "ASISTENTE_ID",
    "GRAFO",
    "NODO_PAUSA",
    "asistente_de",
    "ejecucion",
    "es_asistente",
    "estado_hilo",
    "hilo",
    "interrupciones",
    "mensajes",
    "ultimo_id",
    "valores",
]

GRAFO = "agente"
ASISTENTE_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "agente-tienda/langgraph/agente"))
# Solo informativo (``next`` y ``tasks``): la pausa se detecta por la cola, nunca por el nodo.
NODO_PAUSA = "HumanInTheLoopMiddleware.after_model"
_CREADO = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
ASISTENTE = {
    "assistant_id": ASISTENTE_ID,
    "graph_id": GRAFO,
    "name": GRAFO,
    "description": "Agente de atención al cliente de la tienda (reembolsos y cambios con firma).",
    "config": {},
    "context": {},
    "metadata": {"created_by": "system"},
    "version": 1,
    "created_at": _CREADO,
    "updated_at": _CREADO,
}


def es_asistente(id_o_grafo: str) -> bool:
    return id_o_grafo in (ASISTENTE_ID, GRAFO)


def asistente_de(id_o_grafo: str) -> dict[str, Any] | None:
    return ASISTENTE if es_asistente(id_o_grafo) else None


def _fecha(valor: Any) -> str | None:
    if valor is None:
        return None
    return valor.isoformat() if hasattr(valor, "isoformat") else str(valor)


def _mensaje(m: dict[str, Any]) -> dict[str, Any]:
    base = {"content": m["texto"], "additional_kwargs": {}, "response_metadata": {},
            "name": None, "id": f"m-{m['id']}"}
    if m["rol"] == "cliente":
        return {**base, "type": "human", "example": False}
    if m["rol"] == "tienda":
        base = {**base, "name": m.get("autor"), "additional_kwargs": {"rol": "tienda", "autor": m.get("autor")}}
    return {**base, "type": "ai", "example": False, "tool_calls": [], "invalid_tool_calls": [],
            "usage_metadata": None}


def mensajes(fila: dict[str, Any], *, desde: int = 0) -> list[dict[str, Any]]:
    """Los mensajes de la transcripción con id > ``desde``."""
    return [_mensaje(m) for m in fila["mensajes"] if m["id"] > desde]


def ultimo_id(fila: dict[str, Any]) -> int:
    return max((m["id"] for m in fila["mensajes"]), default=0)


def valores(fila: dict[str, Any]) -> dict[str, Any]:
    return {"messages": mensajes(fila)}


def interrupciones(fila: dict[str, Any], quien: Quien) -> list[dict[str, Any]]:
    """La interrupción pendiente tal como la levantó el grafo (solo para quien firma)."""
    if fila.get("interrupt_id") is None or quien.encargado is None:
        return []
    peticion = fila.get("peticion") or {}
    valor = {"action_requests": peticion.get("action_requests", []),
             "review_configs": peticion.get("review_configs", [])}
    return [{"value": valor, "id": fila["interrupt_id"]}]


def _estado(fila: dict[str, Any]) -> str:
    return "interrupted" if fila.get("interrupt_id") is not None else "idle"


def _metadatos(fila: dict[str, Any]) -> dict[str, Any]:
    return {"graph_id": GRAFO, "assistant_id": ASISTENTE_ID, "tienda": fila["tienda"],
            "cliente_id": fila["cliente_id"], "canal": fila["canal"]}


def hilo(fila: dict[str, Any], quien: Quien) -> dict[str, Any]:
    """Un Thread: ``interrupts`` va por tarea (aquí, el id de la interrupción)."""
    pendientes = interrupciones(fila, quien)
    return {
        "thread_id": fila["thread_id"],
        "created_at": _fecha(fila["creada"]),
        "updated_at": _fecha(fila["actualizada"]),
        "metadata": _metadatos(fila),
        "status": _estado(fila),
        "config": {},
        "values": valores(fila),
        "interrupts": {i["id"]: [i] for i in pendientes},
    }


def estado_hilo(fila: dict[str, Any], quien: Quien) -> dict[str, Any]:
    """Un ThreadState (el último: el producto no expone checkpoints pasados)."""
    pendientes = interrupciones(fila, quien)
    interrumpido = fila.get("interrupt_id") is not None
    tareas = [{"id": fila["interrupt_id"], "name": NODO_PAUSA, "path": [], "error": None,
               "interrupts": pendientes, "checkpoint": None, "state": None, "result": None}
              ] if interrumpido else []
    return {
        "values": valores(fila),
        "next": [NODO_PAUSA] if interrumpido else [],
        "tasks": tareas,
        "checkpoint": {"thread_id": fila["thread_id"], "checkpoint_ns": "",
                       "checkpoint_id": None, "checkpoint_map": None},
        "metadata": {**_metadatos(fila), "step": ultimo_id(fila)},
        "created_at": _fecha(fila["actualizada"]),
        "parent_checkpoint": None,
        "interrupts": pendientes,
    }


def ejecucion(fila: dict[str, Any]) -> dict[str, Any]:
    """Un Run."""
    return {
        "run_id": str(fila["run_id"]),
        "thread_id": fila["thread_id"],
        "assistant_id": ASISTENTE_ID,
        "created_at": _fecha(fila["creada"]),
        "updated_at": _fecha(fila["actualizada"]),
        "status": fila["estado"],
        "metadata": fila["metadatos"] or {},
        "multitask_strategy": "reject",
        "kwargs": {},
    }
