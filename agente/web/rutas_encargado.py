"""API del encargado: la bandeja de su tienda y las decisiones."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from agente.nucleo.errores import Prohibido
from agente.web import esquemas
from agente.web.auth import EncargadoActual
from agente.web.dependencias import Limitador, ServicioWeb
from agente.web.directo import ejecutar_decision, en_hilo_del_agente

router = APIRouter(prefix="/api/aprobaciones", tags=["encargado"])

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "Otra tienda, o encargado de baja."},
}


@router.get("", summary="Bandeja de la tienda", response_model=list[esquemas.Aprobacion], responses=_ERRORES)
def bandeja(
    servicio: ServicioWeb,
    encargado: EncargadoActual,
    limite: Annotated[int, Query(ge=1, le=200)] = 50,
    tienda: Annotated[str | None, Query(description="Solo se admite la propia.")] = None,
):
    """Aprobaciones pendientes de la tienda del encargado, la más antigua primero."""
    if tienda is not None and tienda != encargado.tienda:
        raise Prohibido("solo puedes ver la bandeja de tu tienda")
    filas = servicio.aprobaciones_pendientes(encargado.tienda, limite)
    return [esquemas.aprobacion(f, servicio.registro) for f in filas]


@router.get(
    "/{thread_id}",
    summary="Una aprobación pendiente",
    response_model=esquemas.Aprobacion,
    responses={**_ERRORES, 404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."}},
)
def una_aprobacion(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """La aprobación pendiente de un hilo de la tienda del encargado."""
    return esquemas.aprobacion(servicio.aprobacion(thread_id, tienda=encargado.tienda), servicio.registro)


@router.post(
    "/{thread_id}/decision",
    summary="Decidir",
    response_model=esquemas.RespuestaDecision,
    responses={
        **_ERRORES,
        404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."},
        409: {"model": esquemas.Error, "description": (
            "Ya decidida o decidiéndose ahora, o la conversación está ocupada "
            "(cabecera Retry-After)."
        )},
        422: {"model": esquemas.Error, "description": "Decisión no válida."},
    },
)
async def decidir(
    thread_id: str,
    cuerpo: esquemas.DecisionEntrada,
    servicio: ServicioWeb,
    limitador: Limitador,
    encargado: EncargadoActual,
):
    """Decide la pausa del hilo (una decisión por operación) y reanuda el agente. Con un 4xx no
    cambia nada. Devuelve lo que se le ha dicho al cliente."""
    respuesta = await en_hilo_del_agente(
        limitador, ejecutar_decision, servicio, thread_id,
        encargado.encargado_id, encargado.tienda, cuerpo.como_lista(),
    )
    return esquemas.respuesta_decision(respuesta)
