"""API de quien firma (encargado, gerente o regional): la bandeja de sus tiendas y las firmas."""

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
    403: {"model": esquemas.Error, "description": "Otra tienda, o firmante de baja."},
}


@router.get("", summary="Bandeja de sus tiendas", response_model=list[esquemas.Aprobacion], responses=_ERRORES)
def bandeja(
    servicio: ServicioWeb,
    encargado: EncargadoActual,
    limite: Annotated[int, Query(ge=1, le=200)] = 50,
    tienda: Annotated[str | None, Query(
        description="Solo esta tienda; una de las suyas (un regional, las de su región).")] = None,
):
    """Aprobaciones pendientes de las tiendas del firmante (la suya; un regional, todas las
    de su región), la más antigua primero, con la autoridad que exige cada una y sus firmas."""
    if tienda is not None and tienda not in encargado.tiendas:
        raise Prohibido("solo puedes ver la bandeja de tu tienda" if len(encargado.tiendas) == 1
                        else "solo puedes ver la bandeja de las tiendas de tu región")
    filas = servicio.aprobaciones_pendientes([tienda] if tienda else list(encargado.tiendas), limite)
    return [esquemas.aprobacion(f, servicio.registro) for f in filas]


@router.get(
    "/{thread_id}",
    summary="Una aprobación pendiente",
    response_model=esquemas.Aprobacion,
    responses={**_ERRORES, 404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."}},
)
def una_aprobacion(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """La aprobación pendiente de un hilo de una de las tiendas del firmante."""
    return esquemas.aprobacion(servicio.aprobacion(thread_id, tiendas=encargado.tiendas), servicio.registro)


@router.post(
    "/{thread_id}/decision",
    summary="Decidir (firmar)",
    response_model=esquemas.RespuestaDecision,
    response_model_exclude_none=True,
    responses={
        **_ERRORES,
        403: {"model": esquemas.Error, "description": (
            "Otra tienda, firmante de baja, o su límite de firma no cubre el importe (el "
            "mensaje dice el límite): no cambia nada."
        )},
        404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."},
        409: {"model": esquemas.Error, "description": (
            "Ya decidida o decidiéndose ahora, la misma persona ya firmó, o la conversación "
            "está ocupada (cabecera Retry-After)."
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
    """Firma la pausa del hilo (una decisión por operación). Si con esta firma se cumple la
    autoridad que exige (o es un rechazo), reanuda el agente y devuelve
    ``{"estado": "aplicada", "mensaje_cliente"}``; si aún falta otra firma,
    ``{"estado": "esperando_firmas", "firmas", "firmas_necesarias"}``. Con un 4xx no cambia nada."""
    respuesta = await en_hilo_del_agente(
        limitador, ejecutar_decision, servicio, thread_id,
        encargado.encargado_id, encargado.tiendas, cuerpo.como_lista(),
    )
    return esquemas.respuesta_decision(respuesta)
