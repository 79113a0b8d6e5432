"""Parada limpia de los procesos largos (``agente serve``, ``agente demo``).

uvicorn atrapa SIGTERM y SIGINT, deja terminar lo que está en marcha y, al acabar,
vuelve a lanzar la señal con el manejador que hubiera antes. Con el de serie, SIGTERM
mata el proceso sin pasar por ``finally`` ni ``atexit`` y el PostgreSQL embebido se
queda encendido (con un pid obsoleto en su fichero). Aquí las dos señales se convierten
en una salida normal (``SystemExit(0)``), también si llegan antes de que arranque uvicorn
(durante las migraciones), y al final se suelta el embebido: el orden es web vaciada,
pool cerrado, PostgreSQL parado.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from agente.bd import embebido

__all__ = ["SENALES", "parada_limpia"]

logger = logging.getLogger(__name__)

SENALES = (signal.SIGTERM, signal.SIGINT)
ESPERA_HILOS = 2.0  # tras el plazo de la web, lo que se espera a hilos aún ocupados

_senal = threading.Event()


def _salir(numero: int, _marco) -> None:
    _senal.set()
    logger.info("señal %s: parando", signal.Signals(numero).name)
    raise SystemExit(0)


def _cortar_hilos_colgados() -> None:
    """Tras una señal, la salida no espera sin límite a un hilo ocupado (una llamada al
    modelo que no vuelve): su trabajo ya está cortado y lo terminará el conciliador."""
    ocupados = [h for h in threading.enumerate()
                if h is not threading.current_thread() and not h.daemon and h.is_alive()]
    for hilo in ocupados:
        hilo.join(ESPERA_HILOS / max(1, len(ocupados)))
    quedan = [h.name for h in ocupados if h.is_alive()]
    if quedan:
        logger.warning("salida con %s hilo(s) aún ocupados (%s): se cortan", len(quedan), ", ".join(quedan))
        logging.shutdown()
        os._exit(0)


@contextmanager
def parada_limpia() -> Iterator[None]:
    """Mientras dura, SIGTERM/SIGINT salen por el camino normal; al salir suelta el embebido
    que se abrió dentro (no otro que el proceso ya tuviera: las pruebas invocan la CLI dentro
    de su propio proceso)."""
    previos = embebido.abiertos()
    anteriores = {s: signal.signal(s, _salir) for s in SENALES}
    try:
        yield
    finally:
        try:
            embebido.soltar(excepto=previos)
        finally:
            for senal, manejador in anteriores.items():
                signal.signal(senal, manejador)
        if _senal.is_set():
            _cortar_hilos_colgados()
