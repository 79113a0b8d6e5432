"""Lo que el esquema deriva de las declaraciones de las operaciones, rehecho al migrar.

La vista ``efectos`` (una rama por operación) y la CHECK «una operación por unidad» de
``compensaciones_unidad`` salen de ``agente.nucleo.operaciones``: ninguna migración las
copia. ``migrar`` llama a ``aplicar_derivados`` al final, bajo su candado; cada objeto se
rehace solo si su texto cambió desde la última vez (su huella en ``esquema_derivados``).

Trampa: una base a medio migrar (una prueba que aplica solo parte de ``sql/``) no tiene
todas las tablas y columnas; ``migrar`` solo aplica los derivados con la carpeta completa.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import psycopg

from agente.nucleo.operacion import OperacionConEfecto
from agente.nucleo.operaciones import (
    OPERACIONES,
    comprobacion_compensaciones_sql,
    vista_efectos_sql,
)

__all__ = ["aplicar_derivados", "derivados"]

CREAR_TABLA_DERIVADOS_SQL = """
CREATE TABLE IF NOT EXISTS esquema_derivados (
    nombre     text PRIMARY KEY,
    huella     text NOT NULL,
    aplicado   timestamptz NOT NULL DEFAULT now()
)
"""
SELECT_HUELLAS_SQL = "SELECT nombre, huella FROM esquema_derivados"
GUARDAR_HUELLA_SQL = """
INSERT INTO esquema_derivados (nombre, huella) VALUES (%(nombre)s, %(huella)s)
ON CONFLICT (nombre) DO UPDATE SET huella = EXCLUDED.huella, aplicado = now()
"""


def derivados(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> dict[str, str]:
    """Cada objeto derivado con la sentencia que lo (re)crea, en el orden de aplicarlos."""
    operaciones = tuple(operaciones)
    return {
        "vista_efectos": vista_efectos_sql(operaciones),
        "compensaciones_una_operacion": comprobacion_compensaciones_sql(operaciones),
    }


def aplicar_derivados(conexion: psycopg.Connection,
                      operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> list[str]:
    """Rehace los objetos cuyo texto cambió; devuelve sus nombres. Cada uno en su transacción."""
    conexion.execute(CREAR_TABLA_DERIVADOS_SQL)
    huellas = {fila["nombre"]: fila["huella"] for fila in conexion.execute(SELECT_HUELLAS_SQL)}
    rehechos = []
    for nombre, sentencia in derivados(operaciones).items():
        huella = hashlib.sha256(sentencia.encode("utf-8")).hexdigest()
        if huellas.get(nombre) == huella:
            continue
        with conexion.transaction():
            conexion.execute(sentencia, prepare=False)
            conexion.execute(GUARDAR_HUELLA_SQL, {"nombre": nombre, "huella": huella})
        rehechos.append(nombre)
    return rehechos
