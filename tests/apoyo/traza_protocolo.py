"""Lo que el cliente manda a PostgreSQL por una conexión, leído del protocolo (PQtrace de libpq).

Lo usan las pruebas de la política (cuántas sentencias cuesta un veredicto) y
``bench.politica``, que lo importa de aquí (bench depende de ``tests/apoyo``, nunca al revés).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.pq import Trace
from psycopg_pool import ConnectionPool

__all__ = ["TrazaProtocolo", "trazar_pool"]


class TrazaProtocolo:
    """Cuenta lo que el cliente envía a PostgreSQL por una conexión (PQtrace de libpq).

    ``sentencias``: mensajes Execute (protocolo extendido) y Query (simple).
    ``viajes``: mensajes Sync y Query; cada uno espera la respuesta del servidor.
    Se lee del cable, así que cuenta también BEGIN/COMMIT o preparaciones ocultas.
    """

    def __init__(self, conexion: psycopg.Connection) -> None:
        self.conexion = conexion
        self.sentencias = 0
        self.viajes = 0
        self.mensajes: list[str] = []
        self._ruta: Path | None = None

    def empezar(self) -> None:
        descriptor, ruta = tempfile.mkstemp(prefix="traza-pq-", suffix=".txt")
        os.close(descriptor)
        self._ruta = Path(ruta)
        # libpq hace fdopen() del descriptor: es suyo mientras dure la traza.
        self._fd = os.open(ruta, os.O_WRONLY | os.O_APPEND)
        self.conexion.pgconn.trace(self._fd)
        self.conexion.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)

    def parar(self) -> None:
        assert self._ruta is not None, "parar() sin empezar()"
        self.conexion.pgconn.untrace()  # vacía el búfer del FILE de libpq
        os.close(self._fd)
        texto = self._ruta.read_text(encoding="utf-8", errors="replace")
        self._ruta.unlink(missing_ok=True)
        self.mensajes = [
            campos[2].strip()
            for campos in (linea.split("\t") for linea in texto.splitlines())
            if len(campos) >= 3 and campos[0] == "F"
        ]
        self.sentencias = sum(m in ("Execute", "Query") for m in self.mensajes)
        self.viajes = sum(m in ("Sync", "Query") for m in self.mensajes)

    def __enter__(self) -> TrazaProtocolo:
        self.empezar()
        return self

    def __exit__(self, *exc: object) -> None:
        self.parar()


@contextmanager
def trazar_pool(pool: ConnectionPool) -> Iterator[TrazaProtocolo]:
    """Traza la única conexión de un pool de ``max_size=1`` mientras dura el bloque."""
    if pool.max_size != 1:
        raise ValueError("trazar_pool necesita un pool de una sola conexión (max_size=1)")
    with pool.connection() as conexion:
        traza = TrazaProtocolo(conexion)
        traza.empezar()
    try:
        yield traza
    finally:
        with pool.connection() as conexion:
            if conexion is not traza.conexion:
                raise RuntimeError("el pool cambió de conexión durante la traza")
            traza.parar()
