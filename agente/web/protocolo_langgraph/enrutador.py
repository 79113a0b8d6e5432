"""El protocolo de LangGraph bajo ``/langgraph`` (``docs/protocolo-langgraph.md``)."""

from __future__ import annotations

from fastapi import APIRouter

from agente.web.protocolo_langgraph import rutas_asistentes, rutas_ejecuciones, rutas_hilos

__all__ = ["PREFIJO", "router"]

PREFIJO = "/langgraph"

router = APIRouter(prefix=PREFIJO)
router.include_router(rutas_asistentes.router)
router.include_router(rutas_hilos.router)
router.include_router(rutas_ejecuciones.router)
