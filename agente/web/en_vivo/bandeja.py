"""La bandeja en vivo (SSE): la lista de pendientes cada vez que cambia, sin sondeos.

Reutiliza el oyente de ``LISTEN`` de los chats (``agente.web.infra.eventos``) suscrito a todos
los avisos: un hilo que pausa, un mensaje retenido, una decisión, una reclamación. Con
cada aviso (o cada ``RELECTURA_SEGUNDOS``, por si uno se pierde) se relee la bandeja y,
si cambió, se emite un evento ``bandeja`` ``{"pendientes", "aprobaciones"}``. El primer
evento sale al abrir el flujo.

Trampa: cada turno de cualquier chat avisa (``mensajes_hilo`` lleva el hilo, no la
tienda). Con cien conversaciones a la vez son decenas de avisos por segundo y una
relectura por aviso y página abierta. Los avisos que llegan en ``AGRUPAR_SEGUNDOS`` tras
el primero cuentan como uno: como mucho una relectura por ese intervalo.

Quien la abrió se vuelve a comprobar en cada relectura (``agente.web.infra.vigencia``): dado de
baja, sin la tienda o con el token caducado, el flujo acaba con un evento ``fin``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator

from starlette.concurrency import run_in_threadpool

from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.esquemas import bandeja as esquemas_bandeja
from agente.web.infra.eventos import RELECTURA_SEGUNDOS, TODOS, Oyente
from agente.web.infra.vigencia import Fin, Vigencia

__all__ = ["AGRUPAR_SEGUNDOS", "flujo_bandeja", "lista_bandeja"]

AGRUPAR_SEGUNDOS = 0.5

logger = logging.getLogger(__name__)


def lista_bandeja(servicio, tiendas: list[str], limite: int = 200, *, firmante=None) -> list[dict]:
    """La bandeja en JSON (fechas como texto), como ``GET /api/aprobaciones`` (``mi_firma``
    de ``firmante``, si se da)."""
    filas = servicio.aprobaciones_pendientes(tiendas, limite, firmante=firmante)
    return [
        esquemas_bandeja.Aprobacion.model_validate(esquemas_bandeja.aprobacion(f, servicio.registro)).model_dump(mode="json")
        for f in filas
    ]


def _leer(servicio, tiendas: list[str], vigencia: Vigencia | None, firmante=None) -> tuple[list[dict], Fin | None]:
    """La bandeja y, DESPUÉS, quien la mira: una tarjeta creada tras una baja implica que la
    baja ya estaba confirmada al comprobar, así que nunca sale."""
    lista = lista_bandeja(servicio, tiendas, firmante=firmante)
    return lista, vigencia.comprobar() if vigencia is not None else None


async def flujo_bandeja(
    servicio, oyente: Oyente, tiendas: list[str], vigencia: Vigencia | None = None, *, firmante=None
) -> AsyncIterator[dict[str, str]]:
    """Eventos ``bandeja``; con ``vigencia``, un ``fin`` y se cierra cuando quien la abrió
    ya no tiene acceso (se comprueba en cada relectura, y al caducar su token). Con
    ``firmante``, cada aprobación dice si su firma contaría (``mi_firma``)."""
    cola = oyente.suscribir(TODOS)  # antes de leer: ningún aviso cae en el hueco
    try:
        anterior = None
        while True:
            try:
                lista, fin = await run_in_threadpool(_leer, servicio, tiendas, vigencia, firmante)
            except ERRORES_BD_CAIDA:
                logger.warning("bandeja en vivo de %s cerrada: la base de datos no responde", ",".join(tiendas))
                return
            if fin is not None:
                yield fin.evento()
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
            espera = RELECTURA_SEGUNDOS if vigencia is None else vigencia.espera(RELECTURA_SEGUNDOS)
            try:
                await asyncio.wait_for(cola.get(), timeout=espera)
            except TimeoutError:
                continue
            await asyncio.sleep(AGRUPAR_SEGUNDOS)
            if not cola.empty():
                cola.get_nowait()  # los de la tanda: ya se leerán ahora
    finally:
        oyente.baja(TODOS, cola)
