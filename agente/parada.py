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
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from agente import embebido

__all__ = ["SENALES", "parada_limpia"]

logger = logging.getLogger(__name__)

SENALES = (signal.SIGTERM, signal.SIGINT)


def _salir(numero: int, _marco) -> None:
    logger.info("señal %s: parando", signal.Signals(numero).name)
    raise SystemExit(0)


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
