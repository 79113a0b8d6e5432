"""La bandeja en vivo (SSE): la lista de pendientes cada vez que cambia, sin sondeos.

Reutiliza el oyente de ``LISTEN`` de los chats (``agente.web.eventos``) suscrito a todos
los avisos: un hilo que pausa, un mensaje retenido, una decisión, una reclamación. Con
cada aviso (o cada ``RELECTURA_SEGUNDOS``, por si uno se pierde) se relee la bandeja y,
si cambió, se emite un evento ``bandeja`` ``{"pendientes", "aprobaciones"}``. El primer
evento sale al abrir el flujo.

Trampa: cada turno de cualquier chat avisa (``mensajes_hilo`` lleva el hilo, no la
tienda). Con cien conversaciones a la vez son decenas de avisos por segundo y una
relectura por aviso y página abierta. Los avisos que llegan en ``AGRUPAR_SEGUNDOS`` tras
el primero cuentan como uno: como mucho una relectura por ese intervalo.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator

from starlette.concurrency import run_in_threadpool

from agente.nucleo.bd import ERRORES_BD_CAIDA
from agente.web import esquemas
from agente.web.eventos import RELECTURA_SEGUNDOS, TODOS, Oyente

__all__ = ["AGRUPAR_SEGUNDOS", "flujo_bandeja", "lista_bandeja"]

AGRUPAR_SEGUNDOS = 0.5

logger = logging.getLogger(__name__)


def lista_bandeja(servicio, tiendas: list[str], limite: int = 200) -> list[dict]:
    """La bandeja en JSON (fechas como texto), como ``GET /api/aprobaciones``."""
    filas = servicio.aprobaciones_pendientes(tiendas, limite)
    return [
        esquemas.Aprobacion.model_validate(esquemas.aprobacion(f, servicio.registro)).model_dump(mode="json")
        for f in filas
    ]


async def flujo_bandeja(servicio, oyente: Oyente, tiendas: list[str]) -> AsyncIterator[dict[str, str]]:
    cola = oyente.suscribir(TODOS)  # antes de leer: ningún aviso cae en el hueco
    try:
        anterior = None
        while True:
            try:
                lista = await run_in_threadpool(lista_bandeja, servicio, tiendas)
            except ERRORES_BD_CAIDA:
                logger.warning("bandeja en vivo de %s cerrada: la base de datos no responde", ",".join(tiendas))
                return
            # La espera cambia cada segundo: no cuenta como cambio (la página la cuenta sola).
            huella = hashlib.sha256(json.dumps(
                [{k: v for k, v in a.items() if k != "espera_segundos"} for a in lista],
                sort_keys=True).encode()).hexdigest()
            if huella != anterior:
                anterior = huella
                yield {"event": "bandeja",
                       "data": json.dumps({"pendientes": len(lista), "aprobaciones": lista},
                                          ensure_ascii=False)}
            try:
                await asyncio.wait_for(cola.get(), timeout=RELECTURA_SEGUNDOS)
            except TimeoutError:
                continue
            await asyncio.sleep(AGRUPAR_SEGUNDOS)
            if not cola.empty():
                cola.get_nowait()  # los de la tanda: ya se leerán ahora
    finally:
        oyente.baja(TODOS, cola)
