"""Aplica ``sql/NNN_*.sql`` y ``operaciones/*/sql/NNN_*.sql`` en orden, cada fichero en una
transacción, bajo un candado.

Las migraciones de una operación viven en su carpeta (``operaciones/<op>/sql/``) y se
aplican con las de ``sql/`` en un solo orden global por número (el nombre del fichero):
dos ficheros con la misma versión, estén donde estén, son un error de configuración.

Un candado de sesión (advisory lock) serializa a los procesos que arrancan a la vez:
el segundo espera y después no encuentra nada que aplicar. Bajo el mismo candado se
ejecuta ``PostgresSaver.setup()``, que no tolera ejecuciones concurrentes.

Trampa: ``setup()`` crea índices con ``CREATE INDEX CONCURRENTLY``, que espera a que
terminen todas las sentencias en curso; un segundo proceso bloqueado dentro de
``pg_advisory_lock()`` es una sentencia en curso y el servidor lo declara interbloqueo.
Por eso se espera con ``pg_try_advisory_lock`` y pausas, fuera de cualquier sentencia.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver

from agente.bd.derivados import aplicar_derivados
from agente.bd.pool import KWARGS_CONEXION
from nucleo.claves_candado import CANDADO_MIGRACIONES
from nucleo.errores import ErrorConfiguracion

__all__ = ["CARPETA_OPERACIONES", "CARPETA_SQL", "Migracion", "migraciones_disponibles", "migrar", "rehacer"]

CARPETA_SQL = Path(__file__).resolve().parents[2] / "sql"
# Las carpetas de las operaciones (``operaciones/carpetas.py``): cada una puede traer su ``sql/``.
CARPETA_OPERACIONES = Path(__file__).resolve().parents[2] / "operaciones"

CREAR_TABLA_VERSIONES_SQL = """
CREATE TABLE IF NOT EXISTS esquema_versiones (
    version   text PRIMARY KEY,
    aplicada  timestamptz NOT NULL DEFAULT now()
)
"""
SELECT_VERSIONES_SQL = "SELECT version FROM esquema_versiones"
INSERT_VERSION_SQL = "INSERT INTO esquema_versiones (version) VALUES (%(version)s)"
# Vaciar del todo: las migraciones también siembran filas (roles, matrices), así que se
# rehace el esquema en vez de vaciar tablas.
BORRAR_ESQUEMA_SQL = "DROP SCHEMA public CASCADE"
CREAR_ESQUEMA_SQL = "CREATE SCHEMA public"
_NOMBRE = re.compile(r"^(\d{3})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migracion:
    version: str
    ruta: Path


def migraciones_disponibles(carpeta: Path = CARPETA_SQL, *,
                            operaciones: Path | None = None) -> list[Migracion]:
    """Las migraciones de ``carpeta`` y las de ``operaciones/*/sql/`` (por defecto, con la
    carpeta ``sql/`` del producto), ordenadas por su nombre: el número manda."""
    if not carpeta.is_dir():
        raise ErrorConfiguracion(f"no se encuentra la carpeta de migraciones {carpeta}")
    if operaciones is None and carpeta == CARPETA_SQL:
        operaciones = CARPETA_OPERACIONES
    rutas = list(carpeta.glob("*.sql"))
    if operaciones is not None:
        rutas += operaciones.glob("*/sql/*.sql")
    encontradas: dict[str, Migracion] = {}
    for ruta in sorted(rutas, key=lambda r: (r.name, str(r))):
        if not _NOMBRE.match(ruta.name):
            raise ErrorConfiguracion(f"nombre de migración no válido: {ruta.name} (NNN_nombre.sql)")
        if ruta.stem in encontradas:
            raise ErrorConfiguracion(f"migración repetida: {ruta} y {encontradas[ruta.stem].ruta}")
        encontradas[ruta.stem] = Migracion(version=ruta.stem, ruta=ruta)
    numeros = [m.version[:3] for m in encontradas.values()]
    repetidos = sorted({n for n in numeros if numeros.count(n) > 1})
    if repetidos:
        raise ErrorConfiguracion(f"dos migraciones con el mismo número: {repetidos}")
    return list(encontradas.values())


def _esperar_candado(conexion: psycopg.Connection, *, pausa: float = 0.1) -> None:
    while not conexion.execute(
        "SELECT pg_try_advisory_lock(%(clave)s) AS ok", {"clave": CANDADO_MIGRACIONES}
    ).fetchone()["ok"]:
        time.sleep(pausa)


def migrar(url: str, *, carpeta: Path = CARPETA_SQL) -> list[str]:
    """Aplica las migraciones pendientes, los objetos derivados de las operaciones
    (``agente.bd.derivados``, solo con la carpeta completa) y prepara el checkpointer.
    Devuelve las migraciones aplicadas."""
    aplicadas: list[str] = []
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        _esperar_candado(conexion)
        try:
            conexion.execute(CREAR_TABLA_VERSIONES_SQL)
            hechas = {fila["version"] for fila in conexion.execute(SELECT_VERSIONES_SQL)}
            for migracion in migraciones_disponibles(carpeta):
                if migracion.version in hechas:
                    continue
                with conexion.transaction():
                    conexion.execute(migracion.ruta.read_text(encoding="utf-8"), prepare=False)
                    conexion.execute(INSERT_VERSION_SQL, {"version": migracion.version})
                aplicadas.append(migracion.version)
            if carpeta == CARPETA_SQL:
                aplicar_derivados(conexion)
            PostgresSaver(conexion).setup()
        finally:
            conexion.execute("SELECT pg_advisory_unlock(%(clave)s)", {"clave": CANDADO_MIGRACIONES})
    return aplicadas


def rehacer(url: str) -> list[str]:
    """Borra todos los datos (el esquema ``public`` entero) y vuelve a migrar."""
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion, conexion.transaction():
        conexion.execute(BORRAR_ESQUEMA_SQL)
        conexion.execute(CREAR_ESQUEMA_SQL)
    return migrar(url)
