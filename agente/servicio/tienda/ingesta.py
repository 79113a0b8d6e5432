"""La ingesta del back office de la tienda: lo que llaman la API (``IngestaTienda``, sobre el
pool del servicio) y la CLI (las funciones de módulo, con una conexión corta y sin
construir el agente).

Cada registro va en su transacción; un lote, por tramos (``lotes``). La tienda de cada
registro es la de la clave (API) o la de ``--tienda`` (CLI): nunca la del cuerpo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import psycopg
from psycopg_pool import ConnectionPool

from agente.servicio.tienda import aplicar, claves, lotes
from agente.servicio.tienda.aplicar import Aplicado
from agente.servicio.tienda.claves import ClaveApi, ClaveCreada
from agente.servicio.tienda.lotes import Fallo, InformeLote
from agente.servicio.tienda.registros import (
    CambioEstado,
    DatosCliente,
    DatosPedido,
    DatosProducto,
    DatosStock,
)
from nucleo.errores import ErrorDominio, TiendaNoEncontrada

__all__ = [
    "IngestaTienda",
    "crear_clave",
    "importar",
    "leer_lineas",
    "listar_claves",
    "revocar_clave",
]

EXISTE_TIENDA_SQL = "SELECT EXISTS (SELECT 1 FROM tiendas WHERE id = %(tienda)s) AS hay"


class IngestaTienda:
    """Las operaciones de la API de ingesta sobre el pool del servicio."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def autenticar(self, valor: str | None, alcance: str | None) -> ClaveApi:
        with self.pool.connection() as conexion:
            return claves.autenticar(conexion, valor, alcance)

    def _uno(self, funcion, clave: ClaveApi, id_: str, datos) -> Aplicado:
        with self.pool.connection() as conexion, conexion.transaction(), conexion.cursor() as cur:
            return funcion(cur, clave.tienda, id_, datos, clave.prefijo)

    def cliente(self, clave: ClaveApi, id_: str, datos: DatosCliente) -> Aplicado:
        return self._uno(aplicar.aplicar_cliente, clave, id_, datos)

    def producto(self, clave: ClaveApi, sku: str, datos: DatosProducto) -> Aplicado:
        return self._uno(aplicar.aplicar_producto, clave, sku, datos)

    def stock(self, clave: ClaveApi, sku: str, datos: DatosStock) -> Aplicado:
        return self._uno(aplicar.aplicar_stock, clave, sku, datos)

    def pedido(self, clave: ClaveApi, id_: str, datos: DatosPedido) -> Aplicado:
        return self._uno(aplicar.aplicar_pedido, clave, id_, datos)

    def estado(self, clave: ClaveApi, id_: str, cambio: CambioEstado) -> Aplicado:
        return self._uno(aplicar.aplicar_estado, clave, id_, cambio)

    def lote(self, clave: ClaveApi, lineas: Iterable[bytes | str]) -> InformeLote:
        with self.pool.connection() as conexion:
            return lotes.procesar(conexion, lineas, tienda=clave.tienda, alcances=clave.alcances,
                                  clave=clave.prefijo, max_fallos=1000)


def crear_clave(conexion: psycopg.Connection, *, tienda: str, nombre: str, alcances: list[str],
                creada_por: str = "cli") -> ClaveCreada:
    return claves.crear(conexion, tienda=tienda, nombre=nombre, alcances=alcances, creada_por=creada_por)


def listar_claves(conexion: psycopg.Connection, tienda: str | None = None) -> list[ClaveApi]:
    return claves.listar(conexion, tienda)


def revocar_clave(conexion: psycopg.Connection, prefijo: str) -> ClaveApi:
    return claves.revocar(conexion, prefijo)


def leer_lineas(ruta: Path) -> Iterator[bytes]:
    """Las líneas del fichero una a una (``-``: la entrada estándar), sin cargarlo entero."""
    import sys

    if str(ruta) == "-":
        yield from sys.stdin.buffer
        return
    try:
        with open(ruta, "rb") as fichero:
            yield from fichero
    except OSError as exc:
        raise ErrorDominio(f"no se puede leer {ruta}: {exc.strerror}") from None


def importar(conexion: psycopg.Connection, ruta: Path, *, tienda: str,
             al_fallar: Callable[[Fallo], None] | None = None) -> InformeLote:
    """``agente importar FICHERO``: todos los alcances (quien la ejecuta ya habla con la base)."""
    if not conexion.execute(EXISTE_TIENDA_SQL, {"tienda": tienda}).fetchone()["hay"]:
        raise TiendaNoEncontrada(f"tienda no encontrada: {tienda}")
    return lotes.procesar(conexion, leer_lineas(ruta), tienda=tienda, clave="cli", al_fallar=al_fallar,
                          max_fallos=0)
