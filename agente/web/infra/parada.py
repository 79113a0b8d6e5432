"""Parada ordenada de un proceso web: no empezar trabajo nuevo, dejar acabar el que hay.

Con SIGTERM (o Ctrl-C) uvicorn cierra el socket (ninguna conexión nueva), cierra las
keep-alive ociosas y espera a que terminen las peticiones en curso hasta
``AGENTE_ESPERA_PARADA`` segundos (``timeout_graceful_shutdown``); después llega el
``lifespan`` de parada. Lo que añade este módulo:

- ``Parada.vigilar``: se entera de la señal al momento (mira ``should_exit`` del servidor
  uvicorn, al que apunta el manejador de SIGTERM: la misma técnica que usa sse-starlette)
  y marca la app como «parando»: ``/readyz`` da 503 y las tareas periódicas no empiezan
  otra pasada;
- ``HebrasDelAgente`` (``agente.web.infra.hebras``) lo consulta: rechaza con 503 (``NoDisponible``)
  las ejecuciones que aún esperaban hilo cuando empezó la parada (trabajo nuevo, que no se
  empieza);
- ``Parada.esperar``: en el ``lifespan`` de parada, espera (hasta el mismo plazo, contado
  desde la señal) a las ejecuciones que no tienen conexión que las retenga (un turno en
  directo cuyo cliente se fue) y a la pasada de tareas en curso, antes de cerrar el pool.

Lo que no acabe en el plazo queda cortado a medias: lo termina el conciliador en el
siguiente arranque (``periodicas.arrancar(..., al_arrancar=True)``), sin pagar dos veces
(reembolsos y sustituciones son idempotentes por ``tool_call_id``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Protocol

import anyio
import anyio.to_thread

__all__ = ["DETALLE_PARANDO", "Parada"]

logger = logging.getLogger(__name__)

DETALLE_PARANDO = "el servidor se está parando: vuelve a intentarlo en unos segundos"


class _ConFichas(Protocol):
    @property
    def borrowed_tokens(self) -> int: ...


def _servidor_uvicorn():
    manejador = signal.getsignal(signal.SIGTERM)
    servidor = getattr(manejador, "__self__", None)
    return servidor if hasattr(servidor, "should_exit") else None


class Parada:
    """El estado de parada de una app (uno por proceso web)."""

    def __init__(self, *, espera: float) -> None:
        if espera < 0:
            raise ValueError("la espera de parada no puede ser negativa")
        self.espera = espera
        self.parando = False
        self.inicio: float | None = None
        self._al_parar: list[Callable[[], None]] = []

    def al_parar(self, accion: Callable[[], None]) -> None:
        self._al_parar.append(accion)

    def marcar(self, motivo: str) -> None:
        if self.parando:
            return
        self.parando, self.inicio = True, time.monotonic()
        logger.info("parando (%s): no se empieza trabajo nuevo; plazo %s s", motivo, self.espera)
        for accion in self._al_parar:
            accion()

    async def vigilar(self, cada: float = 0.1) -> None:
        """Tarea de fondo: marca la parada en cuanto uvicorn recibe la señal."""
        while not self.parando:
            servidor = _servidor_uvicorn()
            if servidor is not None and servidor.should_exit:
                self.marcar("señal recibida")
                return
            await asyncio.sleep(cada)

    def restante(self) -> float:
        inicio = self.inicio if self.inicio is not None else time.monotonic()
        return max(0.0, inicio + self.espera - time.monotonic())

    async def esperar(self, limitador: _ConFichas, hilos: list[threading.Thread]) -> None:
        """Espera, dentro del plazo, a las ejecuciones en curso y a los hilos dados.

        ``limitador``: cualquiera con ``borrowed_tokens`` (las ejecuciones en curso), p. ej.
        los ``HebrasDelAgente`` de la web.
        """
        self.marcar("fin del servidor")
        while limitador.borrowed_tokens and self.restante() > 0:
            await asyncio.sleep(0.05)
        for hilo in hilos:
            await anyio.to_thread.run_sync(hilo.join, self.restante())
        if limitador.borrowed_tokens:
            logger.warning("%s ejecución(es) del agente cortadas por la parada: las terminará el "
                           "conciliador al arrancar", limitador.borrowed_tokens)
