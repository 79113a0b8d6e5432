"""Lo que el cliente ve de su conversación, y el aviso entre procesos de un mensaje nuevo."""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = [
    "CANAL_NOTIFY",
    "PREFIJO_BANDEJA",
    "anotar_mensaje",
    "avisar",
    "avisar_bandeja",
    "cerrar_turno",
    "mensajes_de",
]

CANAL_NOTIFY = "mensajes_hilo"
# Mismo canal, otra carga: «bandeja:TIENDA» no es un hilo (los hilos empiezan por «h-»).
PREFIJO_BANDEJA = "bandeja:"

INSERT_MENSAJE_SQL = """
INSERT INTO mensajes_conversacion (thread_id, rol, texto, retenido)
VALUES (%(thread_id)s, %(rol)s, %(texto)s, %(retenido)s)
RETURNING id, creado
"""
NOTIFY_SQL = "SELECT pg_notify(%(canal)s, %(thread_id)s)"
# Cierre de un turno en una sola sentencia (atómica): respuesta, cola y estado.
# ``respuesta_de``: el id del último mensaje del grafo que este cierre entrega (el
# conciliador lo busca para saber si un turno terminado quedó sin cerrar); la misma
# respuesta no se apunta dos veces (índice único, sql/015).
CERRAR_TURNO_SQL = """
WITH desencolada AS (
    DELETE FROM aprobaciones_pendientes WHERE thread_id = %(thread_id)s AND %(desencolar)s
), mensaje AS (
    INSERT INTO mensajes_conversacion (thread_id, rol, texto, respuesta_de)
    VALUES (%(thread_id)s, 'agente', %(texto)s, %(respuesta_de)s)
    ON CONFLICT (thread_id, respuesta_de) WHERE respuesta_de IS NOT NULL DO NOTHING
), entregados AS (
    UPDATE mensajes_conversacion SET entregado_en = now()
    WHERE %(entregar_retenidos)s AND thread_id = %(thread_id)s AND rol = 'cliente' AND retenido
      AND entregado_en IS NULL
    RETURNING id, texto
)
UPDATE consultas_asistente SET estado = %(estado)s, actualizada = now()
WHERE thread_id = %(thread_id)s
RETURNING (SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'texto', e.texto) ORDER BY e.id),
                           '[]'::jsonb)
           FROM entregados e) AS retenidos,
          -- El NOTIFY de ``avisar`` en la misma sentencia (sale al confirmar, como siempre).
          CASE WHEN %(avisar)s THEN (SELECT true FROM pg_notify(%(canal)s, %(thread_id)s)) END AS avisado
"""
# Con los mensajes que escribe una persona de la tienda (la vista de sql/028, rol «tienda»,
# con su nombre en ``autor``): comparten la secuencia de ids, así que ``desde`` vale para los dos.
SELECT_MENSAJES_SQL = """
SELECT id, rol, texto, retenido, creado, autor FROM transcripcion
WHERE thread_id = %(thread_id)s AND id > %(desde)s ORDER BY id
"""


def anotar_mensaje(
    conexion: psycopg.Connection,
    thread_id: str,
    rol: str,
    texto: str,
    *,
    retenido: bool = False,
) -> dict[str, Any]:
    return conexion.execute(
        INSERT_MENSAJE_SQL,
        {"thread_id": thread_id, "rol": rol, "texto": texto, "retenido": retenido},
    ).fetchone()


def cerrar_turno(
    conexion: psycopg.Connection, thread_id: str, texto: str, *, estado: str, desencolar: bool,
    respuesta_de: str | None = None, entregar_retenidos: bool = False, avisar: bool = False,
) -> psycopg.Cursor:
    """Apunta la respuesta y el estado del turno (y desencola la pausa si ``desencolar``).
    ``avisar``: además, el ``NOTIFY`` de ``avisar()`` en la misma sentencia.

    ``entregar_retenidos``: en la misma sentencia marca como entregados los mensajes que el
    cliente escribió mientras esperaba (ver ``retenidos``) y los devuelve en la columna
    ``retenidos`` del cursor (legible también tras el commit).
    """
    return conexion.execute(
        CERRAR_TURNO_SQL,
        {"thread_id": thread_id, "texto": texto, "estado": estado, "desencolar": desencolar,
         "respuesta_de": respuesta_de, "entregar_retenidos": entregar_retenidos,
         "avisar": avisar, "canal": CANAL_NOTIFY},
    )


def avisar(conexion: psycopg.Connection, thread_id: str) -> None:
    """Avisa a los oyentes (otros procesos) de que el hilo tiene un mensaje nuevo ya guardado."""
    conexion.execute(NOTIFY_SQL, {"canal": CANAL_NOTIFY, "thread_id": thread_id})


def avisar_bandeja(conexion: psycopg.Connection, tienda: str) -> None:
    """Avisa a las bandejas abiertas de que algo cambió en la cola de ``tienda``."""
    conexion.execute(NOTIFY_SQL, {"canal": CANAL_NOTIFY, "thread_id": PREFIJO_BANDEJA + tienda})


def mensajes_de(conexion: psycopg.Connection, thread_id: str, *, desde: int = 0) -> list[dict]:
    return conexion.execute(SELECT_MENSAJES_SQL, {"thread_id": thread_id, "desde": desde}).fetchall()

