"""Bases de datos de prueba: la URL de una base y una base nueva (vacía o clonada de una plantilla).

Las fixtures de ``tests/conftest.py`` las usan; también las pruebas que crean bases propias
(una por ejemplo de Hypothesis, un servidor con su base...).
"""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agente.bd.pool import borrar_base

__all__ = ["borrar_base", "crear_base", "url_de"]


def url_de(base: str, url_admin: str) -> str:
    """La URL de ``base`` en el mismo servidor (y con las mismas credenciales) que ``url_admin``."""
    datos = conninfo_to_dict(url_admin)
    datos["dbname"] = base
    return make_conninfo(**datos)


def crear_base(url_admin: str, nombre: str, plantilla: str | None = None) -> str:
    """Crea ``nombre`` (vacía o copia de ``plantilla``), borrando antes la que hubiera; da su URL."""
    borrar_base(url_admin, nombre)
    with psycopg.connect(url_admin, autocommit=True) as conexion:
        if plantilla:
            conexion.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(nombre), sql.Identifier(plantilla)
                )
            )
        else:
            conexion.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(nombre)))
    return url_de(nombre, url_admin)
