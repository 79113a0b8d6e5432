"""Lo que comparten las órdenes de la CLI: errores en una línea, la base, el servicio y las tablas.

- ``errores_en_una_linea``: un error del dominio sale como una línea en español y código 2,
  nunca como una traza;
- ``url``: la URL de la base (``DATABASE_URL`` o el embebido, que se arranca si hace falta),
  comprobada: si no conecta, el error nombra el ajuste que hay que mirar;
- ``url_migrada``, ``conexion`` y ``servicio``: lo mismo con las migraciones ya aplicadas,
  y una conexión suelta o el servicio completo encima;
- ``tabla``: una tabla de rich que no corta los ids que se copian.

Las importaciones pesadas van dentro de cada función: ``agente --help`` no las paga.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import wraps
from pathlib import Path

import typer

from nucleo.errores import ErrorDominio

__all__ = ["con_zona", "conexion", "errores_en_una_linea", "escribir_csv", "servicio", "tabla", "url", "url_migrada"]


def errores_en_una_linea(funcion):
    @wraps(funcion)
    def envoltura(*args, **kwargs):
        try:
            return funcion(*args, **kwargs)
        except ErrorDominio as exc:
            typer.echo(f"Error: {exc.mensaje}", err=True)
            raise typer.Exit(code=2) from None

    return envoltura


def url(aj=None) -> str:
    """La URL de la base, comprobada. Sin ``aj``, los ajustes del proceso (en caché)."""
    from agente.servicio.operador.plataforma import comprobar_conexion, url_basedatos
    from nucleo.ajustes import ajustes

    aj = aj if aj is not None else ajustes()
    resultado = url_basedatos(aj)
    comprobar_conexion(resultado, ajuste="DATABASE_URL" if aj.database_url else "AGENTE_PGDATA")
    return resultado


def url_migrada(aj=None) -> str:
    """``url`` con las migraciones pendientes aplicadas (idempotente)."""
    from agente.servicio.operador.plataforma import migrar

    resultado = url(aj)
    migrar(resultado)
    return resultado


@contextmanager
def conexion() -> Iterator:
    """Una conexión suelta a la base migrada (con los mismos ajustes que el pool)."""
    import psycopg

    from agente.servicio.operador.plataforma import KWARGS_CONEXION

    with psycopg.connect(url_migrada(), **KWARGS_CONEXION) as abierta:
        yield abierta


@contextmanager
def servicio() -> Iterator:
    """El servicio completo sobre la base migrada; al salir se cierra."""
    from agente.servicio.fabrica import crear_servicio
    from nucleo.ajustes import ajustes

    abierto = crear_servicio(ajustes(), url=url_migrada())
    try:
        yield abierto
    finally:
        abierto.cerrar()  # vacía las trazas pendientes antes de salir


def tabla(
    titulo: str, columnas: list[str], filas: list[list], *, enteras: tuple[str, ...] = ("Hilo",),
    minimos: dict[str, int] | None = None,
) -> None:
    """Tabla de rich. Las columnas ``enteras`` (ids que se copian) nunca se cortan; las de
    ``minimos``, no se estrechan por debajo de ese ancho."""
    import shutil

    from rich.console import Console
    from rich.table import Table

    hecha = Table(title=titulo)
    necesario = 0  # lo que ocupan las columnas que no se estrechan: la consola se ensancha
    for columna in columnas:
        ancho = max((len(str(f[columnas.index(columna)] or "")) for f in filas), default=0)
        if columna in enteras:
            hecha.add_column(columna, no_wrap=True, min_width=ancho)
            necesario += ancho + 3
        else:
            minimo = (minimos or {}).get(columna)
            # «fold»: un id largo se parte en dos líneas, nunca se corta con «…»
            hecha.add_column(columna, min_width=minimo, overflow="fold")
            necesario += (minimo or 10) + 3
    for fila in filas:
        hecha.add_row(*[str(v) if v is not None else "" for v in fila])
    Console(width=max(160, necesario, shutil.get_terminal_size((160, 24)).columns)).print(hecha)


def con_zona(momento: datetime | None) -> datetime | None:
    """Una fecha de la línea de órdenes (AAAA-MM-DD), en la hora de las tiendas."""
    from zoneinfo import ZoneInfo

    from nucleo.fechas import ZONA_TIENDAS

    if momento is None or momento.tzinfo is not None:
        return momento
    return momento.replace(tzinfo=ZoneInfo(ZONA_TIENDAS))


def escribir_csv(texto: str, ruta: str, *, filas: int, que: str, formato: str) -> None:
    """El CSV en ``ruta`` («-»: la salida) y, en un fichero, cuántas ``que`` escribió."""
    if ruta == "-":
        typer.echo(texto, nl=False)
        return
    Path(ruta).write_text(texto, encoding="utf-8", newline="")
    typer.echo(f"{filas} {que} en {ruta} (formato {formato}).")
