"""Lo que el chat del cliente enseña al abrirse: sus pedidos recientes y sus conversaciones.

Solo lecturas del propio cliente (el ``cliente_id`` sale del token). Una conversación
pendiente de un encargado aparece la primera: el cliente la reabre y ve su historia.
"""

from __future__ import annotations

from typing import Any

import psycopg

from agente.nucleo import dinero

__all__ = ["conversaciones_de", "pedidos_de"]

SELECT_PEDIDOS_SQL = """
SELECT p.id, p.fecha, p.estado, p.importe, p.entregado_en,
       coalesce(string_agg(pr.nombre, ', ' ORDER BY l.linea), '') AS productos
FROM pedidos p
LEFT JOIN lineas_pedido l ON l.pedido_id = p.id
LEFT JOIN productos pr ON pr.sku = l.sku
WHERE p.cliente_id = %(cliente)s
GROUP BY p.id
ORDER BY p.fecha DESC, p.id DESC
LIMIT %(limite)s
"""
SELECT_CONVERSACIONES_SQL = """
SELECT c.thread_id, c.estado, c.creada, c.actualizada,
       u.texto AS ultimo_texto, u.rol AS ultimo_rol, u.creado AS ultimo_en,
       (SELECT count(*) FROM mensajes_conversacion m WHERE m.thread_id = c.thread_id)::int AS mensajes
FROM consultas_asistente c
LEFT JOIN LATERAL (
    SELECT texto, rol, creado FROM mensajes_conversacion m
    WHERE m.thread_id = c.thread_id ORDER BY m.id DESC LIMIT 1
) u ON true
WHERE c.cliente_id = %(cliente)s
ORDER BY (c.estado = 'esperando_aprobacion') DESC, c.actualizada DESC, c.thread_id
LIMIT %(limite)s
"""


def pedidos_de(conexion: psycopg.Connection, cliente_id: str, *, limite: int = 10) -> list[dict[str, Any]]:
    filas = conexion.execute(SELECT_PEDIDOS_SQL, {"cliente": cliente_id, "limite": limite}).fetchall()
    return [{**f, "importe": dinero.texto(f["importe"])} for f in filas]


def conversaciones_de(
    conexion: psycopg.Connection, cliente_id: str, *, limite: int = 20
) -> list[dict[str, Any]]:
    """Las conversaciones del cliente con su último mensaje (recortado a 140 caracteres)."""
    filas = conexion.execute(SELECT_CONVERSACIONES_SQL, {"cliente": cliente_id, "limite": limite}).fetchall()
    for f in filas:
        if f["ultimo_texto"] and len(f["ultimo_texto"]) > 140:
            f["ultimo_texto"] = f["ultimo_texto"][:139] + "…"
    return filas
