"""Las ejecuciones (*runs*): un turno del cliente o una firma, en flujo (SSE) o esperando.

``POST /threads/{id}/runs/stream`` y ``/runs/wait`` hacen lo mismo que la API propia, por
el servicio y como quien llama: un ``input`` de cliente es ``POST
/api/conversaciones/{id}/mensajes`` (retenido si el hilo espera firmas: 409; candado del
hilo; 429 por ritmo) y un ``command.resume`` de quien firma es ``POST
/api/aprobaciones/{id}/decision`` (tienda, rol y límite, dos firmas, caducidad, registro
antes de actuar, una sola aplicación). Cada una deja su run (``GET .../runs/{run_id}``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from agente.web.infra.dependencias import AjustesWeb, Limitador, ServicioWeb
from agente.web.infra.hebras import en_hebra_del_agente
from agente.web.protocolo_langgraph import vistas
from agente.web.protocolo_langgraph.comun import ERRORES, SSE
from agente.web.protocolo_langgraph.ejecutar import (
    Resultado,
    ejecutar,
    eventos,
    hilo_de,
    tipos_de,
    valores_finales,
)
from agente.web.protocolo_langgraph.esquemas import EjecucionEntrada, ErrorProtocolo
from agente.web.protocolo_langgraph.identidad import QuienLlama
from agente.web.protocolo_langgraph.peticion import leer_peticion
from nucleo.errores import HiloNoEncontrado, YaDecidida

__all__ = ["router"]

router = APIRouter(tags=["langgraph"])

_RESPUESTAS = {
    **ERRORES,
    403: {"model": ErrorProtocolo, "description": (
        "Otro cliente u otra tienda; un cliente que reanuda o un firmante que escribe; el "
        "límite de firma de quien firma no cubre el importe; o lo que el producto no admite: "
        "checkpoint (bifurcar), interrupt_before/after, command.goto/update.")},
    404: {"model": ErrorProtocolo, "description": "El hilo o el asistente no existen, o no hay nada que firmar."},
    409: {"model": ErrorProtocolo, "description": (
        "El hilo espera firmas (el mensaje se guarda y se contesta después), ya está decidida, "
        "la misma persona ya firmó, venció el plazo, u otra ejecución tiene el hilo (Retry-After).")},
    429: {"model": ErrorProtocolo, "description": "Demasiados mensajes por minuto (Retry-After)."},
}


async def _ejecutar(thread_id: str, cuerpo: EjecucionEntrada, servicio, ajustes, limitador,
                    quien) -> Resultado:
    if not vistas.es_asistente(cuerpo.assistant_id):
        raise HiloNoEncontrado(f"asistente no encontrado: {cuerpo.assistant_id}")
    antes = await run_in_threadpool(hilo_de, servicio, thread_id, quien)  # 404/403 antes de nada
    operacion = leer_peticion(cuerpo, quien, antes)
    return await en_hebra_del_agente(limitador, ejecutar, servicio, ajustes, thread_id, quien,
                                    operacion, antes, cuerpo.metadata)


@router.post("/threads/{thread_id}/runs/stream", summary="Ejecutar y seguir en flujo (SSE)",
             response_class=Response, responses={**_RESPUESTAS, 200: SSE})
async def ejecutar_en_flujo(thread_id: str, cuerpo: EjecucionEntrada, servicio: ServicioWeb,
                            ajustes: AjustesWeb, limitador: Limitador, quien: QuienLlama):
    """Eventos: ``metadata`` (``run_id``), y según ``stream_mode``: ``messages``
    (``messages-tuple``: ``[mensaje, metadatos]`` por mensaje nuevo), ``messages/complete``
    (``messages``), ``updates`` (``{"model": {"messages"}}`` y ``{"__interrupt__"}``) y
    ``values`` (la transcripción; ``__interrupt__`` si espera firmas, para quien firma)."""
    resultado = await _ejecutar(thread_id, cuerpo, servicio, ajustes, limitador, quien)
    lista = eventos(resultado, quien, tipos_de(cuerpo.stream_mode))

    async def emitir():
        for evento in lista:
            yield evento

    run_id = resultado.run["run_id"]
    return EventSourceResponse(emitir(), headers={
        "Content-Location": f"/langgraph/threads/{thread_id}/runs/{run_id}"})


@router.post("/threads/{thread_id}/runs/wait", summary="Ejecutar y esperar el final",
             responses=_RESPUESTAS)
async def ejecutar_y_esperar(thread_id: str, cuerpo: EjecucionEntrada, servicio: ServicioWeb,
                             ajustes: AjustesWeb, limitador: Limitador, quien: QuienLlama) -> dict[str, Any]:
    """Los ``values`` del final (con ``__interrupt__`` si el hilo espera firmas)."""
    resultado = await _ejecutar(thread_id, cuerpo, servicio, ajustes, limitador, quien)
    return valores_finales(resultado, quien)


def _run(servicio, thread_id: str, run_id: str, quien) -> dict[str, Any]:
    hilo_de(servicio, thread_id, quien)
    fila = servicio.ejecucion_protocolo(thread_id, run_id)
    if fila is None:
        raise HiloNoEncontrado(f"ejecución no encontrada: {run_id}")
    return fila


@router.get("/threads/{thread_id}/runs", summary="Ejecuciones del hilo", responses=ERRORES)
def ejecuciones(thread_id: str, servicio: ServicioWeb, quien: QuienLlama,
                limit: Annotated[int, Query(ge=1, le=1000)] = 10,
                offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0) -> list[dict[str, Any]]:
    hilo_de(servicio, thread_id, quien)
    filas = servicio.ejecuciones_de_hilo(thread_id, limite=limit, desplazamiento=offset)
    return [vistas.ejecucion(f) for f in filas]


@router.get("/threads/{thread_id}/runs/{run_id}", summary="Una ejecución", responses=ERRORES)
def leer_ejecucion(thread_id: str, run_id: str, servicio: ServicioWeb, quien: QuienLlama) -> dict[str, Any]:
    return vistas.ejecucion(_run(servicio, thread_id, run_id, quien))


@router.get("/threads/{thread_id}/runs/{run_id}/join", summary="Esperar a una ejecución", responses=ERRORES)
def unirse(thread_id: str, run_id: str, servicio: ServicioWeb, quien: QuienLlama) -> dict[str, Any]:
    """Los ``values`` del hilo: una ejecución termina dentro de su propia petición, así que
    cuando se ve ya ha acabado (o la está terminando el servicio)."""
    _run(servicio, thread_id, run_id, quien)
    fila = hilo_de(servicio, thread_id, quien)
    valores = vistas.valores(fila)
    pendientes = vistas.interrupciones(fila, quien)
    if pendientes:
        valores["__interrupt__"] = pendientes
    return valores


@router.post("/threads/{thread_id}/runs/{run_id}/cancel", summary="Cancelar (no se admite)",
             status_code=204, response_class=Response, responses={
                 **ERRORES, 409: {"model": ErrorProtocolo, "description": "Siempre: ver el detail."}})
def cancelar(thread_id: str, run_id: str, servicio: ServicioWeb, quien: QuienLlama,
             wait: Annotated[bool, Query()] = False,
             action: Annotated[str, Query(pattern="^(interrupt|rollback)$")] = "interrupt"):
    """Una ejecución acabada no se cancela, y una en marcha tampoco: puede estar moviendo
    dinero, y cortarla a medias lo dejaría para el conciliador (409)."""
    fila = _run(servicio, thread_id, run_id, quien)
    if fila["estado"] in ("pending", "running"):
        raise YaDecidida("no se cancela una ejecución en marcha: puede estar reembolsando o "
                         "cambiando un pedido; espera a que acabe (join)")
    raise YaDecidida(f"la ejecución ya terminó ({fila['estado']}): no hay nada que cancelar")
