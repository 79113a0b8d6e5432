"""Avisos entre procesos: ``LISTEN mensajes_hilo`` y reparto a los flujos SSE abiertos.

El servicio hace ``pg_notify('mensajes_hilo', thread_id)`` cuando el agente escribe en un
hilo más tarde (tras la decisión de un encargado o una caducidad), desde cualquier
proceso o servidor. Cada proceso web tiene UNA conexión dedicada (autocommit) que escucha
el canal en un hilo de fondo y despierta a las colas asyncio suscritas a ese hilo; cada
flujo lee entonces sus mensajes nuevos de la base de datos (la fuente de verdad). Un aviso
no lleva datos: si se pierde (reconexión), la relectura periódica y la que sigue a cada
reconexión lo cubren.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from psycopg import sql
from starlette.concurrency import run_in_threadpool

from agente.nucleo.contexto import ContextoCliente
from agente.servicio.mensajes import CANAL_NOTIFY

logger = logging.getLogger(__name__)

RELECTURA_SEGUNDOS = 15.0  # red de seguridad si un aviso se pierde
_ESPERA_RECONEXION = (0.5, 1, 2, 5, 10)


class Oyente:
    """Un hilo con ``LISTEN`` y un reparto por ``thread_id`` a colas asyncio."""

    def __init__(self, url: str, canal: str = CANAL_NOTIFY) -> None:
        self.url = url
        self.canal = canal
        self._suscritos: dict[str, set[asyncio.Queue[None]]] = defaultdict(set)
        self._parar = threading.Event()
        self._hilo: threading.Thread | None = None
        self._bucle: asyncio.AbstractEventLoop | None = None
        self.escuchando = threading.Event()

    # -- en el bucle asyncio ------------------------------------------------------------

    def iniciar(self) -> None:
        self._bucle = asyncio.get_running_loop()
        self._hilo = threading.Thread(target=self._escuchar, name="oyente-mensajes", daemon=True)
        self._hilo.start()

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
        grupos = [self._suscritos.get(thread_id, ())] if thread_id else list(self._suscritos.values())
        for colas in grupos:
            for cola in list(colas):
                if cola.empty():
                    cola.put_nowait(None)

    def parar(self, espera: float = 3.0) -> None:
        self._parar.set()
        if self._hilo is not None:
            self._hilo.join(timeout=espera)

    # -- en el hilo de fondo ------------------------------------------------------------

    def _avisar(self, thread_id: str | None) -> None:
        if self._bucle is not None and not self._bucle.is_closed():
            self._bucle.call_soon_threadsafe(self._repartir, thread_id)

    def _escuchar(self) -> None:
        intento = 0
        while not self._parar.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conexion:
                    conexion.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.canal)))
                    self.escuchando.set()
                    intento = 0
                    self._avisar(None)  # lo escrito mientras no escuchábamos
                    while not self._parar.is_set():
                        for aviso in conexion.notifies(timeout=0.25):
                            self._avisar(aviso.payload)
            except psycopg.Error as exc:
                self.escuchando.clear()
                espera = _ESPERA_RECONEXION[min(intento, len(_ESPERA_RECONEXION) - 1)]
                intento += 1
                logger.warning("LISTEN %s perdido (%s); reintento en %s s", self.canal, exc, espera)
                self._parar.wait(espera)
        self.escuchando.clear()


def _mensaje_json(mensaje: dict[str, Any], estado: str) -> dict[str, Any]:
    return {
        "id": mensaje["id"],
        "rol": mensaje["rol"],
        "texto": mensaje["texto"],
        "fecha": mensaje["creado"].isoformat(),
        "retenido": bool(mensaje.get("retenido")),
        "estado": estado,
    }


async def flujo_mensajes(
    servicio, oyente: Oyente, thread_id: str, ctx: ContextoCliente, desde: int
) -> AsyncIterator[dict[str, str]]:
    """Eventos ``mensaje`` con cada mensaje nuevo del hilo (``id`` > ``desde``)."""

    cola = oyente.suscribir(thread_id)  # antes de leer: ningún aviso cae en el hueco
    try:
        ultimo = desde
        while True:
            historial = await run_in_threadpool(servicio.historial, thread_id, ctx, desde=ultimo)
            for mensaje in historial["mensajes"]:
                ultimo = max(ultimo, mensaje["id"])
                yield {
                    "event": "mensaje",
                    "id": str(mensaje["id"]),
                    "data": json.dumps(_mensaje_json(mensaje, historial["estado"]), ensure_ascii=False),
                }
            try:
                await asyncio.wait_for(cola.get(), timeout=RELECTURA_SEGUNDOS)
            except TimeoutError:
                pass
    finally:
        oyente.baja(thread_id, cola)
