"""Los mensajes que el cliente escribió mientras esperaba a un encargado, contestados.

Mientras la pausa está abierta, un mensaje nuevo no puede llegar al agente (borraría la
aprobación, ``docs/trampas.md``): se guarda como retenido y el encargado lo ve. Cuando la
decisión cierra el turno, ``responder_retenidos`` los entrega al agente en una ejecución
más, con el mismo candado del hilo, y la respuesta llega al cliente como cualquier
mensaje posterior (``NOTIFY``). Trampa: se marcan como entregados ANTES de ejecutar (como
mucho una vez): repetir el turno tras una caída podría tramitar algo dos veces.
"""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage

from agente.servicio.conversaciones import desenlace, mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.resultados import Respuesta
from nucleo.contexto import ContextoCliente
from nucleo.errores import CandadoPerdido

__all__ = ["TIPO_EJECUCION", "responder_retenidos"]

logger = logging.getLogger(__name__)

TIPO_EJECUCION = "turno_cliente"  # es un turno del cliente, aunque llegue tarde

ENTREGAR_RETENIDOS_SQL = """
UPDATE mensajes_conversacion SET entregado_en = now()
WHERE thread_id = %(thread_id)s AND rol = 'cliente' AND retenido AND entregado_en IS NULL
RETURNING id, texto
"""


def responder_retenidos(
    ejecutor: Ejecutor, thread_id: str, ctx: ContextoCliente, *, filas: list[dict] | None = None,
) -> Respuesta | None:
    """Entrega al agente los mensajes retenidos sin entregar (None si no hay ninguno).

    Quien llama tiene el candado del hilo y el hilo ya no está en pausa. Los mensajes van
    juntos, en su orden, como un solo turno del cliente (ya están en la conversación: no
    se anotan otra vez). Si el turno acaba en otra pausa, se encola como cualquier otra.
    ``filas``: los ya marcados como entregados por quien llama (el cierre de la decisión
    lo hace en su misma sentencia, ``desenlace.cerrar_ejecucion(retenidos=...)``); sin
    ellas, se marcan aquí.
    """
    ejecutor.comprobar(thread_id)
    if filas is None:
        with ejecutor.pool.connection() as c:
            filas = c.execute(ENTREGAR_RETENIDOS_SQL, {"thread_id": thread_id}).fetchall()
    filas = sorted(filas, key=lambda f: f["id"])
    if not filas:
        return None
    texto = "\n\n".join(f["texto"] for f in filas)
    trace_id = ejecutor.trazador.nuevo_trace_id()
    config = ejecutor.config(thread_id, ctx, trace_id=trace_id, tipo=TIPO_EJECUCION)
    try:
        ejecucion = ejecutor.ejecutar({"messages": [HumanMessage(texto)]}, config, ctx)
    except CandadoPerdido:
        raise
    except Exception:
        logger.exception("fallo al contestar los mensajes retenidos (hilo %s)", thread_id)
        respuesta = desenlace.disculpa(ejecutor, thread_id, trace_id)
        with ejecutor.pool.connection() as c:
            mensajes.avisar(c, thread_id)
        return respuesta
    return desenlace.cerrar_ejecucion(
        ejecutor, thread_id, ctx, ejecucion, trace_id=trace_id, avisar=True
    )
