"""Los avisos a quien firma, enganchados al servicio: al pausar, al escalar y al entregar.

- ``avisar_pausa``: dentro de la transacción que encola la pausa (``desenlace``), con la
  autoridad ya fijada (``firmas.requisito_de_pausa``). ``avisar_aprobacion`` nunca lanza
  (un savepoint): un aviso que no se puede encolar no rompe ni pierde la aprobación.
- ``escalar_y_entregar``: en las tareas periódicas; cada parte en su ``try``: un canal
  caído o una tienda mal configurada no paran la caducidad ni la conciliación.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from agente.notificaciones import (
    AvisoAprobacion,
    avisar_aprobacion,
    entregar_segun_ajustes,
    escalar_pendientes,
)
from nucleo import dinero
from nucleo.contexto import ContextoCliente
from politicas.matriz_autoridad import Matriz, Requisito

__all__ = ["avisar_pausa", "escalar_y_entregar"]

logger = logging.getLogger(__name__)

SELECT_MOTIVOS_SQL = """
SELECT motivos FROM evaluaciones_politica WHERE thread_id = %(thread_id)s AND tool_call_id = %(id)s
"""


def avisar_pausa(
    conexion: psycopg.Connection, *, thread_id: str, interrupt_id: str, ctx: ContextoCliente,
    peticion: Mapping[str, Any], requisito: Mapping[str, Any], matriz: Matriz | None = None,
    motivos: Mapping[str, tuple[str, ...]] | None = None,
) -> int:
    """Encola los avisos de la pausa a quien puede firmarla (la acción más exigente manda).

    ``matriz``: la versión ``requisito["matriz_id"]`` si ya se leyó en esta transacción;
    ``motivos``: los de cada veredicto, si ya se leyeron (``firmas.requisito_de_pausa``).
    """
    try:
        ids = list(peticion.get("tool_call_ids") or [])
        solicitudes = list(peticion.get("action_requests") or [])
        acciones = list(requisito.get("acciones") or [])
        principal = next((a for a in acciones if a["tool_call_id"] == _mas_exigente(requisito)), None)
        indice = ids.index(principal["tool_call_id"]) if principal and principal["tool_call_id"] in ids else 0
        solicitud = solicitudes[indice] if indice < len(solicitudes) else {}
        motivos_principal: tuple[str, ...] = ()
        if principal is not None and motivos is not None and principal["tool_call_id"] in motivos:
            motivos_principal = tuple(motivos[principal["tool_call_id"]])
        elif principal is not None:
            fila = conexion.execute(
                SELECT_MOTIVOS_SQL, {"thread_id": thread_id, "id": principal["tool_call_id"]}
            ).fetchone()
            motivos_principal = tuple(fila["motivos"] or ()) if fila else ()
        importe = dinero.importe_o_none(requisito.get("importe"))
        aviso = AvisoAprobacion(
            thread_id=thread_id, interrupt_id=interrupt_id, tienda=ctx.tienda, cliente_id=ctx.cliente_id,
            herramienta=solicitud.get("name") or "", importe=importe,
            pedido=(solicitud.get("args") or {}).get("pedido"), motivos=motivos_principal,
            requisito=Requisito(importe, int(requisito.get("firmas_necesarias") or 1),
                                requisito.get("rol_minimo") or "encargado"),
            matriz_id=requisito.get("matriz_id"), matriz=matriz,
        )
        return avisar_aprobacion(conexion, aviso)  # con su savepoint: nunca lanza
    except Exception:  # los avisos nunca rompen una pausa
        logger.exception("no se pudo preparar el aviso de %s (la pausa sigue)", thread_id)
        return 0


def _mas_exigente(requisito: Mapping[str, Any]) -> str | None:
    for accion in requisito.get("acciones") or []:
        if (accion["firmas"], accion["rol_minimo"], accion["importe"]) == (
            requisito.get("firmas_necesarias"), requisito.get("rol_minimo"), requisito.get("importe")
        ):
            return accion["tool_call_id"]
    return None


def escalar_y_entregar(pool: ConnectionPool, ajustes: Any | None) -> dict[str, Any]:
    """Una pasada de avisos: escala las pausas vencidas y entrega lo pendiente (si hay
    ``ajustes``: canales, URL base, reintentos). Nunca lanza."""
    informe: dict[str, Any] = {}
    try:
        with pool.connection() as conexion:
            informe["escalados"] = escalar_pendientes(conexion)
    except Exception:
        logger.exception("fallo al escalar avisos")
    if ajustes is not None:
        try:
            pasada = entregar_segun_ajustes(pool, ajustes)
            informe["entregados"] = pasada.enviados
        except Exception:
            logger.exception("fallo al entregar avisos")
    return informe
