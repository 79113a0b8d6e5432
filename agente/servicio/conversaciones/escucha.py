"""Escucha de avisos entre procesos: ``LISTEN mensajes_hilo`` en un hilo de fondo.

El servicio hace ``pg_notify('mensajes_hilo', thread_id)`` (``mensajes.avisar``) cuando
el agente escribe en un hilo más tarde, desde cualquier proceso o servidor. ``Escucha``
tiene UNA conexión dedicada (autocommit, fuera del pool: un ``LISTEN`` retiene su
conexión para siempre) y llama a ``al_avisar(thread_id)`` por cada aviso, y a
``al_avisar(None)`` tras cada (re)conexión: lo escrito mientras no escuchaba. Un aviso no
lleva datos; quien lo recibe relee la base (la fuente de verdad).

Trampa: el hilo espera avisos en tramos de 0,25 s; parar solo con el evento costaba
ese tramo entero en cada parada (cada prueba con la app lo pagaba). ``parar`` le manda un
aviso por un canal propio de esta escucha, que nadie más oye, y el hilo sale enseguida.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable

import psycopg
from psycopg import sql

from agente.servicio.conversaciones.mensajes import CANAL_NOTIFY
from nucleo.esperas import espera_tras

__all__ = ["Escucha"]

NOTIFY_SQL = "SELECT pg_notify(%(canal)s, '')"

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
        self._canal_parar = f"{canal}_parar_{uuid.uuid4().hex[:12]}"

    def iniciar(self) -> None:
        self._hilo = threading.Thread(target=self._escuchar, name="oyente-mensajes", daemon=True)
        self._hilo.start()

    def parar(self, espera: float = 3.0) -> None:
        self._parar.set()
        if self._hilo is None:
            return
        if self.escuchando.is_set() and self._hilo.is_alive():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=2) as conexion:
                    conexion.execute(NOTIFY_SQL, {"canal": self._canal_parar})
            except psycopg.Error:
                pass  # sale al final de su tramo, como antes
        self._hilo.join(timeout=espera)

    def _escuchar(self) -> None:
        intento = 0
        while not self._parar.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conexion:
                    conexion.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.canal)))
                    conexion.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self._canal_parar)))
                    self.escuchando.set()
                    intento = 0
                    self._al_avisar(None)  # lo escrito mientras no escuchábamos
                    while not self._parar.is_set():
                        for aviso in conexion.notifies(timeout=0.25):
                            if self._parar.is_set():
                                break
                            if aviso.channel == self.canal:
                                self._al_avisar(aviso.payload)
            except psycopg.Error as exc:
                self.escuchando.clear()
                intento += 1
                espera = espera_tras(intento, base=_RECONEXION_BASE, maximo=_RECONEXION_MAX)
                logger.warning("LISTEN %s perdido (%s); reintento en %s s", self.canal, exc, espera)
                self._parar.wait(espera)
        self.escuchando.clear()
