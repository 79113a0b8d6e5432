"""La instantánea normalizada de las tablas de negocio (como el hash de la base de τ²).

Sin ids, números, fechas ni ``thread_id``: solo lo que dice qué pasó con el dinero y el
stock, ordenado, para que dos ejecuciones correctas den exactamente lo mismo.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import psycopg

from agente.nucleo import dinero

__all__ = ["EFECTOS_SQL", "ESCALADOS_SQL", "efectos", "escalados", "hash_instantanea", "instantanea", "numeros"]

REEMBOLSOS_SQL = """
SELECT pedido_id AS pedido, importe, concepto, estado,
       coalesce((SELECT jsonb_agg(x ORDER BY x) FROM jsonb_array_elements(lineas) x), '[]') AS lineas
FROM reembolsos ORDER BY pedido_id, concepto, importe
"""
SUSTITUCIONES_SQL = """
SELECT pedido_id AS pedido, sku_original, sku_nuevo, diferencia
FROM sustituciones ORDER BY pedido_id, sku_original, sku_nuevo
"""
COBROS_SQL = """
SELECT pedido_id AS pedido, importe, estado FROM cobros ORDER BY pedido_id, importe
"""
NUMEROS_SQL = """
SELECT numero, 'reembolso' AS tipo, id FROM reembolsos WHERE concepto = 'devolucion'
UNION ALL SELECT numero, 'diferencia', id FROM reembolsos WHERE concepto <> 'devolucion'
UNION ALL SELECT numero, 'sustitucion', id FROM sustituciones
UNION ALL SELECT numero, 'cobro', id FROM cobros
ORDER BY 2, 3
"""
EFECTOS_SQL = """
SELECT (SELECT count(*) FROM reembolsos) + (SELECT count(*) FROM sustituciones)
     + (SELECT count(*) FROM cobros) + (SELECT count(*) FROM aprobaciones_pendientes)
     + (SELECT count(*) FROM decisiones_encargado) AS n
"""
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


def instantanea(conexion: psycopg.Connection) -> dict[str, list[dict[str, Any]]]:
    """Reembolsos, sustituciones y cobros, normalizados (``conexion`` con ``dict_row``)."""
    return {
        "reembolsos": [_fila(f) for f in conexion.execute(REEMBOLSOS_SQL)],
        "sustituciones": [_fila(f) for f in conexion.execute(SUSTITUCIONES_SQL)],
        "cobros": [_fila(f) for f in conexion.execute(COBROS_SQL)],
    }


def hash_instantanea(datos: dict[str, list[dict[str, Any]]]) -> str:
    return hashlib.sha256(json.dumps(datos, sort_keys=True, default=str).encode()).hexdigest()[:16]


def numeros(conexion: psycopg.Connection) -> dict[str, list[str]]:
    """Los números reales por tipo (``reembolso``, ``diferencia``, ``sustitucion``, ``cobro``)."""
    salida: dict[str, list[str]] = {"reembolso": [], "diferencia": [], "sustitucion": [], "cobro": []}
    for fila in conexion.execute(NUMEROS_SQL):
        salida[fila["tipo"]].append(fila["numero"])
    return salida


def escalados(conexion: psycopg.Connection) -> list[str]:
    """``herramienta:pedido`` de cada operación que llegó a un encargado, en orden."""
    return [f"{f['herramienta']}:{f['pedido'] or ''}".rstrip(":") for f in conexion.execute(ESCALADOS_SQL)]


def efectos(conexion: psycopg.Connection) -> int:
    """Cuántos efectos o pausas hay (0 = nada ha pasado todavía)."""
    return int(conexion.execute(EFECTOS_SQL).fetchone()["n"])
