"""Las conversaciones del cliente: abrir, leer y un turno del cliente.

Un mensaje nuevo nunca llega a un hilo en pausa: borraría la aprobación
(``docs/trampas.md``). Se comprueba con el candado del hilo tomado, contra la cola y, por
si la fila se perdió tras una caída, contra el último checkpoint; el mensaje se guarda
como retenido y el cliente recibe ``AprobacionPendiente`` (409). Si otra ejecución tiene el hilo,
``HiloOcupado`` (409 con ``Retry-After``): nada se ha guardado.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage

from agente.bd.pool import ERRORES_BD_CAIDA
from agente.servicio import personas, textos
from agente.servicio.conversaciones import desenlace, mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.conversaciones.en_directo import AlTrozo
from agente.servicio.resultados import Respuesta
from nucleo.contexto import ContextoCliente
from nucleo.errores import (
    AprobacionPendiente,
    CandadoPerdido,
    DecisionNoValida,
    HiloNoEncontrado,
    Prohibido,
)

__all__ = ["Conversaciones", "leer_consulta"]

logger = logging.getLogger(__name__)

INSERT_CONSULTA_SQL = """
INSERT INTO consultas_asistente (thread_id, cliente_id, tienda, canal)
VALUES (%(thread_id)s, %(cliente_id)s, %(tienda)s, %(canal)s)
"""
SELECT_CONSULTA_SQL = "SELECT * FROM consultas_asistente WHERE thread_id = %(thread_id)s"
# Dueño, fila en la cola y, por si la fila se perdió, si el último checkpoint del hilo
# dejó una interrupción (índice de checkpoint_writes; evita cargar el estado en cada turno).
# Dueño, fila en la cola y, por si la fila se perdió, si el último checkpoint del hilo
# dejó una interrupción; en la misma sentencia se anota el mensaje del cliente (solo si
# es el dueño), retenido si el hilo espera a un encargado: un viaje menos por turno.
LEER_Y_ANOTAR_SQL = """
WITH consulta AS (
    SELECT c.cliente_id, a.thread_id IS NOT NULL AS pendiente,
           EXISTS (
               SELECT 1 FROM checkpoint_writes w
               WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = ''
                 AND w.channel = '__interrupt__'
                 AND w.checkpoint_id = (SELECT max(k.checkpoint_id) FROM checkpoints k
                                        WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = '')
           ) AS interrumpido
    FROM consultas_asistente c LEFT JOIN aprobaciones_pendientes a ON a.thread_id = c.thread_id
    WHERE c.thread_id = %(thread_id)s
), anotado AS (
    INSERT INTO mensajes_conversacion (thread_id, rol, texto, retenido)
    SELECT %(thread_id)s, 'cliente', %(texto)s, consulta.pendiente OR consulta.interrumpido
    FROM consulta WHERE consulta.cliente_id = %(cliente_id)s
    RETURNING id
)
SELECT consulta.*, (SELECT id FROM anotado) AS mensaje_id FROM consulta
"""
# La interrupción del checkpoint ya no estaba pendiente: el mensaje no queda retenido.
SOLTAR_MENSAJE_SQL = "UPDATE mensajes_conversacion SET retenido = false WHERE id = %(id)s"


def leer_consulta(conexion: psycopg.Connection, thread_id: str) -> dict[str, Any] | None:
    """La fila de ``consultas_asistente`` del hilo, o None."""
    return conexion.execute(SELECT_CONSULTA_SQL, {"thread_id": thread_id}).fetchone()


def _dueno(fila: dict[str, Any] | None, thread_id: str, ctx: ContextoCliente | None) -> None:
    if fila is None:
        raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
    if ctx is not None and fila["cliente_id"] != ctx.cliente_id:
        raise Prohibido("esta conversación no es tuya")


class Conversaciones:
    def __init__(self, *, ejecutor: Ejecutor) -> None:
        self._ejecutor = ejecutor

    @property
    def _pool(self):
        return self._ejecutor.pool

    def contexto_de_cliente(self, cliente_id: str, canal: str = "web") -> ContextoCliente:
        with self._pool.connection() as c:
            return personas.contexto_de_cliente(c, cliente_id, canal)

    def iniciar(self, ctx: ContextoCliente) -> str:
        thread_id = f"h-{uuid.uuid4().hex}"
        with self._pool.connection() as c:
            c.execute(
                INSERT_CONSULTA_SQL,
                {"thread_id": thread_id, "cliente_id": ctx.cliente_id, "tienda": ctx.tienda,
                 "canal": ctx.canal},
            )
        return thread_id

    def consulta(self, thread_id: str, ctx: ContextoCliente | None = None) -> dict[str, Any]:
        """La fila de la conversación; 404 si no existe, 403 si ``ctx`` no es su dueño."""
        with self._pool.connection() as c:
            fila = leer_consulta(c, thread_id)
        _dueno(fila, thread_id, ctx)
        return fila

    def historial(
        self, thread_id: str, ctx: ContextoCliente | None = None, *, desde: int = 0
    ) -> dict[str, Any]:
        consulta = self.consulta(thread_id, ctx)
        with self._pool.connection() as c:
            filas = mensajes.mensajes_de(c, thread_id, desde=desde)
        return {"thread_id": thread_id, "estado": consulta["estado"], "mensajes": filas}

    def conversar(
        self, thread_id: str, texto: str, ctx: ContextoCliente, *,
        al_trozo: AlTrozo | None = None, callbacks: Sequence[Any] = (),
    ) -> Respuesta:
        """Un turno del cliente. ``AprobacionPendiente`` si el hilo espera a un encargado.

        ``al_trozo``: en directo, recibe el texto del modelo según llega (``en_directo``);
        ``callbacks``: de LangChain, se añaden a los de la ejecución (métricas)."""
        texto = (texto or "").strip()
        if not texto:
            raise DecisionNoValida("el mensaje está vacío")
        ejecutor = self._ejecutor
        with ejecutor.candado(thread_id):
            with self._pool.connection() as c:
                fila = c.execute(
                    LEER_Y_ANOTAR_SQL,
                    {"thread_id": thread_id, "texto": texto, "cliente_id": ctx.cliente_id},
                ).fetchone()
            _dueno(fila, thread_id, ctx)  # si no es el dueño, no se anotó nada
            if fila["pendiente"] or (fila["interrumpido"] and self._reencolar(thread_id, ctx)):
                with self._pool.connection() as c:
                    mensajes.avisar_bandeja(c, ctx.tienda)  # el retenido, a la tarjeta
                raise AprobacionPendiente(textos.mensaje_retenido(), thread_id=thread_id)
            if fila["interrumpido"]:
                with self._pool.connection() as c:
                    c.execute(SOLTAR_MENSAJE_SQL, {"id": fila["mensaje_id"]})

            trace_id = ejecutor.trazador.nuevo_trace_id()
            config = ejecutor.config(thread_id, ctx, trace_id=trace_id, tipo="turno_cliente",
                                     callbacks=callbacks)
            try:
                ejecucion = ejecutor.ejecutar({"messages": [HumanMessage(texto)]}, config, ctx,
                                              al_trozo=al_trozo)
            except CandadoPerdido:
                raise  # otro proceso puede tener ya el hilo: esta ejecución no escribe nada más
            except Exception:
                # Proveedor caído tras los reintentos u otro fallo: disculpa corta, nunca una traza.
                logger.exception("fallo en el turno del cliente (hilo %s)", thread_id)
                return desenlace.disculpa(ejecutor, thread_id, trace_id)
            # Sin fila en la cola (comprobado bajo el candado): no hay nada que desencolar.
            try:
                return desenlace.cerrar_ejecucion(
                    ejecutor, thread_id, ctx, ejecucion, trace_id=trace_id, avisar=False,
                    desencolar=False,
                )
            except (CandadoPerdido, *ERRORES_BD_CAIDA):
                if ejecucion.pausa is not None:
                    raise  # la pausa sin su fila la reencola el conciliador
                # El grafo terminó (su último checkpoint tiene la respuesta) y solo falló el
                # cierre: el cliente sabe ya lo que pasó, nunca un 503 tras un reembolso
                # hecho. El conciliador escribe el cierre después (una vez) y lo avisa.
                logger.warning("turno terminado sin poder cerrarlo (hilo %s): lo cerrará el "
                               "conciliador", thread_id, exc_info=True)
                return Respuesta("respondida", desenlace.mensaje_final(ejecucion.mensajes),
                                 thread_id, trace_id)

    def _reencolar(self, thread_id: str, ctx: ContextoCliente) -> bool:
        """La fila de la cola se perdió (caída tras la pausa) pero el checkpoint manda."""
        _, interrupcion = self._ejecutor.pausa_pendiente(thread_id)
        if interrupcion is None:
            return False
        desenlace.encolar_pausa(self._ejecutor, thread_id, ctx, interrupcion, trace_id=None)
        return True
