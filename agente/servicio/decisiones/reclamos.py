"""«Lo atiendo yo»: un encargado reclama una aprobación para que los demás lo sepan.

Reclamar no impide decidir a otro (la decisión sigue siendo una por pausa, en
``decidir``): solo avisa. La reclamación caduca sola a los ``MINUTOS_RECLAMO`` y
desaparece con la decisión (la fila de la cola se borra o se rehace al encolar). Cada
cambio avisa a las bandejas abiertas (``mensajes.avisar_bandeja``).
"""

from __future__ import annotations

from typing import Any

import psycopg

from agente.servicio import personas
from agente.servicio.conversaciones import mensajes
from nucleo.errores import NadaPendiente, Prohibido, ReclamadaPorOtro

__all__ = ["MINUTOS_RECLAMO", "nombres_de_tiendas", "reclamar", "soltar", "tiendas_de"]

MINUTOS_RECLAMO = 15

SELECT_TIENDAS_SQL = """
SELECT DISTINCT tienda FROM firmantes_tienda WHERE encargado_id = %(encargado)s ORDER BY tienda
"""
SELECT_NOMBRES_TIENDAS_SQL = "SELECT id, nombre FROM tiendas WHERE id = ANY(%(tiendas)s::text[]) ORDER BY nombre"
SELECT_PARA_RECLAMAR_SQL = """
SELECT a.thread_id, a.tienda, a.estado, a.asignada_a, e.nombre AS asignada_nombre,
       a.reclamada_hasta, a.reclamada_hasta > now() AS vigente
FROM aprobaciones_pendientes a LEFT JOIN encargados e ON e.id = a.asignada_a
WHERE a.thread_id = %(thread_id)s FOR UPDATE OF a
"""
RECLAMAR_SQL = """
UPDATE aprobaciones_pendientes
SET asignada_a = %(encargado)s, reclamada_hasta = now() + make_interval(mins => %(minutos)s)
WHERE thread_id = %(thread_id)s
RETURNING asignada_a AS encargado, reclamada_hasta AS hasta,
          (SELECT e.nombre FROM encargados e WHERE e.id = asignada_a) AS nombre
"""
SOLTAR_SQL = """
UPDATE aprobaciones_pendientes SET asignada_a = NULL, reclamada_hasta = NULL
WHERE thread_id = %(thread_id)s AND estado = 'pendiente'
"""


def tiendas_de(conexion: psycopg.Connection, encargado_id: str) -> list[str]:
    """Las tiendas donde firma (la suya y, si es regional, las de su región)."""
    return [f["tienda"] for f in conexion.execute(SELECT_TIENDAS_SQL, {"encargado": encargado_id})]


def nombres_de_tiendas(conexion: psycopg.Connection, tiendas: list[str] | tuple[str, ...]) -> dict[str, str]:
    """El nombre legible de cada tienda («Talavera de la Reina»), por nombre."""
    filas = conexion.execute(SELECT_NOMBRES_TIENDAS_SQL, {"tiendas": list(tiendas)})
    return {f["id"]: f["nombre"] for f in filas}


def _fila(conexion: psycopg.Connection, thread_id: str, encargado_id: str) -> dict[str, Any]:
    personas.encargado_activo(conexion, encargado_id)
    fila = conexion.execute(SELECT_PARA_RECLAMAR_SQL, {"thread_id": thread_id}).fetchone()
    if fila is None:
        raise NadaPendiente(f"no hay ninguna aprobación pendiente en {thread_id}")
    if fila["tienda"] not in tiendas_de(conexion, encargado_id):
        raise Prohibido("esta aprobación es de otra tienda")
    return fila


def _de_otro(fila: dict[str, Any], encargado_id: str) -> bool:
    return bool(fila["vigente"]) and fila["asignada_a"] not in (None, encargado_id)


def reclamar(conexion: psycopg.Connection, thread_id: str, encargado_id: str) -> dict[str, Any]:
    """Reclama (o renueva) la aprobación; ``ReclamadaPorOtro`` (409) si otro la tiene."""
    with conexion.transaction():
        fila = _fila(conexion, thread_id, encargado_id)
        if fila["estado"] != "pendiente":
            raise ReclamadaPorOtro("esta aprobación se está decidiendo ahora mismo")
        if _de_otro(fila, encargado_id):
            raise ReclamadaPorOtro(
                f"la atiende {fila['asignada_nombre'] or fila['asignada_a']}",
                thread_id=thread_id,
            )
        hecha = conexion.execute(
            RECLAMAR_SQL,
            {"thread_id": thread_id, "encargado": encargado_id, "minutos": MINUTOS_RECLAMO},
        ).fetchone()
        mensajes.avisar_bandeja(conexion, fila["tienda"])
    return {"thread_id": thread_id, "encargado": hecha["encargado"], "nombre": hecha["nombre"], "hasta": hecha["hasta"]}


def soltar(conexion: psycopg.Connection, thread_id: str, encargado_id: str) -> None:
    """Suelta la reclamación propia (o una ya vencida); la de otro, ``ReclamadaPorOtro``."""
    with conexion.transaction():
        fila = _fila(conexion, thread_id, encargado_id)
        if _de_otro(fila, encargado_id):
            raise ReclamadaPorOtro("solo quien la reclamó puede soltarla")
        if fila["estado"] == "pendiente" and fila["asignada_a"] is not None:
            conexion.execute(SOLTAR_SQL, {"thread_id": thread_id})
            mensajes.avisar_bandeja(conexion, fila["tienda"])
