"""La instantánea normalizada de las tablas de negocio (como el hash de la base de τ²).

Sin ids, números, fechas ni ``thread_id``: solo lo que dice qué pasó con el dinero y el
stock, ordenado, para que dos ejecuciones correctas den exactamente lo mismo. Qué tablas y
qué números registra lo declara cada operación con efecto (``EnInstantanea`` en
``nucleo.operaciones``): una operación nueva entra sola.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import psycopg

from nucleo import dinero
from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import OPERACIONES

__all__ = [
    "EFECTOS_SQL",
    "ESCALADOS_SQL",
    "NUMEROS_SQL",
    "efectos",
    "efectos_sql",
    "escalados",
    "hash_instantanea",
    "instantanea",
    "numeros",
    "numeros_sql",
    "tablas",
]


def tablas(operaciones: Sequence[OperacionConEfecto] = OPERACIONES) -> tuple[str, ...]:
    """Las tablas de la instantánea, en el orden de las declaraciones."""
    return tuple(t for op in operaciones for t in op.instantanea.tablas)


def numeros_sql(operaciones: Sequence[OperacionConEfecto] = OPERACIONES) -> str:
    """Una sentencia con los números de todas las numeraciones declaradas: (numero, tipo, id)."""
    ramas = [
        f"SELECT numero, '{n.marcador}' AS tipo, id FROM ({n.sql}) AS n"  # noqa: S608 - de la declaración
        for op in operaciones for n in op.instantanea.numeros
    ]
    return "\nUNION ALL ".join(ramas) + "\nORDER BY 2, 3"


def efectos_sql(operaciones: Sequence[OperacionConEfecto] = OPERACIONES) -> str:
    """Cuántas filas hay en las tablas de la instantánea, en las pausas y en las decisiones."""
    # Nombres de tabla validados como identificadores en la declaración, nunca de un usuario.
    nombres = (*tablas(operaciones), "aprobaciones_pendientes", "decisiones_encargado")
    cuentas = [f"(SELECT count(*) FROM {t})" for t in nombres]  # noqa: S608
    return "SELECT " + "\n     + ".join(cuentas) + " AS n"


# Los números y los recuentos de las operaciones de la tienda (construidos una vez).
NUMEROS_SQL = numeros_sql()
EFECTOS_SQL = efectos_sql()

# Cada operación que llegó a un encargado: las decididas y la que espera.
ESCALADOS_SQL = """
SELECT a->>'name' AS herramienta, a->'args'->>'pedido' AS pedido, orden
FROM (SELECT peticion, decidida AS orden FROM decisiones_encargado
      UNION ALL SELECT peticion, creada FROM aprobaciones_pendientes) p,
     jsonb_array_elements(p.peticion->'action_requests') a
ORDER BY orden
"""


def _fila(fila: dict[str, Any]) -> dict[str, Any]:
    return {k: dinero.texto(v) if k in ("importe", "diferencia") else v for k, v in fila.items()}


def instantanea(
    conexion: psycopg.Connection, operaciones: Sequence[OperacionConEfecto] = OPERACIONES
) -> dict[str, list[dict[str, Any]]]:
    """Las tablas que declara cada operación (reembolsos, sustituciones, cobros...),
    normalizadas (``conexion`` con ``dict_row``)."""
    return {
        tabla: [_fila(f) for f in conexion.execute(consulta)]
        for op in operaciones for tabla, consulta in op.instantanea.tablas.items()
    }


def hash_instantanea(datos: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha256(json.dumps(datos, sort_keys=True, default=str).encode()).hexdigest()[:16]


def numeros(
    conexion: psycopg.Connection, operaciones: Sequence[OperacionConEfecto] = OPERACIONES
) -> dict[str, list[str]]:
    """Los números reales por marcador (``reembolso``, ``sustitucion``, ``diferencia``,
    ``cobro``...: los de cada ``Numeracion`` declarada)."""
    salida: dict[str, list[str]] = {n.marcador: [] for op in operaciones for n in op.instantanea.numeros}
    for fila in conexion.execute(numeros_sql(operaciones)):
        salida[fila["tipo"]].append(fila["numero"])
    return salida


def escalados(conexion: psycopg.Connection) -> list[str]:
    """``herramienta:pedido`` de cada operación que llegó a un encargado, en orden."""
    return [f"{f['herramienta']}:{f['pedido'] or ''}".rstrip(":") for f in conexion.execute(ESCALADOS_SQL)]


def efectos(conexion: psycopg.Connection, operaciones: Sequence[OperacionConEfecto] = OPERACIONES) -> int:
    """Cuántos efectos o pausas hay (0 = nada ha pasado todavía)."""
    return int(conexion.execute(efectos_sql(operaciones)).fetchone()["n"])
