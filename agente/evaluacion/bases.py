"""Una base nueva por intento: clon (``CREATE DATABASE ... TEMPLATE``) de una plantilla
migrada y con la demo, como hacen las pruebas. El rol de la URL necesita ``CREATEDB``.

Sin ``plantilla`` se crea una propia al entrar y se borra al salir; las bases de los
intentos se borran al terminar cada uno.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agente.bd.migraciones import migrar
from agente.bd.pool import KWARGS_CONEXION, borrar_base
from agente.demo.carga import cargar_demo

__all__ = ["Bases"]


def _url_de(url: str, base: str) -> str:
    datos = conninfo_to_dict(url)
    datos["dbname"] = base
    return make_conninfo(**datos)


class Bases:
    """Plantilla y clones en el servidor de ``url`` (``with Bases(url=...) as bases:``)."""

    def __init__(self, *, url: str, plantilla: str | None = None) -> None:
        if not url:
            raise ValueError("Bases necesita la URL de un servidor PostgreSQL")
        self.url = url
        self.plantilla = plantilla
        self._propia = plantilla is None

    def _admin(self, orden: sql.Composable) -> None:
        with psycopg.connect(self.url, autocommit=True) as conexion:
            conexion.execute(orden)

    def _borrar(self, nombre: str) -> None:
        borrar_base(self.url, nombre)

    def __enter__(self) -> Bases:
        if self._propia:
            self.plantilla = f"evaluacion_plantilla_{uuid.uuid4().hex[:8]}"
            self._admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.plantilla)))
            url = _url_de(self.url, self.plantilla)
            migrar(url)
            with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
                cargar_demo(conexion)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._propia and self.plantilla:
            self._borrar(self.plantilla)

    @contextmanager
    def intento(self) -> Iterator[str]:
        """La URL de una base nueva, clon de la plantilla; se borra al salir."""
        nombre = f"evaluacion_{uuid.uuid4().hex[:12]}"
        self._admin(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(nombre), sql.Identifier(self.plantilla)))
        try:
            yield _url_de(self.url, nombre)
        finally:
            self._borrar(nombre)
