"""Los hilos (*threads*): crear, leer, buscar, su estado, su historia y su flujo en vivo.

Un cliente ve y crea solo los suyos; quien firma ve los de las tiendas donde firma (con
la petición de firma en ``interrupts``) y no crea ninguno: las conversaciones son de los
clientes. El estado no se escribe a mano (``POST /threads/{id}/state``: 403).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Response
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from agente.servicio.protocolo.hilos import FiltroHilos
from agente.web.infra.dependencias import OyenteWeb, ServicioWeb
from agente.web.protocolo_langgraph import vistas
from agente.web.protocolo_langgraph.comun import ERRORES, SSE
from agente.web.protocolo_langgraph.ejecutar import hilo_de
from agente.web.protocolo_langgraph.esquemas import (
    EstadoEntrada,
    HiloBusqueda,
    HiloEntrada,
    HistoriaEntrada,
)
from agente.web.protocolo_langgraph.flujo_hilo import flujo_hilo
from agente.web.protocolo_langgraph.identidad import QuienLlama
from nucleo.errores import Prohibido

__all__ = ["router"]

router = APIRouter(tags=["langgraph"])
_ORDEN = {"thread_id": "thread_id", "created_at": "creada", "updated_at": "actualizada",
          "state_updated_at": "actualizada", "status": "actualizada"}
_METADATOS = {"tienda", "cliente_id", "canal"}


@router.post("/threads", summary="Crear un hilo (conversación del cliente)", responses=ERRORES)
def crear_hilo(cuerpo: HiloEntrada, servicio: ServicioWeb, quien: QuienLlama) -> dict[str, Any]:
    """Abre una conversación nueva del cliente del token (como ``POST /api/conversaciones``)."""
    ctx = quien.cliente("abrir una conversación")
    if cuerpo.thread_id is not None:
        raise Prohibido("el id de la conversación lo da el producto: crea el hilo sin thread_id")
    thread_id = servicio.iniciar_conversacion(ctx)
    return vistas.hilo(servicio.hilo_protocolo(thread_id, cliente_id=ctx.cliente_id), quien)


def _filtro(cuerpo: HiloBusqueda, quien) -> FiltroHilos | None:
    """El filtro de la búsqueda, o None si no puede casar con nada."""
    metadatos = dict(cuerpo.metadata or {})
    if metadatos.pop("graph_id", vistas.GRAFO) != vistas.GRAFO:
        return None
    if metadatos.pop("assistant_id", vistas.ASISTENTE_ID) not in (vistas.ASISTENTE_ID, vistas.GRAFO):
        return None
    if set(metadatos) - _METADATOS or cuerpo.status in ("busy", "error"):
        return None  # ningún hilo tiene esos metadatos; busy y error no se guardan
    if any(not isinstance(v, str) for v in metadatos.values()):
        return None
    return FiltroHilos(
        cliente_id=quien.ctx.cliente_id if quien.ctx else None,
        tiendas=None if quien.ctx else tuple(quien.encargado.tiendas),
        ids=tuple(cuerpo.ids) if cuerpo.ids else None,
        tienda=metadatos.get("tienda"), cliente=metadatos.get("cliente_id"), canal=metadatos.get("canal"),
        interrumpido=None if cuerpo.status is None else cuerpo.status == "interrupted",
        orden=_ORDEN.get(cuerpo.sort_by or "updated_at", "actualizada"),
        descendente=(cuerpo.sort_order or "desc") == "desc",
        limite=cuerpo.limit, desplazamiento=cuerpo.offset,
    )


@router.post("/threads/search", summary="Buscar hilos", responses=ERRORES)
def buscar_hilos(cuerpo: HiloBusqueda, servicio: ServicioWeb, quien: QuienLlama) -> list[dict[str, Any]]:
    """Los hilos del cliente, o los de las tiendas de quien firma; ``status: "interrupted"``
    son los que esperan firmas. Metadatos por los que filtrar: ``tienda``, ``cliente_id``,
    ``canal`` (y ``graph_id``). Buscar por ``values`` no se admite (403)."""
    if cuerpo.values:
        raise Prohibido("no se busca por el contenido de las conversaciones: filtra por "
                        "status o por metadata (tienda, cliente_id, canal)")
    filtro = _filtro(cuerpo, quien)
    if filtro is None:
        return []
    return [vistas.hilo(f, quien) for f in servicio.hilos_protocolo(filtro)]


@router.get("/threads/{thread_id}", summary="Un hilo", responses=ERRORES)
def leer_hilo(thread_id: str, servicio: ServicioWeb, quien: QuienLlama) -> dict[str, Any]:
    return vistas.hilo(hilo_de(servicio, thread_id, quien), quien)


@router.get("/threads/{thread_id}/state", summary="Estado del hilo", responses=ERRORES)
def estado(thread_id: str, servicio: ServicioWeb, quien: QuienLlama) -> dict[str, Any]:
    """El estado actual: la transcripción y, si espera firmas, la tarea con su interrupción."""
    return vistas.estado_hilo(hilo_de(servicio, thread_id, quien), quien)


@router.post("/threads/{thread_id}/state", summary="Escribir el estado (no se admite)",
             responses={**ERRORES, 200: {"description": "Nunca: siempre 403."}})
def escribir_estado(thread_id: str, cuerpo: EstadoEntrada, servicio: ServicioWeb, quien: QuienLlama):
    """``update_state`` (con o sin ``as_node``) se rechaza siempre: escribir el estado a mano
    saltaría la política y las firmas."""
    hilo_de(servicio, thread_id, quien)
    detalle = " (tampoco como otro nodo: as_node)" if cuerpo.as_node else ""
    raise Prohibido("el estado de una conversación no se escribe a mano" + detalle + ": un "
                    "cliente escribe un mensaje (input) y quien firma responde a la pausa "
                    "(command.resume)")


@router.post("/threads/{thread_id}/history", summary="Historia del hilo", responses=ERRORES)
def historia(thread_id: str, cuerpo: HistoriaEntrada, servicio: ServicioWeb, quien: QuienLlama) -> list[dict[str, Any]]:
    """Solo el estado actual: los checkpoints pasados no se exponen (nadie sigue desde ellos)."""
    fila = hilo_de(servicio, thread_id, quien)
    if cuerpo.before or cuerpo.checkpoint:
        return []
    return [vistas.estado_hilo(fila, quien)]


@router.get("/threads/{thread_id}/stream", summary="El hilo en vivo (SSE)",
            response_class=Response, responses={**ERRORES, 200: SSE})
async def flujo(
    thread_id: str, servicio: ServicioWeb, oyente: OyenteWeb, quien: QuienLlama,
    ultimo: Annotated[str | None, Header(alias="Last-Event-ID", include_in_schema=False)] = None,
):
    """Un evento ``values`` con el estado al abrir (sin ``Last-Event-ID``) y otro cada vez
    que llega un mensaje nuevo, lo escriba quien lo escriba (la decisión de un encargado,
    una caducidad, otro proceso). Si quien mira pierde el acceso: ``error`` y se cierra."""
    fila = await run_in_threadpool(hilo_de, servicio, thread_id, quien)  # 403/404 antes
    desde = int(ultimo) if ultimo and ultimo.isdigit() else None
    return EventSourceResponse(flujo_hilo(servicio, oyente, fila, quien, desde), ping=15)
