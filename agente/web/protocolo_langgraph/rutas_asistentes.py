"""``/info`` y los asistentes: uno solo, el agente de la tienda (``graph_id`` ``agente``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from agente.web.protocolo_langgraph import vistas
from agente.web.protocolo_langgraph.comun import ERRORES
from agente.web.protocolo_langgraph.esquemas import AsistenteBusqueda
from agente.web.protocolo_langgraph.identidad import QuienLlama
from nucleo.errores import HiloNoEncontrado

__all__ = ["router"]

router = APIRouter(tags=["langgraph"])

_MENSAJES = {"type": "array", "items": {"type": "object", "properties": {
    "type": {"type": "string"}, "content": {"type": "string"}, "id": {"type": "string"}}}}
ESQUEMAS = {
    "graph_id": vistas.GRAFO,
    "input_schema": {"title": "Entrada", "type": "object", "required": ["messages"],
                     "properties": {"messages": {**_MENSAJES, "minItems": 1, "maxItems": 1}}},
    "output_schema": {"title": "Salida", "type": "object", "properties": {"messages": _MENSAJES}},
    "state_schema": {"title": "Estado", "type": "object", "properties": {"messages": _MENSAJES}},
    "config_schema": {"title": "Config", "type": "object", "properties": {}},
    "context_schema": {"title": "Contexto", "type": "object", "properties": {}},
}


def _asistente(assistant_id: str) -> dict[str, Any]:
    asistente = vistas.asistente_de(assistant_id)
    if asistente is None:
        raise HiloNoEncontrado(f"asistente no encontrado: {assistant_id} (el único es "
                               f"«{vistas.GRAFO}», {vistas.ASISTENTE_ID})")
    return asistente


@router.get("/info", summary="Información del servidor (protocolo LangGraph)")
def info() -> dict[str, Any]:
    """Lo que el servidor admite. Sin token, como en el servidor de LangGraph."""
    return {"version": "agente-tienda 1.0", "flags": {"assistants": True, "crons": False,
            "langsmith": False, "strict_resume": False}, "metadata": {}}


@router.post("/assistants/search", summary="Buscar asistentes", responses=ERRORES)
def buscar_asistentes(cuerpo: AsistenteBusqueda, _quien: QuienLlama) -> list[dict[str, Any]]:
    """El agente de la tienda, si casa con el filtro (``graph_id``, ``name``, ``metadata``)."""
    casa = (cuerpo.graph_id in (None, vistas.GRAFO) and cuerpo.name in (None, vistas.GRAFO)
            and all(vistas.ASISTENTE["metadata"].get(k) == v for k, v in (cuerpo.metadata or {}).items()))
    return [vistas.ASISTENTE] if casa and cuerpo.offset == 0 else []


@router.get("/assistants/{assistant_id}", summary="Un asistente", responses=ERRORES)
def asistente(assistant_id: str, _quien: QuienLlama) -> dict[str, Any]:
    return _asistente(assistant_id)


@router.get("/assistants/{assistant_id}/schemas", summary="Esquemas del grafo", responses=ERRORES)
def esquemas_grafo(assistant_id: str, _quien: QuienLlama) -> dict[str, Any]:
    """Entrada: un mensaje del cliente; estado y salida: la transcripción (``messages``)."""
    _asistente(assistant_id)
    return ESQUEMAS
