"""API de quien firma (encargado, gerente o regional): la bandeja de sus tiendas y las firmas."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response
from sse_starlette import EventSourceResponse

from agente.web.en_vivo.bandeja import flujo_bandeja
from agente.web.en_vivo.directo import ejecutar_decision, en_hebra_del_agente
from agente.web.entrada.auth import CanalActual, EncargadoActual, EncargadoDeEventos
from agente.web.esquemas import bandeja as esquemas_bandeja
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import Limitador, OyenteWeb, ServicioWeb
from nucleo.errores import Prohibido

router = APIRouter(prefix="/api/aprobaciones", tags=["encargado"])
router_sesion = APIRouter(tags=["encargado"])

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "Otra tienda, o firmante de baja."},
}


@router_sesion.get("/api/sesion", summary="Quién ha entrado", response_model=esquemas_bandeja.Firmante,
                   responses=_ERRORES)
def sesion(servicio: ServicioWeb, encargado: EncargadoActual):
    """El firmante del token: su nombre, su rol y las tiendas donde firma, con su nombre
    legible (la cabecera de la bandeja: «Regional · Talavera de la Reina y Madrid-Centro»)."""
    nombres = servicio.nombres_de_tiendas(encargado.tiendas)
    tienda = lambda t: {"id": t, "nombre": nombres.get(t, t)}  # noqa: E731
    return {"id": encargado.encargado_id, "nombre": encargado.nombre, "rol": encargado.rol,
            "tienda": tienda(encargado.tienda) if encargado.tienda else None,
            "tiendas": [tienda(t) for t in encargado.tiendas], "administrador": encargado.administrador}


@router.get("", summary="Bandeja de sus tiendas", response_model=list[esquemas_bandeja.Aprobacion], responses=_ERRORES)
def bandeja(
    servicio: ServicioWeb,
    encargado: EncargadoActual,
    limite: Annotated[int, Query(ge=1, le=200)] = 50,
    tienda: Annotated[str | None, Query(
        description="Solo esta tienda; una de las suyas (un regional, las de su región).")] = None,
):
    """Aprobaciones pendientes de las tiendas del firmante (la suya; un regional, todas las
    de su región), la más antigua primero, con la autoridad que exige cada una, sus firmas y
    si la firma de quien pregunta contaría (``mi_firma``: si no, por qué)."""
    if tienda is not None and tienda not in encargado.tiendas:
        raise Prohibido("solo puedes ver la bandeja de tu tienda" if len(encargado.tiendas) == 1
                        else "solo puedes ver la bandeja de las tiendas de tu región")
    filas = servicio.aprobaciones_pendientes([tienda] if tienda else list(encargado.tiendas), limite,
                                             firmante=encargado)
    return [esquemas_bandeja.aprobacion(f, servicio.registro) for f in filas]


@router.get(
    "/eventos",
    summary="Bandeja en vivo (SSE)",
    responses={**_ERRORES, 200: {"content": {"text/event-stream": {}},
                                 "description": "Eventos «bandeja» con la lista cada vez que cambia; «fin» al perder el acceso."}},
)
async def eventos_bandeja(servicio: ServicioWeb, oyente: OyenteWeb, acceso: EncargadoDeEventos):
    """Flujo SSE: un evento ``bandeja`` ``{"pendientes", "aprobaciones"}`` al abrir y cada vez
    que la bandeja de la tienda cambia (pausa nueva, mensaje retenido, decisión, reclamación,
    un mensaje de la tienda al cliente), lo cambie el proceso que sea. Token solo en la
    cabecera (nunca en la URL, que se registra).

    Quien lo abrió se vuelve a comprobar con cada evento y al menos cada 15 s: si lo dan de
    baja, deja de firmar en una de sus tiendas o caduca su token, llega un último evento
    ``fin`` ``{"motivo": "baja" | "sin_tienda" | "caducado", "detalle"}`` y el flujo se cierra."""
    flujo = flujo_bandeja(servicio, oyente, list(acceso.encargado.tiendas), acceso.vigencia,
                          firmante=acceso.encargado)
    return EventSourceResponse(flujo, ping=15)


@router.get(
    "/{thread_id}",
    summary="Una aprobación pendiente, con su ficha",
    response_model=esquemas_bandeja.Aprobacion,
    responses={**_ERRORES, 404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."}},
)
def una_aprobacion(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """La aprobación pendiente de un hilo de la tienda del encargado, con la transcripción
    (``conversacion``), los últimos 90 días del cliente (``historial_cliente``) y las líneas de
    cada pedido con su estado en el libro de compensaciones (``pedidos``)."""
    return esquemas_bandeja.aprobacion(servicio.ficha_aprobacion(thread_id, firmante=encargado), servicio.registro)


_ERRORES_RECLAMO = {
    **_ERRORES,
    404: {"model": esquemas.Error, "description": "Nada pendiente en ese hilo."},
    409: {"model": esquemas.Error, "description": "La atiende otro encargado, o se está decidiendo."},
}


@router.post("/{thread_id}/reclamar", summary="Lo atiendo yo", response_model=esquemas_bandeja.Reclamo,
             responses=_ERRORES_RECLAMO)
def reclamar(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """Reclama la aprobación (los demás encargados lo ven en su bandeja). Caduca sola a los 15
    minutos (volver a reclamarla la renueva) y desaparece al decidirse."""
    return servicio.reclamar(thread_id, encargado.encargado_id)


@router.delete("/{thread_id}/reclamar", summary="Soltar la reclamación", status_code=204,
               response_class=Response, responses=_ERRORES_RECLAMO)
def soltar(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """Suelta la reclamación propia (sin reclamación, no hace nada). La de otro: 409."""
    servicio.soltar(thread_id, encargado.encargado_id)
    return Response(status_code=204)


@router.post(
    "/{thread_id}/decision",
    summary="Decidir (firmar)",
    response_model=esquemas_bandeja.RespuestaDecision,
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
        422: {"model": esquemas.Error, "description": (
            "Decisión no válida, o las decisiones no casan con las operaciones de la tarjeta "
            "(otro número u otro orden): el detalle dice el orden esperado. No cambia nada."
        )},
    },
)
async def decidir(
    thread_id: str,
    cuerpo: esquemas.DecisionEntrada,
    servicio: ServicioWeb,
    limitador: Limitador,
    encargado: EncargadoActual,
    canal: CanalActual,
):
    """Firma la pausa del hilo (una decisión por operación). Si con esta firma se cumple la
    autoridad que exige (o es un rechazo), reanuda el agente y devuelve
    ``{"estado": "aplicada", "mensaje_cliente"}`` (con la ``nota``, si la hay; los mensajes
    que el cliente escribió mientras esperaba se contestan a continuación); si aún falta otra
    firma, ``{"estado": "esperando_firmas", "firmas", "firmas_necesarias"}``. Con un 4xx no
    cambia nada."""
    respuesta = await en_hebra_del_agente(
        limitador, ejecutar_decision, servicio, thread_id,
        encargado.encargado_id, encargado.tiendas, cuerpo.como_lista(), cuerpo.nota, canal,
    )
    return esquemas_bandeja.respuesta_decision(respuesta)
