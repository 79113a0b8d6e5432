"""La cola de avisos (outbox): encolar dentro de la transacción de quien
avisa, reclamar un lote para entregar y marcar el resultado.

- ``encolar_aviso`` se llama dentro de la transacción de la pausa: el aviso existe si y
  solo si la pausa existe. Clave determinista por (hilo, interrupción, destinatario,
  canal, dirección, tipo, paso): encolar dos veces deja un aviso.
- ``reclamar`` toma un lote con ``FOR UPDATE SKIP LOCKED`` (varios procesos a la vez no
  se pisan) y lo «alquila» ``plazo`` segundos: si el proceso muere tras enviar y antes
  de marcar, el aviso vuelve a salir al vencer el plazo, con la misma clave.
- Un aviso cuya pausa ya no está pendiente, o cuyo contacto se dio de baja, se descarta
  al reclamarlo. Un aviso al cliente (tipo ``cliente``, ``avisos_cliente``) se descarta si
  el cliente se dio de baja o si ya está en el chat de esa conversación (ya lo ha visto).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

__all__ = [
    "PRESENCIA_SEGUNDOS",
    "clave_aviso",
    "encolar_aviso",
    "marcar_descartado",
    "marcar_enviado",
    "marcar_fallo",
    "reclamar",
]

# Un chat cuenta como conectado con un latido de hace menos de esto (agente.notificaciones.avisos_cliente).
PRESENCIA_SEGUNDOS = 45.0

INSERT_AVISO_SQL = """
INSERT INTO avisos_salida
    (clave, thread_id, interrupt_id, tienda, encargado_id, canal, direccion, tipo, paso,
     datos, urgente, proximo_intento)
VALUES (%(clave)s, %(thread_id)s, %(interrupt_id)s, %(tienda)s, %(encargado_id)s, %(canal)s,
        %(direccion)s, %(tipo)s, %(paso)s, %(datos)s, %(urgente)s, %(no_antes_de)s)
ON CONFLICT (clave) DO NOTHING
RETURNING id
"""
# Vigente: su pausa sigue en la cola (misma interrupción) o su solicitud de cambio de
# política sigue pendiente, y su contacto no se dio de baja. Un aviso al cliente: el
# cliente no se dio de baja y no tiene ahora un chat conectado a esa conversación (la
# presencia se mide con el reloj de la base, no con ``ahora``).
RECLAMAR_SQL = """
WITH elegidos AS (
    SELECT s.id,
           CASE WHEN s.tipo = 'cliente' THEN
               NOT EXISTS (SELECT 1 FROM clientes cl
                           WHERE cl.id = s.cliente_id AND cl.avisos_baja IS NOT NULL)
               AND NOT EXISTS (
                   SELECT 1 FROM presencia_chat p
                   WHERE p.thread_id = s.thread_id AND p.cliente_id = s.cliente_id
                     AND p.latido > now() - make_interval(secs => %(presencia)s))
           ELSE
           (CASE WHEN s.tipo = 'cambio_politica' THEN EXISTS (
                SELECT 1 FROM solicitudes_politica sp
                WHERE 'politica:' || sp.id = s.interrupt_id AND sp.estado = 'pendiente')
            ELSE s.thread_id IS NULL OR EXISTS (
               SELECT 1 FROM aprobaciones_pendientes a
               WHERE a.thread_id = s.thread_id AND a.interrupt_id = s.interrupt_id) END)
           AND EXISTS (
               SELECT 1 FROM contactos_firmantes c
               WHERE c.encargado_id = s.encargado_id AND c.canal = s.canal
                 AND c.direccion = s.direccion AND c.baja IS NULL) END AS vigente
    FROM avisos_salida s
    WHERE s.estado = 'pendiente' AND s.proximo_intento <= %(ahora)s AND s.canal = ANY(%(canales)s)
    ORDER BY s.proximo_intento, s.id
    LIMIT %(limite)s
    FOR UPDATE OF s SKIP LOCKED
)
UPDATE avisos_salida s
SET intentos = s.intentos + CASE WHEN e.vigente THEN 1 ELSE 0 END,
    estado = CASE WHEN e.vigente THEN s.estado ELSE 'descartado' END,
    proximo_intento = CASE WHEN e.vigente
                           THEN %(ahora)s + make_interval(secs => %(plazo)s)
                           ELSE s.proximo_intento END,
    ultimo_error = CASE WHEN e.vigente THEN s.ultimo_error
                        WHEN s.tipo = 'cliente' THEN 'el cliente se dio de baja o ya está en el chat'
                        ELSE 'la aprobación ya no está pendiente o el contacto se dio de baja' END
FROM elegidos e
WHERE s.id = e.id
RETURNING s.id, s.clave, s.thread_id, s.tienda, s.canal, s.direccion, s.datos, s.urgente,
          s.intentos, e.vigente, s.tipo, s.cliente_id,
          (SELECT jsonb_build_object('email', cl.email, 'telefono', cl.telefono)
           FROM clientes cl WHERE cl.id = s.cliente_id) AS contacto_cliente,
          (SELECT t.secreto_webhook FROM avisos_tienda t WHERE t.tienda = s.tienda) AS secreto,
          (SELECT to_jsonb(t) - 'secreto_webhook' FROM avisos_tienda t WHERE t.tienda = s.tienda)
              AS horario
"""
MARCAR_ENVIADO_SQL = """
UPDATE avisos_salida SET estado = 'enviado', enviado = %(ahora)s, ultimo_error = NULL
WHERE id = %(id)s AND estado = 'pendiente'
"""
MARCAR_DESCARTADO_SQL = """
UPDATE avisos_salida SET estado = 'descartado', ultimo_error = left(%(motivo)s, 500)
WHERE id = %(id)s AND estado = 'pendiente'
"""
MARCAR_FALLO_SQL = """
UPDATE avisos_salida
SET ultimo_error = left(%(error)s, 500),
    estado = CASE WHEN %(definitivo)s THEN 'fallido' ELSE estado END,
    proximo_intento = %(siguiente)s
WHERE id = %(id)s AND estado = 'pendiente'
"""


def clave_aviso(
    *, thread_id: str | None, interrupt_id: str | None, encargado_id: str, canal: str,
    direccion: str, tipo: str, paso: int,
) -> str:
    """Id determinista del aviso: el mismo aviso encolado dos veces tiene la misma clave."""
    partes = (thread_id or "", interrupt_id or "", encargado_id, canal, direccion, tipo, str(paso))
    return "av-" + hashlib.sha256("\x1f".join(partes).encode()).hexdigest()[:40]


def encolar_aviso(
    conexion: psycopg.Connection,
    *,
    tienda: str,
    encargado_id: str,
    canal: str,
    direccion: str,
    datos: Mapping[str, Any],
    thread_id: str | None = None,
    interrupt_id: str | None = None,
    tipo: str = "pendiente",
    paso: int = 0,
    urgente: bool = False,
    no_antes_de: datetime,
) -> bool:
    """Encola un aviso en la transacción de ``conexion``. False si ya estaba encolado."""
    clave = clave_aviso(
        thread_id=thread_id, interrupt_id=interrupt_id, encargado_id=encargado_id,
        canal=canal, direccion=direccion, tipo=tipo, paso=paso,
    )
    fila = conexion.execute(
        INSERT_AVISO_SQL,
        {
            "clave": clave, "thread_id": thread_id, "interrupt_id": interrupt_id,
            "tienda": tienda, "encargado_id": encargado_id, "canal": canal,
            "direccion": direccion, "tipo": tipo, "paso": paso, "datos": Jsonb(dict(datos)),
            "urgente": urgente, "no_antes_de": no_antes_de,
        },
    ).fetchone()
    return fila is not None


def reclamar(
    conexion: psycopg.Connection, *, canales: Sequence[str], ahora: datetime, limite: int,
    plazo: float,
) -> list[dict]:
    """Toma hasta ``limite`` avisos vencidos de ``canales`` y los alquila ``plazo`` segundos.

    Devuelve también los descartados (``vigente`` falso), ya marcados.
    """
    with conexion.transaction():
        return conexion.execute(
            RECLAMAR_SQL,
            {"canales": list(canales), "ahora": ahora, "limite": limite, "plazo": plazo,
             "presencia": PRESENCIA_SEGUNDOS},
        ).fetchall()


def marcar_enviado(conexion: psycopg.Connection, aviso_id: int, *, ahora: datetime) -> None:
    conexion.execute(MARCAR_ENVIADO_SQL, {"id": aviso_id, "ahora": ahora})


def marcar_descartado(conexion: psycopg.Connection, aviso_id: int, *, motivo: str) -> None:
    conexion.execute(MARCAR_DESCARTADO_SQL, {"id": aviso_id, "motivo": motivo})


def marcar_fallo(
    conexion: psycopg.Connection, aviso_id: int, *, error: str, siguiente: datetime,
    definitivo: bool,
) -> None:
    conexion.execute(
        MARCAR_FALLO_SQL,
        {"id": aviso_id, "error": error, "siguiente": siguiente, "definitivo": definitivo},
    )
