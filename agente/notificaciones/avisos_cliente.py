"""Avisos al cliente que no tiene el chat abierto: presencia, y encolar en la cola de avisos.

Cuándo: algo que el cliente espera ocurre más tarde (la decisión de un encargado, una
caducidad, un reembolso o cobro que el sistema completó, un asiento marcado para una
persona) y el cliente no tiene ningún chat conectado a esa conversación. Entonces se
encola un aviso en ``avisos_salida`` (tipo y canal ``cliente``) EN LA TRANSACCIÓN que
escribe el mensaje en el chat: el aviso existe si y solo si el mensaje existe.

- **Presencia**: cada flujo SSE de la conversación (``/api/conversaciones/{hilo}/eventos``)
  tiene una fila en ``presencia_chat`` con un latido cada ``LATIDO_SEGUNDOS``; se borra al
  cerrarse. Cuenta como conectado un latido de hace menos de ``PRESENCIA_SEGUNDOS`` (un
  proceso muerto con SIGKILL deja de contar solo). Se mira por conversación: el chat de
  otra conversación no enseña este mensaje en directo.
- **Una vez por suceso**: la clave es determinista (``clave_aviso_cliente``: hilo y
  suceso, p. ej. la decisión ``decision:42``); encolar dos veces deja una fila.
- **Nunca rompe el chat**: se encola en un savepoint; un error se registra y el mensaje
  del chat sigue.
- **Horario**: lo urgente (la decisión que el cliente espera) sale al momento; lo demás
  (caducidad, pagos, marcados) espera a la apertura de la tienda (``avisos_tienda``).
- **Sin avisos en cadena**: una «respuesta nueva» (p. ej. la contestación a lo que
  escribió mientras esperaba, justo tras la decisión) no se encola si ya hay un aviso
  suyo por salir en esa conversación.
- **Baja**: un cliente con ``clientes.avisos_baja`` no recibe nada (ni se encola, y lo
  encolado se descarta al reclamarlo).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agente.notificaciones.cola_avisos import PRESENCIA_SEGUNDOS
from agente.notificaciones.horario import siguiente_apertura
from agente.notificaciones.trabajador import horario_de_fila

__all__ = [
    "LATIDO_SEGUNDOS",
    "PRESENCIA_SEGUNDOS",
    "AvisoCliente",
    "avisar_cliente",
    "clave_aviso_cliente",
    "dar_de_baja",
    "latido",
    "quitar_presencia",
]

logger = logging.getLogger(__name__)

LATIDO_SEGUNDOS = 10.0  # PRESENCIA_SEGUNDOS (45) deja perder dos latidos sin dejar de contar

LATIDO_SQL = """
INSERT INTO presencia_chat (conexion, cliente_id, thread_id) VALUES (%(conexion)s, %(cliente)s, %(hilo)s)
ON CONFLICT (conexion) DO UPDATE SET latido = now()
"""
QUITAR_PRESENCIA_SQL = """
DELETE FROM presencia_chat
WHERE conexion = %(conexion)s OR latido < now() - make_interval(secs => %(vigencia)s * 4)
"""
# Quién es el cliente de la conversación, si se dio de baja, si tiene un chat conectado a
# ella, el horario de su tienda y, con una decisión, qué se pidió y qué se decidió.
SELECT_DESTINO_SQL = """
SELECT q.cliente_id, q.tienda, t.nombre AS tienda_nombre, cl.nombre AS cliente_nombre,
       cl.avisos_baja IS NOT NULL AS baja,
       EXISTS (SELECT 1 FROM presencia_chat p
               WHERE p.thread_id = q.thread_id AND p.cliente_id = q.cliente_id
                 AND p.latido > now() - make_interval(secs => %(vigencia)s)) AS conectado,
       (SELECT to_jsonb(a) - 'secreto_webhook' FROM avisos_tienda a WHERE a.tienda = q.tienda) AS horario,
       EXISTS (SELECT 1 FROM avisos_salida s
               WHERE s.thread_id = q.thread_id AND s.tipo = 'cliente' AND s.estado = 'pendiente')
           AS ya_avisado,
       d.peticion, d.decisiones, d.encargado_id AS decidio
FROM consultas_asistente q
JOIN clientes cl ON cl.id = q.cliente_id
JOIN tiendas t ON t.id = q.tienda
LEFT JOIN decisiones_encargado d ON d.id = %(decision)s
WHERE q.thread_id = %(hilo)s
"""
INSERT_AVISO_CLIENTE_SQL = """
INSERT INTO avisos_salida
    (clave, thread_id, tienda, cliente_id, canal, direccion, tipo, paso, datos, urgente, proximo_intento)
VALUES (%(clave)s, %(hilo)s, %(tienda)s, %(cliente)s, 'cliente', '', 'cliente', 0, %(datos)s,
        %(urgente)s, %(proximo)s)
ON CONFLICT (clave) DO NOTHING
RETURNING id
"""
# Lo urgente (la decisión que el cliente espera, una respuesta) en UNA sentencia: las mismas
# condiciones que SELECT_DESTINO_SQL en el WHERE y los datos de la plantilla desde las filas.
# Así el cierre del turno no añade una lectura; lo no urgente (que espera al horario de la
# tienda, calculado en Python) sigue leyendo antes.
INSERT_AVISO_URGENTE_SQL = """
INSERT INTO avisos_salida
    (clave, thread_id, tienda, cliente_id, canal, direccion, tipo, paso, datos, urgente, proximo_intento)
SELECT %(clave)s, q.thread_id, q.tienda, q.cliente_id, 'cliente', '', 'cliente', 0,
       %(datos)s || jsonb_build_object('tienda', q.tienda, 'tienda_nombre', t.nombre,
                                       'cliente_nombre', cl.nombre)
           || CASE WHEN d.id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object('decision', jsonb_build_object(
                            'peticion', d.peticion, 'decisiones', d.decisiones),
                        'por_sistema', d.encargado_id = 'sistema') END,
       true, %(proximo)s
FROM consultas_asistente q
JOIN clientes cl ON cl.id = q.cliente_id
JOIN tiendas t ON t.id = q.tienda
LEFT JOIN decisiones_encargado d ON d.id = %(decision)s
WHERE q.thread_id = %(hilo)s
  AND cl.avisos_baja IS NULL
  AND NOT EXISTS (SELECT 1 FROM presencia_chat p
                  WHERE p.thread_id = q.thread_id AND p.cliente_id = q.cliente_id
                    AND p.latido > now() - make_interval(secs => %(vigencia)s))
  AND NOT (%(solo_si_nada_pendiente)s AND EXISTS (
          SELECT 1 FROM avisos_salida s
          WHERE s.thread_id = q.thread_id AND s.tipo = 'cliente' AND s.estado = 'pendiente'))
ON CONFLICT (clave) DO NOTHING
RETURNING id
"""
BAJA_SQL = """
UPDATE clientes SET avisos_baja = coalesce(avisos_baja, now()) WHERE id = %(cliente)s RETURNING id
"""


@dataclass(frozen=True, kw_only=True)
class AvisoCliente:
    """Un suceso que el cliente espera.

    ``suceso``: ``decision``, ``pago``, ``marcado``, ``fallo_tardio`` (un pago que dimos por
    hecho y el proveedor deshizo después) o ``respuesta`` (una respuesta que
    el cliente no esperaba en directo). ``clave``: lo que identifica el suceso dentro del
    hilo (``decision:42``, ``pago:reembolso:7``). ``decision_id``: con una decisión, qué
    se pidió y qué se decidió se leen de ``decisiones_encargado``. ``datos``: lo demás
    que necesita la plantilla (importe, pedido...), sin datos internos.
    """

    suceso: str
    clave: str
    urgente: bool = False
    decision_id: int | None = None
    datos: Mapping[str, Any] = field(default_factory=dict)


def clave_aviso_cliente(thread_id: str, clave: str) -> str:
    return "cl-" + hashlib.sha256(f"{thread_id}\x1f{clave}".encode()).hexdigest()[:40]


def latido(conexion: psycopg.Connection, conexion_id: str, cliente_id: str, thread_id: str) -> None:
    conexion.execute(LATIDO_SQL, {"conexion": conexion_id, "cliente": cliente_id, "hilo": thread_id})


def quitar_presencia(conexion: psycopg.Connection, conexion_id: str) -> None:
    """Borra la presencia de ese flujo (y, de paso, las de procesos muertos hace rato)."""
    conexion.execute(QUITAR_PRESENCIA_SQL, {"conexion": conexion_id, "vigencia": PRESENCIA_SEGUNDOS})


def dar_de_baja(conexion: psycopg.Connection, cliente_id: str) -> bool:
    """El cliente deja de recibir avisos; False si no existe. Repetirla no cambia nada."""
    return conexion.execute(BAJA_SQL, {"cliente": cliente_id}).fetchone() is not None


def avisar_cliente(
    conexion: psycopg.Connection, thread_id: str, aviso: AvisoCliente, *,
    ahora: datetime | None = None,
) -> bool:
    """Encola el aviso si el cliente no tiene el chat conectado; True si se encoló.

    Se llama dentro de la transacción que escribe el mensaje en el chat. Nunca lanza.
    """
    try:
        with conexion.transaction():
            return _avisar(conexion, thread_id, aviso, ahora or datetime.now(UTC))
    except Exception:
        logger.exception("no se pudo encolar el aviso al cliente de %s (el chat sigue)", thread_id)
        return False


def _avisar(conexion: psycopg.Connection, thread_id: str, aviso: AvisoCliente, ahora: datetime) -> bool:
    clave = clave_aviso_cliente(thread_id, aviso.clave)
    base = {**aviso.datos, "suceso": aviso.suceso, "thread_id": thread_id}
    if aviso.urgente:
        insertada = conexion.execute(
            INSERT_AVISO_URGENTE_SQL,
            {"clave": clave, "hilo": thread_id, "datos": Jsonb(base), "proximo": ahora,
             "decision": aviso.decision_id, "vigencia": PRESENCIA_SEGUNDOS,
             # un aviso por salir ya le lleva a la conversación: no uno más
             "solo_si_nada_pendiente": aviso.suceso == "respuesta"},
        ).fetchone()
        return insertada is not None
    fila = conexion.execute(
        SELECT_DESTINO_SQL,
        {"hilo": thread_id, "vigencia": PRESENCIA_SEGUNDOS, "decision": aviso.decision_id},
    ).fetchone()
    if fila is None or fila["baja"] or fila["conectado"]:
        return False
    if aviso.suceso == "respuesta" and fila["ya_avisado"]:
        return False
    datos = {
        **base,
        "tienda": fila["tienda"],
        "tienda_nombre": fila["tienda_nombre"],
        "cliente_nombre": fila["cliente_nombre"],
    }
    if fila["decisiones"] is not None:
        datos["decision"] = {"peticion": fila["peticion"], "decisiones": fila["decisiones"]}
        datos["por_sistema"] = fila["decidio"] == "sistema"
    proximo = siguiente_apertura(horario_de_fila(fila["horario"]), ahora)
    insertada = conexion.execute(
        INSERT_AVISO_CLIENTE_SQL,
        {"clave": clave, "hilo": thread_id,
         "tienda": fila["tienda"], "cliente": fila["cliente_id"], "datos": Jsonb(datos),
         "urgente": aviso.urgente, "proximo": proximo},
    ).fetchone()
    return insertada is not None
