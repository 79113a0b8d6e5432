"""API del cliente: conversaciones, mensajes (JSON o en directo) y eventos posteriores."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from agente.web.en_vivo.directo import ejecutar_turno, en_hebra_del_agente, turno_en_directo
from agente.web.entrada.auth import ClienteActual, ClienteDeEventos, VigenciaCliente
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import AjustesWeb, Limitador, OyenteWeb, ServicioWeb
from agente.web.infra.eventos import flujo_mensajes
from nucleo.contexto import ContextoCliente

router = APIRouter(prefix="/api/conversaciones", tags=["cliente"])


def limite_mensajes(servicio: ServicioWeb, ajustes: AjustesWeb, ctx: ClienteActual) -> ContextoCliente:
    """Dependencia de la ruta de mensajes: el cliente autenticado, si no supera su ritmo (429)."""
    servicio.comprobar_ritmo(ctx.cliente_id, ajustes.mensajes_por_minuto)
    return ctx


ClienteConRitmo = Annotated[ContextoCliente, Depends(limite_mensajes)]

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "La conversación es de otro cliente."},
    404: {"model": esquemas.Error, "description": "La conversación no existe."},
}


@router.post("", summary="Abrir una conversación", status_code=201, response_model=esquemas.ConversacionCreada, responses={401: _ERRORES[401]})
def crear_conversacion(servicio: ServicioWeb, ctx: ClienteActual):
    """Abre una conversación nueva del cliente del token."""
    return {"thread_id": servicio.iniciar_conversacion(ctx)}


@router.post(
    "/{thread_id}/mensajes",
    summary="Enviar un mensaje (JSON o en directo)",
    response_model=esquemas.RespuestaTurno,
    responses={
        **_ERRORES,
        200: {"content": {"text/event-stream": {}}, "description": "Respuesta (JSON o en directo)."},
        409: {"model": esquemas.Error, "description": (
            "Hay una aprobación pendiente (el mensaje se guarda), o la conversación está "
            "ocupada con otra operación ahora mismo (no se guarda; cabecera Retry-After)."
        )},
        413: {"model": esquemas.Error, "description": "Cuerpo demasiado grande."},
        422: {"model": esquemas.Error, "description": "Texto vacío o de más de 2000 caracteres."},
        429: {"model": esquemas.Error, "description": "Demasiados mensajes por minuto."},
    },
)
async def enviar_mensaje(
    thread_id: str,
    cuerpo: esquemas.MensajeEntrada,
    request: Request,
    servicio: ServicioWeb,
    limitador: Limitador,
    ctx: ClienteConRitmo,
    vigencia: VigenciaCliente,
):
    """Un turno del cliente. Con ``Accept: text/event-stream`` la respuesta llega en directo:
    eventos ``token``, ``descartar`` y, al final, ``estado`` (ver ``agente.web.en_vivo.directo``); si
    el token caduca a mitad, un último ``fin`` (el turno sigue y queda en la conversación)."""
    if "text/event-stream" in request.headers.get("accept", ""):
        flujo = await turno_en_directo(
            servicio, thread_id, cuerpo.texto, ctx, esquemas.respuesta_turno, limitador, vigencia
        )
        return EventSourceResponse(flujo, ping=15)
    respuesta = await en_hebra_del_agente(
        limitador, ejecutar_turno, servicio, thread_id, cuerpo.texto, ctx
    )
    return esquemas.respuesta_turno(respuesta)


@router.get("/{thread_id}", summary="Leer la conversación", response_model=esquemas.Conversacion, responses=_ERRORES)
def leer_conversacion(thread_id: str, servicio: ServicioWeb, ctx: ClienteActual):
    """Lo que el cliente ve de su conversación: sus mensajes y las respuestas, con fecha."""
    return esquemas.conversacion(servicio.historial(thread_id, ctx))


@router.get(
    "/{thread_id}/eventos",
    summary="Eventos de la conversación (SSE)",
    responses={**_ERRORES, 200: {"content": {"text/event-stream": {}}, "description": "Eventos «mensaje»; «fin» al perder el acceso."}},
)
async def eventos(
    thread_id: str,
    servicio: ServicioWeb,
    oyente: OyenteWeb,
    acceso: ClienteDeEventos,
    desde: Annotated[int | None, Query(ge=0, description="Último id de mensaje que ya tienes.")] = None,
    ultimo_evento: Annotated[str | None, Header(alias="Last-Event-ID", include_in_schema=False)] = None,
):
    """Flujo SSE: un evento ``mensaje`` por cada mensaje nuevo del hilo, incluido lo que el
    agente escribe más tarde (tras la decisión de un encargado o una caducidad), lo escriba
    el proceso o servidor que sea. Token solo en la cabecera (nunca en la URL, que se registra).

    El cliente se vuelve a comprobar con cada evento y al menos cada 15 s: al caducar su
    token (o si la conversación deja de ser suya) llega un último evento ``fin``
    ``{"motivo": "caducado" | "sin_acceso" | "sin_tienda", "detalle"}`` y el flujo se cierra."""
    ctx = acceso.ctx
    historial = await run_in_threadpool(servicio.historial, thread_id, ctx)  # 403/404 antes de abrir
    if ultimo_evento and ultimo_evento.isdigit():
        desde = int(ultimo_evento)
    if desde is None:
        desde = max((m["id"] for m in historial["mensajes"]), default=0)
    flujo = flujo_mensajes(servicio, oyente, thread_id, ctx, desde, acceso.vigencia)
    return EventSourceResponse(flujo, ping=15)
