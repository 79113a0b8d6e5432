"""Las conversaciones vistas por la tienda (pestaña «Conversaciones» de ``/encargado``) y
«Escribir al cliente»: un mensaje de una persona de la tienda, firmado con su nombre.

- ``buscar``: las conversaciones de unas tiendas (no solo las pendientes), por cliente
  (id o nombre), pedido (cualquier mensaje que lo nombre) y estado para el cliente, en
  páginas. El estado es el mismo que ve el cliente en «Tus conversaciones»
  (``portal_cliente.conversaciones_de``): ``ESTADO_CLIENTE_SQL`` es esa regla en SQL (para
  filtrar y paginar en la base), y una prueba comprueba que las dos coinciden.
- ``transcripcion``: los mensajes del cliente, del agente y de la tienda, por orden.
- ``escribir``: guarda el mensaje en ``mensajes_tienda`` (sql/027: mensaje y auditoría en
  una fila) y avisa al chat abierto (``NOTIFY``) o, si no lo tiene abierto, por correo
  (``avisos_cliente``). Ni toma el candado del hilo ni toca el grafo, la cola o el
  checkpoint: una aprobación pendiente sigue exactamente igual.

El modelo no ve estos mensajes: no están en el estado del grafo (escribir en él con una
pausa pendiente la rompería; ``docs/trampas.md``). Lo que la persona promete lo sabe el
cliente y queda en la transcripción que ven la bandeja y el cliente.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from agente.notificaciones.avisos_cliente import AvisoCliente, avisar_cliente
from agente.servicio.conversaciones import mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.resultados import Encargado
from agente.trazas.mensaje_tienda import registrar_mensaje_tienda
from nucleo.errores import HiloNoEncontrado, Prohibido, TextoNoValido

__all__ = [
    "Atencion",
    "ESTADOS_CLIENTE",
    "ESTADO_CLIENTE_SQL",
    "MAX_TEXTO",
    "Busqueda",
    "buscar",
    "escribir",
    "tiendas_con_nombre",
    "transcripcion",
    "validar_texto",
]

logger = logging.getLogger(__name__)

MAX_TEXTO = 2000
ESTADOS_CLIENTE = ("resuelta", "esperando_tienda", "abierta")
# Una etiqueta o comentario de HTML («<b>», «</p>», «<!--»): el mensaje es texto llano.
_HTML = re.compile(r"<[a-zA-Z/!?]")

# La regla de ``portal_cliente._estado_cliente`` sobre las columnas de ``_BASE_SQL``.
ESTADO_CLIENTE_SQL = """CASE
    WHEN b.estado IN ('esperando_aprobacion', 'necesita_persona') THEN 'esperando_tienda'
    WHEN b.estado = 'cerrada' OR (b.con_desenlace AND b.ultimo_rol IS DISTINCT FROM 'cliente') THEN 'resuelta'
    ELSE 'abierta' END"""
_BASE_SQL = """
SELECT c.thread_id, c.tienda, t.nombre AS tienda_nombre, c.cliente_id, cl.nombre AS cliente_nombre,
       c.estado, c.creada, u.texto AS ultimo_texto, u.rol AS ultimo_rol, u.creado AS ultimo_en,
       greatest(c.actualizada, u.creado, mt.ultimo) AS actividad,
       (SELECT m.texto FROM mensajes_conversacion m
        WHERE m.thread_id = c.thread_id AND m.rol = 'cliente' ORDER BY m.id LIMIT 1) AS tema,
       ARRAY(SELECT DISTINCT x[1] FROM mensajes_conversacion m,
             regexp_matches(m.texto, 'P-[0-9]{8}-[0-9]{4}', 'g') AS x
             WHERE m.thread_id = c.thread_id ORDER BY 1) AS pedidos,
       (EXISTS (SELECT 1 FROM decisiones_encargado d WHERE d.thread_id = c.thread_id)
        OR EXISTS (SELECT 1 FROM efectos e WHERE e.thread_id = c.thread_id)) AS con_desenlace,
       EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = c.thread_id) AS pendiente
FROM consultas_asistente c
JOIN clientes cl ON cl.id = c.cliente_id
JOIN tiendas t ON t.id = c.tienda
LEFT JOIN LATERAL (
    SELECT texto, rol, creado FROM mensajes_conversacion m
    WHERE m.thread_id = c.thread_id ORDER BY m.id DESC LIMIT 1
) u ON true
LEFT JOIN LATERAL (SELECT max(creado) AS ultimo FROM mensajes_tienda s WHERE s.thread_id = c.thread_id) mt ON true
WHERE c.tienda = ANY(%(tiendas)s) AND u.creado IS NOT NULL
"""
BUSCAR_SQL = sql.SQL("""
WITH b AS ({base}
  AND (%(cliente)s::text IS NULL OR strpos(lower(c.cliente_id), lower(%(cliente)s)) > 0
       OR strpos(lower(cl.nombre), lower(%(cliente)s)) > 0)
  AND (%(pedido)s::text IS NULL OR EXISTS (
       SELECT 1 FROM mensajes_conversacion m
       WHERE m.thread_id = c.thread_id AND strpos(upper(m.texto), upper(%(pedido)s)) > 0))
), e AS (SELECT b.*, {estado} AS estado_cliente FROM b)
SELECT e.*, count(*) OVER () AS total FROM e
WHERE %(estado)s::text IS NULL OR e.estado_cliente = %(estado)s
ORDER BY e.actividad DESC, e.thread_id
LIMIT %(limite)s OFFSET %(desde)s
""").format(base=sql.SQL(_BASE_SQL), estado=sql.SQL(ESTADO_CLIENTE_SQL))
UNA_SQL = sql.SQL("""
WITH b AS ({base} AND c.thread_id = %(thread_id)s)
SELECT b.*, {estado} AS estado_cliente FROM b
""").format(base=sql.SQL(_BASE_SQL), estado=sql.SQL(ESTADO_CLIENTE_SQL))
TIENDA_DE_SQL = "SELECT tienda FROM consultas_asistente WHERE thread_id = %(thread_id)s"
TRANSCRIPCION_SQL = """
SELECT id, rol, texto, retenido, creado, autor FROM transcripcion
WHERE thread_id = %(thread_id)s ORDER BY id
"""
INSERT_SQL = """
INSERT INTO mensajes_tienda (thread_id, tienda, encargado_id, autor_nombre, texto)
VALUES (%(thread_id)s, %(tienda)s, %(encargado_id)s, %(autor_nombre)s, %(texto)s)
RETURNING id, thread_id, tienda, encargado_id, autor_nombre AS autor, texto, creado
"""
TIENDAS_SQL = "SELECT id, nombre FROM tiendas WHERE id = ANY(%(tiendas)s) ORDER BY nombre, id"
TRACE_PENDIENTE_SQL = "SELECT trace_id FROM aprobaciones_pendientes WHERE thread_id = %(thread_id)s"


@dataclass(frozen=True)
class Busqueda:
    """Filtros de ``buscar`` (None: sin filtro); ``pagina`` empieza en 1."""

    cliente: str | None = None
    pedido: str | None = None
    estado: str | None = None
    pagina: int = 1
    por_pagina: int = 20


def _recortar(fila: dict[str, Any]) -> dict[str, Any]:
    for campo in ("ultimo_texto", "tema"):
        if fila.get(campo) and len(fila[campo]) > 140:
            fila[campo] = fila[campo][:139] + "…"
    fila.pop("con_desenlace", None)
    fila.pop("total", None)
    return fila


def buscar(conexion: psycopg.Connection, tiendas: list[str], filtro: Busqueda) -> tuple[list[dict[str, Any]], int]:
    """Una página de conversaciones (la de actividad más reciente primero) y el total filtrado."""
    if filtro.estado is not None and filtro.estado not in ESTADOS_CLIENTE:
        raise TextoNoValido(f"estado desconocido: {filtro.estado} (válidos: {', '.join(ESTADOS_CLIENTE)})")
    filas = conexion.execute(BUSCAR_SQL, {
        "tiendas": list(tiendas), "cliente": (filtro.cliente or "").strip() or None,
        "pedido": (filtro.pedido or "").strip() or None, "estado": filtro.estado,
        "limite": filtro.por_pagina, "desde": (filtro.pagina - 1) * filtro.por_pagina,
    }).fetchall()
    total = filas[0]["total"] if filas else 0
    return [_recortar(f) for f in filas], total


def _tienda_del_hilo(conexion: psycopg.Connection, thread_id: str, tiendas: tuple[str, ...]) -> str:
    fila = conexion.execute(TIENDA_DE_SQL, {"thread_id": thread_id}).fetchone()
    if fila is None:
        raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
    if fila["tienda"] not in tiendas:
        raise Prohibido("esta conversación es de una tienda en la que no trabajas")
    return fila["tienda"]


def transcripcion(conexion: psycopg.Connection, thread_id: str, tiendas: tuple[str, ...]) -> dict[str, Any]:
    """La conversación (como en ``buscar``) con todos sus mensajes; 404, o 403 si es de otra tienda."""
    _tienda_del_hilo(conexion, thread_id, tiendas)
    fila = conexion.execute(UNA_SQL, {"tiendas": list(tiendas), "thread_id": thread_id}).fetchone()
    if fila is None:  # una conversación abierta sin ningún mensaje todavía
        raise HiloNoEncontrado(f"la conversación {thread_id} aún no tiene mensajes")
    return {**_recortar(fila),
            "mensajes": conexion.execute(TRANSCRIPCION_SQL, {"thread_id": thread_id}).fetchall()}


def validar_texto(texto: str | None) -> str:
    """El texto sin espacios a los lados; ``TextoNoValido`` (422) si está vacío, es largo o lleva HTML."""
    limpio = (texto or "").strip()
    if not limpio:
        raise TextoNoValido("el mensaje está vacío")
    if len(limpio) > MAX_TEXTO:
        raise TextoNoValido(f"el mensaje es demasiado largo (máximo {MAX_TEXTO} caracteres)")
    if _HTML.search(limpio):
        raise TextoNoValido("el mensaje es texto llano: no puede llevar HTML (etiquetas como <b>)")
    return limpio


def escribir(
    conexion: psycopg.Connection, thread_id: str, *, encargado_id: str, nombre: str,
    tiendas: tuple[str, ...], texto: str,
) -> dict[str, Any]:
    """Guarda el mensaje de la tienda (en la transacción de quien llama) y avisa al chat.

    Devuelve la fila (``id``, ``autor``, ``texto``, ``creado``...) y ``trace_id``: el de la
    aprobación pendiente si la hay (la misma traza de la historia), o None."""
    tienda = _tienda_del_hilo(conexion, thread_id, tiendas)  # 404 y 403 antes que el texto
    limpio = validar_texto(texto)
    fila = conexion.execute(INSERT_SQL, {
        "thread_id": thread_id, "tienda": tienda, "encargado_id": encargado_id,
        "autor_nombre": nombre, "texto": limpio,
    }).fetchone()
    pendiente = conexion.execute(TRACE_PENDIENTE_SQL, {"thread_id": thread_id}).fetchone()
    # El NOTIFY sale al confirmar: el chat lo relee, y las bandejas en vivo (suscritas a
    # todos los avisos) releen la lista, cuyo ``ultimo_mensaje_tienda`` cambia: la tarjeta
    # abierta relee su conversación.
    mensajes.avisar(conexion, thread_id)
    # Sin el chat abierto, el aviso por correo de siempre («tienes una respuesta nueva»), en
    # horario de la tienda y sin encadenar si ya hay uno por salir; nunca rompe el mensaje.
    avisar_cliente(conexion, thread_id, AvisoCliente(suceso="respuesta", clave=f"tienda:{fila['id']}"))
    return {**fila, "trace_id": pendiente["trace_id"] if pendiente else None}


def tiendas_con_nombre(conexion: psycopg.Connection, tiendas: tuple[str, ...]) -> list[dict[str, Any]]:
    return conexion.execute(TIENDAS_SQL, {"tiendas": list(tiendas)}).fetchall()


class Atencion:
    """Lo de arriba sobre el pool y el trazador del servicio (``Servicio.atencion``)."""

    def __init__(self, *, ejecutor: Ejecutor) -> None:
        self._ejecutor = ejecutor

    def buscar(self, tiendas: tuple[str, ...], filtro: Busqueda) -> tuple[list[dict[str, Any]], int]:
        with self._ejecutor.pool.connection() as c:
            return buscar(c, list(tiendas), filtro)

    def transcripcion(self, thread_id: str, tiendas: tuple[str, ...]) -> dict[str, Any]:
        with self._ejecutor.pool.connection() as c:
            return transcripcion(c, thread_id, tiendas)

    def tiendas(self, tiendas: tuple[str, ...]) -> list[dict[str, Any]]:
        with self._ejecutor.pool.connection() as c:
            return tiendas_con_nombre(c, tiendas)

    def escribir(self, thread_id: str, quien: Encargado, texto: str) -> dict[str, Any]:
        """Guarda y avisa (una transacción); después, la traza y la línea de log de auditoría."""
        with self._ejecutor.pool.connection() as c:
            fila = escribir(c, thread_id, encargado_id=quien.encargado_id, nombre=quien.nombre,
                            tiendas=tuple(quien.tiendas), texto=texto)
        fila["trace_id"] = registrar_mensaje_tienda(
            self._ejecutor.trazador, trace_id=fila["trace_id"], thread_id=thread_id,
            mensaje_id=fila["id"], encargado_id=quien.encargado_id, tienda=fila["tienda"], texto=fila["texto"])
        logger.info("mensaje de la tienda %s en %s por %s", fila["id"], thread_id, quien.encargado_id)
        return fila
