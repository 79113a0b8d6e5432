"""Lo que el chat del cliente enseña al abrirse: quién es, sus pedidos y sus conversaciones.

Solo lecturas del propio cliente (el ``cliente_id`` sale del token). Una conversación
pendiente de un encargado aparece la primera: el cliente la reabre y ve su historia.

- ``perfil_de``: su nombre (para el saludo), el nombre visible de su tienda y cuánto suele
  tardar esa tienda en decidir (la mediana de las decisiones de personas de los últimos
  ``DIAS_ESPERA`` días, solo con al menos ``MIN_DECISIONES_ESPERA``: con pocas, mejor no
  prometer nada);
- ``conversaciones_de``: cada conversación con su estado para el cliente (``resuelta``,
  ``esperando_tienda``, ``abierta``) y su tema (su primer mensaje, no la presentación).
"""

from __future__ import annotations

from typing import Any

import psycopg

from nucleo import dinero

__all__ = ["DIAS_ESPERA", "MIN_DECISIONES_ESPERA", "conversaciones_de", "espera_en_texto", "pedidos_de", "perfil_de"]

DIAS_ESPERA = 30
MIN_DECISIONES_ESPERA = 5

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
       (SELECT count(*) FROM mensajes_conversacion m WHERE m.thread_id = c.thread_id)::int AS mensajes,
       (SELECT m.texto FROM mensajes_conversacion m
        WHERE m.thread_id = c.thread_id AND m.rol = 'cliente' ORDER BY m.id LIMIT 1) AS tema,
       (EXISTS (SELECT 1 FROM decisiones_encargado d WHERE d.thread_id = c.thread_id)
        OR EXISTS (SELECT 1 FROM efectos e WHERE e.thread_id = c.thread_id)) AS con_desenlace
FROM consultas_asistente c
LEFT JOIN LATERAL (
    SELECT texto, rol, creado FROM mensajes_conversacion m
    WHERE m.thread_id = c.thread_id ORDER BY m.id DESC LIMIT 1
) u ON true
WHERE c.cliente_id = %(cliente)s
ORDER BY (c.estado = 'esperando_aprobacion') DESC, c.actualizada DESC, c.thread_id
LIMIT %(limite)s
"""


SELECT_PERFIL_SQL = """
SELECT cl.id AS cliente_id, cl.nombre, cl.tienda, t.nombre AS tienda_nombre, e.decisiones, e.mediana
FROM clientes cl
JOIN tiendas t ON t.id = cl.tienda
LEFT JOIN LATERAL (
    SELECT count(*)::int AS decisiones,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY d.espera_segundos) AS mediana
    FROM decisiones_encargado d
    WHERE d.tienda = cl.tienda AND d.encargado_id <> %(sistema)s
      AND d.decidida >= now() - make_interval(days => %(dias)s)
) e ON true
WHERE cl.id = %(cliente)s
"""


def espera_en_texto(segundos: float) -> str:
    """«unos 10 min», «alrededor de una hora», «unas 2 h», «unos 3 días» (redondeado)."""
    if segundos < 55 * 60:
        return f"unos {max(5, round(segundos / 300) * 5)} min"
    horas = round(segundos / 3600)
    if horas <= 1:
        return "alrededor de una hora"
    if horas < 48:
        return f"unas {horas} h"
    return f"unos {round(horas / 24)} días"


def perfil_de(conexion: psycopg.Connection, cliente_id: str, *, sistema: str) -> dict[str, Any] | None:
    """Nombre, tienda (id y nombre visible) y ``espera_tipica`` (texto o None); None si no existe.

    ``sistema``: el id de quien «decide» al caducar (no cuenta como espera de una persona)."""
    fila = conexion.execute(SELECT_PERFIL_SQL, {"cliente": cliente_id, "sistema": sistema,
                                                "dias": DIAS_ESPERA}).fetchone()
    if fila is None:
        return None
    suficientes = (fila["decisiones"] or 0) >= MIN_DECISIONES_ESPERA and fila["mediana"] is not None
    return {"cliente_id": fila["cliente_id"], "nombre": fila["nombre"],
            "tienda": {"id": fila["tienda"], "nombre": fila["tienda_nombre"]},
            "espera_tipica": espera_en_texto(float(fila["mediana"])) if suficientes else None}


def pedidos_de(conexion: psycopg.Connection, cliente_id: str, *, limite: int = 10) -> list[dict[str, Any]]:
    filas = conexion.execute(SELECT_PEDIDOS_SQL, {"cliente": cliente_id, "limite": limite}).fetchall()
    return [{**f, "importe": dinero.texto(f["importe"])} for f in filas]


def conversaciones_de(
    conexion: psycopg.Connection, cliente_id: str, *, limite: int = 20
) -> list[dict[str, Any]]:
    """Las conversaciones del cliente con su último mensaje y su tema (recortados a 140
    caracteres) y ``estado_cliente``: ``esperando_tienda`` (pendiente de un encargado o de una
    persona), ``resuelta`` (cerrada, o con una decisión o un efecto y la última palabra de la
    tienda) o ``abierta``."""
    filas = conexion.execute(SELECT_CONVERSACIONES_SQL, {"cliente": cliente_id, "limite": limite}).fetchall()
    for f in filas:
        for campo in ("ultimo_texto", "tema"):
            if f[campo] and len(f[campo]) > 140:
                f[campo] = f[campo][:139] + "…"
        f["estado_cliente"] = _estado_cliente(f)
        del f["con_desenlace"]
    return filas


def _estado_cliente(fila: dict[str, Any]) -> str:
    if fila["estado"] in ("esperando_aprobacion", "necesita_persona"):
        return "esperando_tienda"
    if fila["estado"] == "cerrada" or (fila["con_desenlace"] and fila["ultimo_rol"] != "cliente"):
        return "resuelta"
    return "abierta"
