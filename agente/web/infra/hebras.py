"""Los hilos de las ejecuciones del agente de un proceso web.

El límite de ejecuciones a la vez es uno y lo pone el servicio
(``agente.servicio.conversaciones.limite``, ``AGENTE_EJECUCIONES_MAX``): él decide quién
ejecuta, quién espera sitio (``AGENTE_ESPERA_EJECUCION`` como mucho) y quién recibe el 503
``Saturado`` con ``Retry-After``. La web no vuelve a contar: solo reparte hilos, con un
único ``anyio.CapacityLimiter`` (fuera del limitador por defecto de anyio, de 40 hilos, que
usan las rutas síncronas). :class:`HebrasDelAgente` da el doble del máximo: los que ejecutan
y los que esperan sitio en el servicio. Un hilo que espera sitio lo suelta en
``AGENTE_ESPERA_EJECUCION`` segundos como mucho (sitio o 503), así que una petición que
espera hilo lo recibe pronto y es el servicio quien le contesta.

De parada (``agente.web.infra.parada``) no se reparte ningún hilo más: 503 ``NoDisponible``
(también a la que esperaba hilo cuando empezó), y la parada espera a los que están en curso.

Módulo aparte para que ``dependencias`` lo use sin importar ``directo`` (que importa
``disponibilidad``, que importa ``dependencias``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import anyio.to_thread

from agente.web.infra.parada import DETALLE_PARANDO, Parada
from nucleo.errores import NoDisponible

__all__ = ["HebrasDelAgente", "en_hebra_del_agente"]


class HebrasDelAgente:
    """Hilos para las ejecuciones del agente de un proceso web (ver el docstring del módulo).

    No es otro límite de ejecuciones (ese es ``LimiteEjecuciones`` del servicio): es la
    reserva de hilos, ``2 * maximo``, con una regla de la web. Con ``parada``, ya de parada no
    deja empezar ejecuciones nuevas ni las que esperaban hilo (503 ``NoDisponible``);
    ``borrowed_tokens`` cuenta los hilos en uso, para que la parada los espere.
    """

    def __init__(self, *, maximo: int, parada: Parada | None = None) -> None:
        if maximo < 1:
            raise ValueError("maximo >= 1")
        self.hilos = 2 * maximo
        self._parada = parada
        self._limitador = anyio.CapacityLimiter(self.hilos)

    @property
    def borrowed_tokens(self) -> int:
        return self._limitador.borrowed_tokens

    def _comprobar_parada(self) -> None:
        if self._parada is not None and self._parada.parando:
            raise NoDisponible(DETALLE_PARANDO)

    def _en_hilo(self, funcion: Callable[..., Any], *args: Any) -> Any:
        self._comprobar_parada()  # esperaba hilo cuando empezó la parada: trabajo nuevo
        return funcion(*args)

    async def ejecutar(self, funcion: Callable[..., Any], *args: Any) -> Any:
        self._comprobar_parada()
        return await anyio.to_thread.run_sync(partial(self._en_hilo, funcion, *args),
                                              limiter=self._limitador)


async def en_hebra_del_agente(hilos: HebrasDelAgente, funcion: Callable[..., Any], *args: Any) -> Any:
    """Ejecuta ``funcion`` en uno de los hilos del agente (el 503 por exceso es del servicio)."""
    return await hilos.ejecutar(funcion, *args)
