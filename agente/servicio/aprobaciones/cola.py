"""La cola de aprobaciones: qué hilos esperan a un encargado, y desde cuándo."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from politicas import DEFECTOS

__all__ = ["aprobacion", "aprobacion_detallada", "bandeja", "desencolar", "encolar"]

# Una sola sentencia (atómica) al pausar: qué tool_call_id necesitaban firma (del veredicto
# guardado, para la auditoría), la fila de la cola, el aviso al cliente y el estado. Una
# llamada con firma sin veredicto guardado cuenta como firmada (falla cerrada).
ENCOLAR_SQL = """
WITH acciones AS (
    SELECT coalesce(jsonb_agg(t.id ORDER BY t.n), '[]'::jsonb) AS ids
    FROM unnest(%(ids)s::text[]) WITH ORDINALITY AS t(id, n)
    LEFT JOIN evaluaciones_politica e
           ON e.thread_id = %(thread_id)s AND e.tool_call_id = t.id
    WHERE e.requiere_encargado IS NOT FALSE
), encolada AS (
    INSERT INTO aprobaciones_pendientes
        (thread_id, tienda, cliente_id, interrupt_id, peticion, contexto, trace_id, requisito, caduca)
    SELECT %(thread_id)s, %(tienda)s, %(cliente_id)s, %(interrupt_id)s,
           jsonb_set(%(peticion)s::jsonb, '{tool_call_ids}', acciones.ids), %(contexto)s,
           %(trace_id)s, %(requisito)s,
           now() + make_interval(hours => coalesce(
               (SELECT p.horas_caducidad FROM politicas_tienda p WHERE p.tienda = %(tienda)s),
               %(horas_caducidad)s))
    FROM acciones
    ON CONFLICT (thread_id) DO UPDATE
    SET interrupt_id = EXCLUDED.interrupt_id, peticion = EXCLUDED.peticion,
        contexto = EXCLUDED.contexto, trace_id = EXCLUDED.trace_id, requisito = EXCLUDED.requisito,
        estado = 'pendiente', asignada_a = NULL, creada = now(), caduca = EXCLUDED.caduca
    RETURNING peticion
), mensaje AS (
    INSERT INTO mensajes_conversacion (thread_id, rol, texto)
    SELECT %(thread_id)s, 'agente', %(texto)s::text WHERE %(texto)s::text IS NOT NULL
), consulta AS (
    UPDATE consultas_asistente SET estado = 'esperando_aprobacion', actualizada = now()
    WHERE thread_id = %(thread_id)s
)
SELECT peticion,
       -- El NOTIFY de las bandejas abiertas en la misma sentencia (sale al confirmar).
       CASE WHEN %(canal)s::text IS NOT NULL
            THEN (SELECT true FROM pg_notify(%(canal)s, %(carga)s)) END AS avisada
FROM encolada
"""
SELECT_APROBACION_SQL = "SELECT * FROM aprobaciones_pendientes WHERE thread_id = %(thread_id)s"
# ``vencida`` con el reloj de la base, el mismo que fijó ``caduca`` al encolar.
# Con la pausa, en la misma lectura, el firmante que decide (``firmante``, la fila de
# ``personas.SELECT_ENCARGADO_SQL``; NULL si no existe o decide el sistema). Las firmas ya
# recogidas NO: una subconsulta usa la foto de la sentencia, tomada antes de esperar al
# FOR UPDATE, y no vería la firma que otra persona acaba de confirmar (las dos creerían
# ser la primera: tests/api/test_firmas.py::test_dos_firmas_a_la_vez_se_recogen_las_dos_y_se_aplica_una_sola_vez).
SELECT_APROBACION_PARA_DECIDIR_SQL = """
SELECT a.*, a.caduca <= now() AS vencida,
       (SELECT to_jsonb(e) FROM (
            SELECT e.id, e.tienda, e.nombre, e.activo, e.rol,
                   array(SELECT ft.tienda FROM firmantes_tienda ft WHERE ft.encargado_id = e.id
                         ORDER BY ft.tienda) AS tiendas
            FROM encargados e WHERE e.id = %(encargado_id)s) e) AS firmante
FROM aprobaciones_pendientes a
WHERE a.thread_id = %(thread_id)s FOR UPDATE OF a
"""
BORRAR_APROBACION_SQL = """
DELETE FROM aprobaciones_pendientes WHERE thread_id = %(thread_id)s
"""
# Una página de la bandeja, la más antigua primero, en una sola sentencia: la página sale
# del índice (tienda, creada, thread_id) y, solo para sus filas, los mensajes retenidos y
# los motivos de la política de cada acción (en el orden de las acciones).
# ``ultimo_mensaje_tienda``: el id del último «Escribir al cliente» del hilo; al cambiar,
# la lista cambia, la bandeja en vivo la emite y la página relee la conversación.
_BANDEJA_SQL = """
SELECT a.*, c.nombre AS cliente_nombre, ti.nombre AS tienda_nombre,
       (SELECT e.nombre FROM encargados e WHERE e.id = a.asignada_a) AS asignada_nombre,
       extract(epoch FROM now() - a.creada)::bigint AS espera_segundos,
       coalesce(r.retenidos, '[]'::jsonb) AS retenidos,
       (SELECT max(s.id) FROM mensajes_tienda s WHERE s.thread_id = a.thread_id) AS ultimo_mensaje_tienda,
       coalesce(m.motivos, '[]'::jsonb) AS motivos,
       coalesce(fi.firmas, '[]'::jsonb) AS firmas
FROM (
    SELECT * FROM aprobaciones_pendientes
    {filtro}
    ORDER BY creada, thread_id
    LIMIT %(limite)s
) a
JOIN clientes c ON c.id = a.cliente_id
JOIN tiendas ti ON ti.id = a.tienda
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object('texto', mc.texto, 'creado', mc.creado) ORDER BY mc.id) AS retenidos
    FROM mensajes_conversacion mc
    WHERE mc.thread_id = a.thread_id AND mc.retenido
) r ON true
LEFT JOIN LATERAL (
    SELECT jsonb_agg(coalesce(e.motivos, '[]'::jsonb) ORDER BY t.n) AS motivos
    FROM jsonb_array_elements_text(coalesce(a.peticion -> 'tool_call_ids', '[]'::jsonb))
         WITH ORDINALITY AS t(tool_call_id, n)
    LEFT JOIN evaluaciones_politica e
           ON e.thread_id = a.thread_id AND e.tool_call_id = t.tool_call_id
) m ON true
LEFT JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object(
               'encargado', f.encargado_id, 'nombre', en.nombre, 'rol', f.rol,
               'decisiones', f.decisiones, 'fecha', f.firmada) ORDER BY f.id) AS firmas
    FROM firmas_aprobacion f JOIN encargados en ON en.id = f.encargado_id
    WHERE f.thread_id = a.thread_id AND f.interrupt_id = a.interrupt_id
) fi ON true
ORDER BY a.creada, a.thread_id
"""
SELECT_BANDEJA_SQL = _BANDEJA_SQL.format(filtro="WHERE tienda = ANY(%(tiendas)s::text[])")
SELECT_BANDEJA_TODAS_SQL = _BANDEJA_SQL.format(filtro="")
SELECT_APROBACION_DETALLE_SQL = _BANDEJA_SQL.format(filtro="WHERE thread_id = %(thread_id)s")


def encolar(
    conexion: psycopg.Connection,
    *,
    thread_id: str,
    tienda: str,
    cliente_id: str,
    interrupt_id: str,
    peticion: dict[str, Any],
    contexto: dict[str, Any],
    trace_id: str | None,
    llamadas: list[dict[str, Any]],
    texto: str | None = None,
    requisito: dict[str, Any] | None = None,
    notificar: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Encola la pausa; ``llamadas`` son las tool_calls con firma del último AIMessage;
    ``requisito``: la autoridad que exige (``firmas.requisito_de_pausa``), fijada aquí.
    ``notificar``: ``(canal, carga)`` de un ``NOTIFY`` que viaja en la misma sentencia.

    Devuelve la petición guardada, con ``tool_call_ids`` en el orden de ``action_requests``.
    """
    return conexion.execute(
        ENCOLAR_SQL,
        {
            "thread_id": thread_id,
            "tienda": tienda,
            "cliente_id": cliente_id,
            "interrupt_id": interrupt_id,
            "peticion": Jsonb(peticion),
            "contexto": Jsonb(contexto),
            "trace_id": trace_id,
            "ids": [t["id"] for t in llamadas],
            "texto": texto,
            "requisito": Jsonb(requisito or {"firmas_necesarias": 1, "rol_minimo": "encargado",
                                              "importe": None, "version_matriz": None,
                                              "matriz_id": None, "acciones": []}),
            "horas_caducidad": DEFECTOS["horas_caducidad"],
            "canal": notificar[0] if notificar else None,
            "carga": notificar[1] if notificar else None,
        },
    ).fetchone()["peticion"]


def aprobacion(conexion: psycopg.Connection, thread_id: str) -> dict | None:
    return conexion.execute(SELECT_APROBACION_SQL, {"thread_id": thread_id}).fetchone()


def aprobacion_detallada(conexion: psycopg.Connection, thread_id: str) -> dict | None:
    """Una fila de la bandeja (con retenidos y motivos), o None si no hay nada pendiente."""
    return conexion.execute(
        SELECT_APROBACION_DETALLE_SQL, {"thread_id": thread_id, "limite": 1}
    ).fetchone()


def bandeja(
    conexion: psycopg.Connection, tiendas: str | list[str] | tuple[str, ...] | None, limite: int = 50
) -> list[dict]:
    """La cola de ``tiendas`` (una, varias —un regional— o None: todas), la más antigua primero."""
    if tiendas is None:
        return conexion.execute(SELECT_BANDEJA_TODAS_SQL, {"limite": limite}).fetchall()
    lista = [tiendas] if isinstance(tiendas, str) else list(tiendas)
    return conexion.execute(SELECT_BANDEJA_SQL, {"tiendas": lista, "limite": limite}).fetchall()


def desencolar(conexion: psycopg.Connection, thread_id: str) -> None:
    conexion.execute(BORRAR_APROBACION_SQL, {"thread_id": thread_id})
