"""Avisos entre procesos repartidos a los flujos SSE abiertos de este proceso.

El servicio hace ``pg_notify('mensajes_hilo', thread_id)`` cuando el agente escribe en un
hilo más tarde (tras la decisión de un encargado o una caducidad), desde cualquier
proceso o servidor. Cada proceso web tiene UNA escucha (``Servicio.escucha``, un
``LISTEN`` en un hilo de fondo) que despierta a las colas asyncio suscritas a ese hilo;
cada flujo lee entonces sus mensajes nuevos del servicio (la base es la fuente de
verdad). Un aviso no lleva datos: si se pierde (reconexión), la relectura periódica y la
que sigue a cada reconexión lo cubren. En cada relectura se vuelve a comprobar al cliente
(``agente.web.infra.vigencia``): sin acceso, el flujo acaba con un evento ``fin``.

Mientras el flujo está abierto, el cliente cuenta como conectado a esa conversación
(``Servicio.latido_chat``, un latido cada ``LATIDO_SEGUNDOS``; se borra al cerrarse): lo
que llegue entonces no se le avisa por correo (``agente.notificaciones.avisos_cliente``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

from agente.servicio.fachada import Servicio
from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.infra.vigencia import Fin, Vigencia
from nucleo.contexto import ContextoCliente
from nucleo.errores import HiloNoEncontrado, Prohibido

logger = logging.getLogger(__name__)

__all__ = ["RELECTURA_SEGUNDOS", "TODOS", "Oyente", "flujo_mensajes"]

RELECTURA_SEGUNDOS = 15.0  # red de seguridad si un aviso se pierde
# Presencia del chat: se renueva en cada relectura (como mucho cada 15 s) si pasaron 10;
# cuenta 45 s (agente.notificaciones.avisos_cliente).
LATIDO_SEGUNDOS = 10.0
TODOS = "*"  # quien se suscribe aquí recibe todos los avisos (la bandeja en vivo)


class Oyente:
    """La escucha del servicio y un reparto por ``thread_id`` a colas asyncio."""

    def __init__(self, servicio: Servicio) -> None:
        self._escucha = servicio.escucha(self._avisar)
        self._suscritos: dict[str, set[asyncio.Queue[None]]] = defaultdict(set)
        self._bucle: asyncio.AbstractEventLoop | None = None

    @property
    def escuchando(self):
        return self._escucha.escuchando

    # -- en el bucle asyncio ------------------------------------------------------------

    def iniciar(self) -> None:
        self._bucle = asyncio.get_running_loop()
        self._escucha.iniciar()

    def suscribir(self, thread_id: str) -> asyncio.Queue[None]:
        cola: asyncio.Queue[None] = asyncio.Queue(maxsize=1)  # un aviso pendiente basta
        self._suscritos[thread_id].add(cola)
        return cola

    def baja(self, thread_id: str, cola: asyncio.Queue[None]) -> None:
        colas = self._suscritos.get(thread_id)
        if colas is not None:
            colas.discard(cola)
            if not colas:
                del self._suscritos[thread_id]

    def _repartir(self, thread_id: str | None) -> None:
        if thread_id:
            grupos = [self._suscritos.get(thread_id, ()), self._suscritos.get(TODOS, ())]
        else:
            grupos = list(self._suscritos.values())
        for colas in grupos:
            for cola in list(colas):
                if cola.empty():
                    cola.put_nowait(None)

    def parar(self, espera: float = 3.0) -> None:
        self._escucha.parar(espera)

    # -- en el hilo de la escucha -----------------------------------------------------------

    def _avisar(self, thread_id: str | None) -> None:
        if self._bucle is not None and not self._bucle.is_closed():
            self._bucle.call_soon_threadsafe(self._repartir, thread_id)


def _mensaje_json(mensaje: dict[str, Any], estado: str) -> dict[str, Any]:
    return {
        "id": mensaje["id"],
        "rol": mensaje["rol"],
        "texto": mensaje["texto"],
        "fecha": mensaje["creado"].isoformat(),
        "retenido": bool(mensaje.get("retenido")),
        "autor": mensaje.get("autor"),
        "estado": estado,
    }


def _leer(servicio, thread_id: str, ctx: ContextoCliente, desde: int, vigencia: Vigencia | None):
    """Los mensajes nuevos y, DESPUÉS, quien los pide (como en la bandeja)."""
    try:
        historial = servicio.historial(thread_id, ctx, desde=desde)
    except (Prohibido, HiloNoEncontrado) as exc:  # la conversación ya no es suya
        return None, Fin("sin_acceso", exc.mensaje)
    return historial, vigencia.comprobar() if vigencia is not None else None


async def flujo_mensajes(
    servicio, oyente: Oyente, thread_id: str, ctx: ContextoCliente, desde: int,
    vigencia: Vigencia | None = None,
) -> AsyncIterator[dict[str, str]]:
    """Eventos ``mensaje`` con cada mensaje nuevo del hilo (``id`` > ``desde``); con
    ``vigencia``, un ``fin`` y se cierra cuando el cliente ya no tiene acceso (token
    caducado, cliente o conversación que ya no son suyos)."""

    cola = oyente.suscribir(thread_id)  # antes de leer: ningún aviso cae en el hueco
    presencia = str(uuid.uuid4())
    latido = 0.0
    try:
        ultimo = desde
        while True:
            if time.monotonic() - latido >= LATIDO_SEGUNDOS:
                try:
                    await run_in_threadpool(servicio.latido_chat, presencia, ctx, thread_id)
                    latido = time.monotonic()
                except ERRORES_BD_CAIDA:
                    pass  # la lectura de abajo cierra el flujo
            try:
                historial, fin = await run_in_threadpool(_leer, servicio, thread_id, ctx, ultimo, vigencia)
            except ERRORES_BD_CAIDA:
                # La base cayó con el flujo abierto: se cierra (sin traza); EventSource se
                # reconecta solo con Last-Event-ID y recibe 503 hasta que vuelva.
                logger.warning("flujo de eventos de %s cerrado: la base de datos no responde", thread_id)
                return
            if fin is not None:
                yield fin.evento()
                return
            for mensaje in historial["mensajes"]:
                ultimo = max(ultimo, mensaje["id"])
                yield {
                    "event": "mensaje",
                    "id": str(mensaje["id"]),
                    "data": json.dumps(_mensaje_json(mensaje, historial["estado"]), ensure_ascii=False),
                }
            espera = RELECTURA_SEGUNDOS if vigencia is None else vigencia.espera(RELECTURA_SEGUNDOS)
            try:
                await asyncio.wait_for(cola.get(), timeout=espera)
            except TimeoutError:
                pass
    finally:
        oyente.baja(thread_id, cola)
        if latido:
            # Protegido: al desconectarse el cliente, el flujo se cancela (anyio cancelaría
            # también esta espera) y la presencia quedaría hasta caducar.
            with anyio.CancelScope(shield=True):
                try:
                    await run_in_threadpool(servicio.fin_chat, presencia)
                except Exception:
                    logger.warning("no se pudo borrar la presencia del chat de %s", thread_id)
