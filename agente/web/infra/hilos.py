"""Los hilos de las ejecuciones del agente de un proceso web.

El límite de ejecuciones a la vez lo pone el servicio (``agente.servicio.conversaciones.limite``,
``AGENTE_EJECUCIONES_MAX``); la web solo necesita hilos de sobra para llegar a él:
:class:`HilosDelAgente` da el doble del máximo (los que ejecutan y los que esperan sitio en
el servicio), fuera del limitador por defecto de anyio (40 hilos). Conseguir un hilo también
espera como mucho ``AGENTE_ESPERA_EJECUCION``: ninguna petición espera sin límite; por
encima, 503 ``Saturado``. De parada (``agente.web.infra.parada``) no se reparte ningún hilo
más: 503 ``NoDisponible``, y la parada espera a los que están en curso.

Módulo aparte para que ``dependencias`` lo use sin importar ``directo`` (que importa
``disponibilidad``, que importa ``dependencias``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import anyio.to_thread

from agente.nucleo.errores import NoDisponible, Saturado
from agente.web.infra.parada import DETALLE_PARANDO, Parada

__all__ = ["HilosDelAgente", "en_hilo_del_agente"]


class HilosDelAgente:
    """Hilos para las ejecuciones del agente de un proceso web (ver el docstring del módulo).

    No es otro límite de ejecuciones (ese es ``LimiteEjecuciones`` del servicio): es el tamaño
    de la reserva de hilos, con dos reglas de la web. Con ``parada``, ya de parada no deja
    empezar ejecuciones nuevas ni las que esperaban hilo (503 ``NoDisponible``);
    ``borrowed_tokens`` cuenta las que están en curso, para que la parada las espere.
    """

    def __init__(self, *, maximo: int, espera: float, parada: Parada | None = None) -> None:
        if maximo < 1 or espera < 0:
            raise ValueError("maximo >= 1 y espera >= 0")
        self.espera = espera
        self.hilos = 2 * maximo
        self._parada = parada
        self._limitador = anyio.CapacityLimiter(self.hilos)
        # anyio toma otra ficha por hilo: de una reserva igual (la de arriba ya acota), no de
        # la de anyio por defecto (40 hilos).
        self._hilos = anyio.CapacityLimiter(self.hilos)

    @property
    def borrowed_tokens(self) -> int:
        return self._limitador.borrowed_tokens

    def _comprobar_parada(self) -> None:
        if self._parada is not None and self._parada.parando:
            raise NoDisponible(DETALLE_PARANDO)

    async def ejecutar(self, funcion: Callable[..., Any], *args: Any) -> Any:
        self._comprobar_parada()
        try:
            with anyio.fail_after(self.espera):
                await self._limitador.acquire()
        except TimeoutError:
            raise Saturado(
                "hay demasiadas conversaciones en curso; inténtalo en unos segundos",
                reintentar_en=max(1, math.ceil(self.espera / 2)),
            ) from None
        try:
            self._comprobar_parada()  # esperaba hilo cuando empezó la parada: trabajo nuevo
            return await anyio.to_thread.run_sync(partial(funcion, *args), limiter=self._hilos)
        finally:
            self._limitador.release()


async def en_hilo_del_agente(hilos: HilosDelAgente, funcion: Callable[..., Any], *args: Any) -> Any:
    """Ejecuta ``funcion`` en uno de los hilos del agente (espera acotada; 503 si no hay)."""
    return await hilos.ejecutar(funcion, *args)
