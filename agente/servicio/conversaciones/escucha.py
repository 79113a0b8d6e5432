"""Escucha de avisos entre procesos: ``LISTEN mensajes_hilo`` en un hilo de fondo.

El servicio hace ``pg_notify('mensajes_hilo', thread_id)`` (``mensajes.avisar``) cuando
el agente escribe en un hilo más tarde, desde cualquier proceso o servidor. ``Escucha``
tiene UNA conexión dedicada (autocommit, fuera del pool: un ``LISTEN`` retiene su
conexión para siempre) y llama a ``al_avisar(thread_id)`` por cada aviso, y a
``al_avisar(None)`` tras cada (re)conexión: lo escrito mientras no escuchaba. Un aviso no
lleva datos; quien lo recibe relee la base (la fuente de verdad).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg
from psycopg import sql

from agente.servicio.conversaciones.mensajes import CANAL_NOTIFY
from nucleo.esperas import espera_tras

__all__ = ["Escucha"]

logger = logging.getLogger(__name__)

# La reconexión del LISTEN: 0,5 s, 1, 2, 4, 8 y después cada 10 s.
_RECONEXION_BASE, _RECONEXION_MAX = 0.5, 10.0


class Escucha:
    def __init__(
        self,
        *,
        url: str,
        al_avisar: Callable[[str | None], None],
        canal: str = CANAL_NOTIFY,
    ) -> None:
        if not url:
            raise ValueError("Escucha necesita la URL de la base de datos")
        self.url = url
        self.canal = canal
        self._al_avisar = al_avisar
        self._parar = threading.Event()
        self._hilo: threading.Thread | None = None
        self.escuchando = threading.Event()

    def iniciar(self) -> None:
        self._hilo = threading.Thread(target=self._escuchar, name="oyente-mensajes", daemon=True)
        self._hilo.start()

    def parar(self, espera: float = 3.0) -> None:
        self._parar.set()
        if self._hilo is not None:
            self._hilo.join(timeout=espera)

    def _escuchar(self) -> None:
        intento = 0
        while not self._parar.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conexion:
                    conexion.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.canal)))
                    self.escuchando.set()
                    intento = 0
                    self._al_avisar(None)  # lo escrito mientras no escuchábamos
                    while not self._parar.is_set():
                        for aviso in conexion.notifies(timeout=0.25):
                            self._al_avisar(aviso.payload)
            except psycopg.Error as exc:
                self.escuchando.clear()
                intento += 1
                espera = espera_tras(intento, base=_RECONEXION_BASE, maximo=_RECONEXION_MAX)
                logger.warning("LISTEN %s perdido (%s); reintento en %s s", self.canal, exc, espera)
                self._parar.wait(espera)
        self.escuchando.clear()
