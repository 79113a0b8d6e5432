"""¿Pasó lo que dice el agente? Cada afirmación de un mensaje, contra la base de SU conversación.

Contrato: ``comprobar_texto(conexion, thread_id, texto)`` y ``afirmaciones_falsas(conexion,
desde=..., hilos=...)`` devuelven una fila por afirmación falsa (vacío = todo lo que dijo
el agente pasó), con ``hallazgo``, ``thread_id``, ``mensaje_id``, ``frase`` y ``detalle``:

- ``referencia_inexistente`` / ``referencia_ajena``: un número (``RE-``…) que no existe, o
  que es de otra conversación;
- ``sin_efecto``: dice que hizo una operación (de ese pedido) que esta conversación no tiene;
- ``importe_distinto``: el importe no es el de ninguna operación de ese tipo del hilo (ni
  su suma: «te he devuelto 49,80» por dos reembolsos de 24,90 es verdad);
- ``estado_distinto``: lo da por hecho («te hemos devuelto», «ya está hecho») y el
  reembolso o el cobro sigue pendiente, o el cambio no está hecho.

Trampa: el estado es el de ahora. Un reembolso que el proveedor deshizo después
(``fallo_tardio_en``) estaba hecho cuando se dijo: no es falso (el cliente ya tiene su
aviso). Los mensajes de una persona de la tienda (``mensajes_tienda``) no se leen.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from decimal import Decimal
from typing import Any

import psycopg

from agente.servicio.auditoria.afirmaciones import PREFIJOS, Afirmacion, extraer
from agente.servicio.resultados import Respuesta
from nucleo import dinero

__all__ = ["afirmaciones_falsas", "comprobar_texto", "puntuar_respuesta"]

logger = logging.getLogger(__name__)

# Cada operación con su número, hilo, pedido, importe (sin signo) y si ya está hecha.
# Un filtro por hilos o por números: PostgreSQL lo lleva a cada rama.
SELECT_EFECTOS_SQL = """
WITH todos AS (
    SELECT 'reembolso' AS operacion, numero, thread_id, pedido_id, importe,
           (estado = 'emitido' OR fallo_tardio_en IS NOT NULL) AS hecho FROM reembolsos
    UNION ALL
    SELECT 'cobro', numero, thread_id, pedido_id, importe,
           (estado = 'confirmado' OR fallo_tardio_en IS NOT NULL) FROM cobros
    UNION ALL
    SELECT 'cambio', numero, thread_id, pedido_id, abs(diferencia), estado = 'hecha' FROM sustituciones
    UNION ALL
    SELECT 'cancelacion', numero, thread_id, pedido_id, importe, true FROM cancelaciones
    UNION ALL
    SELECT 'reenvio', numero, thread_id, pedido_id, valor, true FROM reenvios
    UNION ALL
    SELECT 'vale', numero, thread_id, pedido_id, importe, true FROM vales
    UNION ALL
    SELECT 'direccion', numero, thread_id, pedido_id, importe, true FROM cambios_direccion
)
SELECT operacion, numero, thread_id, pedido_id, importe, hecho FROM todos
WHERE thread_id = ANY(%(hilos)s) OR numero = ANY(%(codigos)s)
"""
# Lo que dijo el agente (no el cliente ni una persona de la tienda), desde ``desde``.
SELECT_MENSAJES_AGENTE_SQL = """
SELECT id, thread_id, texto FROM mensajes_conversacion
WHERE rol = 'agente' AND creado >= %(desde)s
  AND (%(hilos)s::text[] IS NULL OR thread_id = ANY(%(hilos)s))
ORDER BY thread_id, id
"""
CON_IMPORTE = frozenset({"reembolso", "cobro", "vale", "cancelacion"})
NOMBRES = {"reembolso": "reembolso", "cobro": "cobro", "cambio": "cambio de producto",
           "cancelacion": "cancelación", "reenvio": "reenvío", "vale": "vale",
           "direccion": "cambio de dirección"}


def _falsa(afirmacion: Afirmacion, propios: list[dict], hilo_de: dict[str, str]) -> tuple[str, str] | None:
    """(hallazgo, detalle) si la afirmación no cuadra con los efectos ``propios`` del hilo."""
    if afirmacion.tipo == "referencia":
        codigo = afirmacion.codigos[0]
        if any(e["numero"] == codigo for e in propios):
            return None
        if codigo in hilo_de:
            return "referencia_ajena", f"{codigo} es de otra conversación"
        return "referencia_inexistente", f"{codigo} no existe"
    operacion, nombre = afirmacion.operacion, NOMBRES[afirmacion.operacion]
    candidatos = [e for e in propios if e["operacion"] == operacion]
    suyos = [c for c in afirmacion.codigos if PREFIJOS[c[:2]] == operacion]
    if suyos:
        candidatos = [e for e in candidatos if e["numero"] in suyos]
        if not candidatos:
            return None  # el número ya es un hallazgo de referencia: uno por frase
    elif afirmacion.pedido:
        candidatos = [e for e in candidatos if e["pedido_id"] == afirmacion.pedido]
    if not candidatos:
        donde = f" del pedido {afirmacion.pedido}" if afirmacion.pedido and not suyos else ""
        return "sin_efecto", f"ningún {nombre}{donde} en esta conversación"
    if afirmacion.importes and operacion in CON_IMPORTE:
        dichos = set(afirmacion.importes)
        cuadran = [e for e in candidatos if dinero.cuantizar(e["importe"]) in dichos]
        if not cuadran and dinero.sumar(dinero.cuantizar(e["importe"]) for e in candidatos) not in dichos:
            hay = ", ".join(f"{e['numero']} de {dinero.eur(e['importe'])}" for e in candidatos)
            return "importe_distinto", f"{_eurs(afirmacion.importes)}: no es el importe de {hay}"
        candidatos = cuadran or candidatos
    if afirmacion.nivel == "hecho" and not any(e["hecho"] for e in candidatos):
        numeros = ", ".join(e["numero"] for e in candidatos)
        return "estado_distinto", f"lo da por hecho y {numeros} sigue pendiente"
    return None


def _eurs(importes: tuple[Decimal, ...]) -> str:
    return ", ".join(dinero.eur(i) for i in importes)


def _comprobar(conexion: psycopg.Connection, mensajes: list[dict]) -> list[dict[str, Any]]:
    leidos = [(m, extraer(m["texto"])) for m in mensajes]
    hilos = sorted({m["thread_id"] for m in mensajes})
    codigos = sorted({c for _, afs in leidos for a in afs for c in a.codigos})
    if not any(afs for _, afs in leidos):
        return []
    efectos = conexion.execute(SELECT_EFECTOS_SQL, {"hilos": hilos, "codigos": codigos}).fetchall()
    por_hilo: dict[str, list[dict]] = {}
    for e in efectos:
        por_hilo.setdefault(e["thread_id"], []).append(e)
    hilo_de = {e["numero"]: e["thread_id"] for e in efectos}
    falsas = []
    for mensaje, afirmaciones in leidos:
        for afirmacion in afirmaciones:
            fallo = _falsa(afirmacion, por_hilo.get(mensaje["thread_id"], []), hilo_de)
            if fallo:
                falsas.append({"hallazgo": fallo[0], "thread_id": mensaje["thread_id"],
                               "mensaje_id": mensaje.get("id"), "frase": afirmacion.frase,
                               "detalle": fallo[1]})
    return falsas


def comprobar_texto(conexion: psycopg.Connection, thread_id: str, texto: str) -> list[dict[str, Any]]:
    """Las afirmaciones falsas de ``texto`` como mensaje del agente en ``thread_id``."""
    return _comprobar(conexion, [{"id": None, "thread_id": thread_id, "texto": texto}])


def afirmaciones_falsas(
    conexion: psycopg.Connection, *, desde: dt.datetime | None = None, hilos: list[str] | None = None
) -> list[dict[str, Any]]:
    """Las afirmaciones falsas de los mensajes del agente escritos desde ``desde`` (todos
    si es None), de ``hilos`` o de todas las conversaciones."""
    mensajes = conexion.execute(SELECT_MENSAJES_AGENTE_SQL, {
        "desde": desde or dt.datetime(1970, 1, 1, tzinfo=dt.UTC), "hilos": hilos,
    }).fetchall()
    return _comprobar(conexion, mensajes)


def puntuar_respuesta(ejecutor: Any, respuesta: Any) -> Any:
    """La puntuación ``afirmaciones_verdaderas`` (1/0) en la traza del turno; devuelve
    ``respuesta`` tal cual. Sin Langfuse no lee la base; un fallo aquí no llega al cliente."""
    trazador = ejecutor.trazador
    if not isinstance(respuesta, Respuesta) or not respuesta.trace_id or not trazador.activo:
        return respuesta
    try:
        with ejecutor.pool.connection() as c:
            falsas = comprobar_texto(c, respuesta.thread_id, respuesta.mensaje_cliente)
        # Una traza puede tener dos mensajes (la pausa y lo decidido): uno por texto.
        huella = hashlib.sha256(respuesta.mensaje_cliente.encode("utf-8")).hexdigest()[:16]
        trazador.puntuar_afirmaciones(trace_id=respuesta.trace_id, thread_id=respuesta.thread_id,
                                      mensaje=huella, falsas=[f["detalle"] for f in falsas])
    except Exception:
        logger.exception("no se pudo puntuar las afirmaciones del turno de %s", respuesta.thread_id)
    return respuesta
