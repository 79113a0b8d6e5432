"""Auditoría: ningún euro ni unidad sale sin la firma que exigía la política.

Además (``auditoria_firmas``): cada efecto tuvo las firmas que exigía la autoridad guardada;
y (``auditoria_politica``) la política misma: nadie la amplió sin la firma de alguien por
encima, y cada efecto se ejecutó con los valores fijados al pausar; y (``auditoria_serie``)
nada salió sin firma que una ejecución en serie no habría dejado pasar; y (``verdad``) nada
de lo que el agente dijo al cliente en los últimos días es falso.

Una sola consulta cruza los efectos (la vista ``efectos``: reembolsos, sustituciones y
cualquier otra operación declarada en ``nucleo.operaciones``) con el veredicto
guardado de la política y con las decisiones de los encargados. Un efecto sin
veredicto cuenta como «necesitaba firma»: algo lo creó sin pasar por el agente.
"""

from __future__ import annotations

import datetime as dt

import psycopg

from agente.servicio.auditoria.auditoria_firmas import firmas_que_no_cumplen
from agente.servicio.auditoria.auditoria_libro import auditar_libro, total_hallazgos
from agente.servicio.auditoria.auditoria_politica import auditar_politica
from agente.servicio.auditoria.auditoria_serie import FIRMADO_SQL, FIRMAS_SQL, auditar_serie
from agente.servicio.auditoria.verdad import afirmaciones_falsas
from agente.servicio.resultados import InformeAuditoria
from nucleo.puertos import CLAVE_IMPOSIBLE

__all__ = ["canales_de_firma", "decisiones_fallidas", "efectos_sin_firma", "hallazgos", "informe", "tiempos_de_decision"]

# ``efectos`` es la vista de todas las operaciones con efecto declaradas
# (``nucleo.operaciones``, sql/015): una operación nueva entra sola.
SELECT_EFECTOS_SIN_FIRMA_SQL = f"""
WITH {FIRMAS_SQL.strip()}
SELECT e.tipo, e.numero, e.thread_id, e.tool_call_id, e.tienda, e.importe, e.aprobado_por,
       e.creado, ev.requiere_encargado, ev.motivos
FROM efectos e
LEFT JOIN evaluaciones_politica ev
       ON ev.thread_id = e.thread_id AND ev.tool_call_id = e.tool_call_id
WHERE (ev.requiere_encargado IS NOT FALSE OR ev.umbrales ->> %(imposible)s IS NOT NULL)
  AND NOT {FIRMADO_SQL}
ORDER BY e.creado
"""  # noqa: S608 - constantes de auditoria_serie

# Decisiones aprobadas (o editadas) cuyo efecto no se pudo hacer al aplicarlas (sin stock,
# precio cambiado...): el cliente lo supo y nada se movió, pero el encargado aprobó en balde.
SELECT_DECISIONES_FALLIDAS_SQL = """
SELECT d.id, d.thread_id, d.tienda, d.encargado_id, d.decidida, d.aplicada, d.fallo
FROM decisiones_encargado d
WHERE d.fallo IS NOT NULL
ORDER BY d.decidida
"""

SELECT_TIEMPOS_DECISION_SQL = """
SELECT tienda, count(*) AS decisiones,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY espera_segundos) AS p50,
       percentile_cont(0.9) WITHIN GROUP (ORDER BY espera_segundos) AS p90,
       max(espera_segundos) AS maximo
FROM decisiones_encargado
GROUP BY tienda ORDER BY tienda
"""

# Por qué canal llegó cada firma (la de una aprobación y la de un cambio de política), por
# tienda: informativo; las firmas de antes de registrarlo salen como «sin dato».
SELECT_CANALES_SQL = """
SELECT tienda, coalesce(canal, 'sin dato') AS canal,
       count(*) FILTER (WHERE tipo = 'aprobacion') AS aprobaciones,
       count(*) FILTER (WHERE tipo = 'politica') AS politica
FROM (SELECT tienda, canal, 'aprobacion' AS tipo FROM firmas_aprobacion
      UNION ALL
      SELECT tienda, canal_decision, 'politica' FROM solicitudes_politica WHERE decidida_por IS NOT NULL) f
GROUP BY 1, 2 ORDER BY 1, 2
"""


def canales_de_firma(conexion: psycopg.Connection) -> list[dict]:
    return conexion.execute(SELECT_CANALES_SQL).fetchall()


def efectos_sin_firma(conexion: psycopg.Connection) -> list[dict]:
    # Un veredicto «imposible» no pidió firma: un efecto suyo salió sin ella.
    return conexion.execute(SELECT_EFECTOS_SIN_FIRMA_SQL, {"imposible": CLAVE_IMPOSIBLE}).fetchall()


def decisiones_fallidas(conexion: psycopg.Connection) -> list[dict]:
    return conexion.execute(SELECT_DECISIONES_FALLIDAS_SQL).fetchall()


def tiempos_de_decision(conexion: psycopg.Connection) -> list[dict]:
    return conexion.execute(SELECT_TIEMPOS_DECISION_SQL).fetchall()


def informe(conexion: psycopg.Connection, *, pendientes_mas_de_segundos: float = 3600,
            registros_pasarela=None, afirmaciones_dias: float = 7) -> InformeAuditoria:
    """Efectos sin la firma requerida, hallazgos del libro (todo debería ser vacío),
    decisiones cuyo efecto aprobado falló (se cuentan; no son un hallazgo: nada salió sin
    firma), tiempos de decisión por tienda y las afirmaciones falsas de los mensajes del
    agente de los últimos ``afirmaciones_dias`` días (leerlos todos crecería sin fin)."""
    desde = dt.datetime.now(dt.UTC) - dt.timedelta(days=afirmaciones_dias)
    return InformeAuditoria(
        sin_firma=efectos_sin_firma(conexion),
        firmas=firmas_que_no_cumplen(conexion),
        fallidas=decisiones_fallidas(conexion),
        tiempos=tiempos_de_decision(conexion),
        libro=auditar_libro(conexion, pendientes_mas_de_segundos=pendientes_mas_de_segundos,
                            registros_pasarela=registros_pasarela),
        politica=auditar_politica(conexion),
        serie=auditar_serie(conexion),
        canales=canales_de_firma(conexion),
        afirmaciones=afirmaciones_falsas(conexion, desde=desde),
    )


def hallazgos(informe_: InformeAuditoria) -> int:
    """Cuántos hallazgos hay en total (0 = la auditoría pasa)."""
    return (len(informe_["sin_firma"]) + len(informe_.get("firmas", [])) + total_hallazgos(informe_["libro"])
            + sum(len(v) for v in informe_.get("politica", {}).values())
            + sum(len(v) for v in informe_.get("serie", {}).values())
            + len(informe_.get("afirmaciones", [])))
