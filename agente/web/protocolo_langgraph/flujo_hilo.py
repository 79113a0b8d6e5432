"""El hilo en vivo (``GET /threads/{id}/stream``): un ``values`` por cada cambio.

Como ``agente.web.infra.eventos.flujo_mensajes``: se suscribe al ``LISTEN`` del proceso antes
de leer, relee el hilo con cada aviso (y cada 15 s por si uno se pierde) y, en cada
relectura, vuelve a comprobar a quien mira (su token, que siga activo, que el hilo siga
siendo suyo o de su tienda). El ``id`` de cada evento es el último mensaje que incluye
(``Last-Event-ID`` al reconectar).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from starlette.concurrency import run_in_threadpool

from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.infra.eventos import RELECTURA_SEGUNDOS, Oyente
from agente.web.protocolo_langgraph import vistas
from agente.web.protocolo_langgraph.ejecutar import hilo_de
from agente.web.protocolo_langgraph.identidad import Quien
from nucleo.errores import ErrorDominio

__all__ = ["flujo_hilo"]

logger = logging.getLogger(__name__)


def _releer(servicio, thread_id: str, quien: Quien) -> dict[str, Any]:
    """El hilo de nuevo, con quien mira comprobado otra vez (``ErrorDominio`` si ya no)."""
    if quien.caduca is not None and datetime.now(UTC) >= quien.caduca:
        raise ErrorDominio("el token ha caducado: vuelve a iniciar sesión")
    if quien.encargado is not None:
        actual = servicio.encargado_activo(quien.encargado.encargado_id)  # 403 si de baja
        quien = Quien(encargado=actual, caduca=quien.caduca)
    else:
        servicio.contexto_de_cliente(quien.ctx.cliente_id)
    return hilo_de(servicio, thread_id, quien)


def _values(fila: dict[str, Any], quien: Quien) -> dict[str, str]:
    valores = vistas.valores(fila)
    pendientes = vistas.interrupciones(fila, quien)
    if pendientes:
        valores["__interrupt__"] = pendientes
    return {"event": "values", "id": str(vistas.ultimo_id(fila)),
            "data": json.dumps(valores, ensure_ascii=False, default=str)}


async def flujo_hilo(servicio, oyente: Oyente, fila: dict[str, Any], quien: Quien,
                     desde: int | None) -> AsyncIterator[dict[str, str]]:
    thread_id = fila["thread_id"]
    cola = oyente.suscribir(thread_id)  # antes de leer: ningún aviso cae en el hueco
    try:
        ultimo = desde if desde is not None else -1  # sin Last-Event-ID: el estado al abrir
        estado = None
        while True:
            try:
                fila = await run_in_threadpool(_releer, servicio, thread_id, quien)
            except ErrorDominio as exc:
                yield {"event": "error", "data": json.dumps(
                    {"error": "Forbidden", "message": exc.mensaje}, ensure_ascii=False)}
                return
            except ERRORES_BD_CAIDA:
                logger.warning("flujo del hilo %s cerrado: la base de datos no responde", thread_id)
                return
            actual = (vistas.ultimo_id(fila), fila.get("interrupt_id"))
            if actual[0] > ultimo or (estado is not None and actual != estado):
                yield _values(fila, quien)
            ultimo, estado = max(ultimo, actual[0]), actual
            try:
                await asyncio.wait_for(cola.get(), timeout=RELECTURA_SEGUNDOS)
            except TimeoutError:
                pass
    finally:
        oyente.baja(thread_id, cola)
