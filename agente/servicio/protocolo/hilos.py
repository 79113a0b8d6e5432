"""Los hilos como los pide el protocolo: la conversación, su transcripción y su pausa.

Una sola sentencia por búsqueda: la página de ``consultas_asistente`` (del cliente, o de
las tiendas de quien firma), con la fila de la cola si espera firmas y la transcripción
que ve el cliente (la vista ``transcripcion`` de sql/028, con los mensajes de la tienda).
Quién puede ver qué lo fija quien llama (``cliente_id`` o ``tiendas``); aquí solo se filtra.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from nucleo.errores import HiloNoEncontrado, Prohibido

__all__ = ["FiltroHilos", "buscar_hilos", "hilo_visible"]

# ``orden``: columna de consultas_asistente (lista cerrada, ver ``_ORDENES``) y sentido.
BUSCAR_HILOS_SQL = """
SELECT c.thread_id, c.cliente_id, c.tienda, c.canal, c.estado, c.creada, c.actualizada,
       a.interrupt_id, a.peticion, a.estado AS estado_aprobacion,
       coalesce(m.mensajes, '[]'::jsonb) AS mensajes
FROM consultas_asistente c
LEFT JOIN aprobaciones_pendientes a ON a.thread_id = c.thread_id
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object('id', t.id, 'rol', t.rol, 'texto', t.texto,
                                        'retenido', t.retenido, 'creado', t.creado, 'autor', t.autor)
                     ORDER BY t.id) AS mensajes
    FROM transcripcion t WHERE t.thread_id = c.thread_id
) m ON true
WHERE (%(cliente_id)s::text IS NULL OR c.cliente_id = %(cliente_id)s)
  AND (%(tiendas)s::text[] IS NULL OR c.tienda = ANY(%(tiendas)s::text[]))
  AND (%(ids)s::text[] IS NULL OR c.thread_id = ANY(%(ids)s::text[]))
  AND (%(tienda)s::text IS NULL OR c.tienda = %(tienda)s)
  AND (%(cliente)s::text IS NULL OR c.cliente_id = %(cliente)s)
  AND (%(canal)s::text IS NULL OR c.canal = %(canal)s)
  AND (%(interrumpido)s::boolean IS NULL OR (a.thread_id IS NOT NULL) = %(interrumpido)s)
ORDER BY {orden}, c.thread_id
LIMIT %(limite)s OFFSET %(desplazamiento)s
"""
_ORDENES = {"creada": "c.creada", "actualizada": "c.actualizada", "thread_id": "c.thread_id"}


@dataclass(frozen=True)
class FiltroHilos:
    """Quién mira (``cliente_id`` o ``tiendas``: lo que ve) y qué busca."""

    cliente_id: str | None = None
    tiendas: tuple[str, ...] | None = None
    ids: tuple[str, ...] | None = None
    tienda: str | None = None
    cliente: str | None = None
    canal: str | None = None
    interrumpido: bool | None = None
    orden: str = "actualizada"
    descendente: bool = True
    limite: int = 10
    desplazamiento: int = 0


def buscar_hilos(conexion: psycopg.Connection, filtro: FiltroHilos) -> list[dict[str, Any]]:
    columna = _ORDENES.get(filtro.orden, "c.actualizada")
    sentencia = BUSCAR_HILOS_SQL.format(orden=f"{columna} {'DESC' if filtro.descendente else 'ASC'}")
    return conexion.execute(sentencia, {
        "cliente_id": filtro.cliente_id,
        "tiendas": list(filtro.tiendas) if filtro.tiendas is not None else None,
        "ids": list(filtro.ids) if filtro.ids is not None else None,
        "tienda": filtro.tienda, "cliente": filtro.cliente, "canal": filtro.canal,
        "interrumpido": filtro.interrumpido,
        "limite": filtro.limite, "desplazamiento": filtro.desplazamiento,
    }).fetchall()


def hilo_visible(
    conexion: psycopg.Connection, thread_id: str, *, cliente_id: str | None = None,
    tiendas: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """El hilo si quien mira puede verlo: 404 si no existe, 403 si es de otro cliente o de
    una tienda donde no firma (lo mismo que la API propia)."""
    filas = buscar_hilos(conexion, FiltroHilos(ids=(thread_id,), limite=1))
    if not filas:
        raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
    fila = filas[0]
    if cliente_id is not None and fila["cliente_id"] != cliente_id:
        raise Prohibido("esta conversación no es tuya")
    if tiendas is not None and fila["tienda"] not in tiendas:
        raise Prohibido("esta conversación es de otra tienda")
    return fila
