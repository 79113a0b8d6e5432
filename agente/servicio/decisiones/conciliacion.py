"""El conciliador: deja cada hilo abierto coherente con la cola y las decisiones.

Repara lo que deja una caída a medias, sin pagar dos veces (las herramientas con efectos
son idempotentes por ``tool_call_id``):

- decisión registrada sin aplicar y la misma pausa pendiente: se reanuda con ella;
- decisión registrada y la ejecución a medias (``next`` sin pausa): se termina;
- decisión registrada y la ejecución terminada sin cerrar: se cierra con su estado;
- hilo en pausa sin fila en la cola: se reencola; fila sin pausa: se borra;
- turno cortado a medias (``next`` sin pausa ni decisión): se termina y se avisa;
- turno terminado sin cerrar (el grafo acabó, pero la respuesta no llegó a la
  conversación: la base se cayó entre el último checkpoint y el cierre): se entrega la
  respuesta guardada en el checkpoint, una vez, sin volver a ejecutar nada (los asientos
  y la cola de movimientos ya escritos quedan como están);
- turno empezado sin respuesta (issue 39, punto 5): el último mensaje es del cliente, nadie
  tiene el hilo, no hay pausa y el grafo no se quedó a medias ni terminó con una respuesta
  sin entregar (el proceso murió justo tras el primer checkpoint del turno, cuyo ``next``
  queda vacío, o antes de él). Pasados ``GRACIA_TURNO`` desde el mensaje, se termina el
  turno como uno normal: desde su checkpoint si el grafo ya tiene el mensaje, o con el
  mensaje si no llegó a entrar; si la ejecución falla, el cliente lee la disculpa de
  siempre y el hilo pasa a una persona, sin nada movido de más (las herramientas con
  efectos son idempotentes por ``tool_call_id``).

Cada hilo se toca solo con su candado libre (``esperar=0``): una ejecución viva no se pisa.
Solo se miran los hilos candidatos a uno de esos casos (``SELECT_HILOS_A_CONCILIAR_SQL``).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from langchain_core.messages import HumanMessage

from agente.servicio.aprobaciones import cola
from agente.servicio.conversaciones import desenlace, mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.conversaciones.turnos import Conversaciones
from agente.servicio.decisiones.decidir import Decisiones
from agente.servicio.resultados import Arreglo, Ejecucion, RegistroDecision
from nucleo.contexto import ContextoCliente
from nucleo.errores import CandadoPerdido, Saturado

__all__ = ["GRACIA_TURNO", "Conciliador"]

logger = logging.getLogger(__name__)

REANUDACION = "reanudacion"
# Lo que espera un mensaje del cliente sin respuesta antes de que el conciliador termine su
# turno: el candado del hilo ya protege a un turno vivo; esto solo evita adelantarse a uno
# que acaba de soltarlo y aún escribe su cierre.
GRACIA_TURNO = timedelta(seconds=30)

SELECT_DECISION_SIN_APLICAR_HILO_SQL = """
SELECT * FROM decisiones_encargado WHERE thread_id = %(thread_id)s AND aplicada IS NULL
ORDER BY decidida LIMIT 1
"""
# Solo los hilos que pueden necesitar arreglo (los casos del docstring): una decisión
# sin aplicar, una fila en la cola (¿sigue la pausa?), una pausa en el último checkpoint
# (¿tiene su fila?) o un turno sin respuesta (el último mensaje es del cliente y no quedó
# retenido: el turno se cortó a medias, o sigue en curso y su candado lo protege). Antes se leía el estado de TODAS las conversaciones abiertas en cada
# pasada: un get_state por conversación y minuto, CPU que crecía con el histórico y se
# quitaba a los turnos en curso (docs/rendimiento.md, sección 7).
SELECT_HILOS_A_CONCILIAR_SQL = """
SELECT c.thread_id, c.cliente_id, c.tienda, c.canal, c.estado FROM consultas_asistente c
WHERE c.estado <> 'cerrada' AND (
    EXISTS (SELECT 1 FROM decisiones_encargado d WHERE d.thread_id = c.thread_id AND d.aplicada IS NULL)
    OR EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = c.thread_id)
    OR EXISTS (
        SELECT 1 FROM checkpoint_writes w
        WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.channel = '__interrupt__'
          AND w.checkpoint_id = (SELECT max(k.checkpoint_id) FROM checkpoints k
                                 WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = ''))
    OR (c.estado = 'abierta' AND EXISTS (
        SELECT 1 FROM mensajes_conversacion m
        WHERE m.thread_id = c.thread_id AND m.rol = 'cliente'
          AND (NOT m.retenido OR m.entregado_en IS NOT NULL)
          AND m.id = (SELECT max(u.id) FROM mensajes_conversacion u WHERE u.thread_id = c.thread_id)))
)
ORDER BY c.actualizada
"""
# ¿Ya está entregado el último mensaje del grafo, y espera el cliente una respuesta? Se
# lee con el candado del hilo tomado (la lista de candidatos se leyó antes de tomarlo).
SELECT_CIERRE_PENDIENTE_SQL = """
SELECT EXISTS (SELECT 1 FROM mensajes_conversacion
               WHERE thread_id = %(thread_id)s AND respuesta_de = %(respuesta_de)s) AS entregada,
       u.rol, u.texto, u.retenido, u.entregado_en
FROM (VALUES (1)) AS una (fila)
LEFT JOIN LATERAL (SELECT rol, texto, retenido, entregado_en FROM mensajes_conversacion
                   WHERE thread_id = %(thread_id)s ORDER BY id DESC LIMIT 1) u ON true
"""
# El último mensaje de la conversación, si es del cliente, ya llegó al agente (o nunca quedó
# retenido) y tiene más de ``gracia``: un turno que empezó y nadie contestó. Se lee con el
# candado del hilo tomado.
SELECT_TURNO_SIN_RESPUESTA_SQL = """
SELECT u.id, u.texto FROM (
    SELECT id, rol, texto, retenido, entregado_en, creado FROM mensajes_conversacion
    WHERE thread_id = %(thread_id)s ORDER BY id DESC LIMIT 1) u
WHERE u.rol = 'cliente' AND (NOT u.retenido OR u.entregado_en IS NOT NULL)
  AND u.creado < now() - %(gracia)s
"""
UPDATE_ESTADO_CONSULTA_SQL = """
UPDATE consultas_asistente SET estado = %(estado)s, actualizada = now()
WHERE thread_id = %(thread_id)s
"""


class Conciliador:
    def __init__(
        self, *, ejecutor: Ejecutor, conversaciones: Conversaciones, decisiones: Decisiones
    ) -> None:
        self._ejecutor = ejecutor
        self._conversaciones = conversaciones
        self._decisiones = decisiones

    def reconciliar(self) -> list[Arreglo]:
        """Concilia cada hilo abierto y libre. Devuelve lo arreglado (``accion="error"`` si falló)."""
        arreglos: list[Arreglo] = []
        with self._ejecutor.pool.connection() as c:
            hilos = c.execute(SELECT_HILOS_A_CONCILIAR_SQL).fetchall()
        for hilo in hilos:
            thread_id = hilo["thread_id"]
            try:
                with self._ejecutor.candado(thread_id, esperar=0) as obtenido:
                    if not obtenido:
                        continue  # una ejecución viva lo tiene: no se toca
                    accion = self._hilo(hilo)
            except Saturado:
                break  # el proceso va lleno: lo demás, en la pasada siguiente
            except Exception:  # un hilo roto no debe parar al resto
                logger.exception("no se pudo conciliar el hilo %s", thread_id)
                arreglos.append(Arreglo(thread_id=thread_id, accion="error"))
                continue
            if accion:
                arreglos.append(Arreglo(thread_id=thread_id, accion=accion))
        return arreglos

    def _hilo(self, hilo: dict[str, Any]) -> str | None:
        thread_id = hilo["thread_id"]
        estado, interrupcion = self._ejecutor.pausa_pendiente(thread_id)
        with self._ejecutor.pool.connection() as c:
            fila_cola = cola.aprobacion(c, thread_id)
            pendiente = c.execute(SELECT_DECISION_SIN_APLICAR_HILO_SQL, {"thread_id": thread_id}).fetchone()
        try:
            ctx = ContextoCliente.desde_json(fila_cola["contexto"])
        except (TypeError, KeyError):  # sin fila o con un contexto ilegible: el de la tabla
            ctx = self._conversaciones.contexto_de_cliente(hilo["cliente_id"], hilo["canal"])
        if pendiente is not None:
            return self._terminar_decision(
                RegistroDecision.desde_fila(pendiente), ctx, estado, interrupcion, fila_cola
            )
        if interrupcion is not None and fila_cola is None:
            desenlace.encolar_pausa(self._ejecutor, thread_id, ctx, interrupcion, trace_id=None)
            return "reencolada"
        if interrupcion is None and fila_cola is not None:
            with self._ejecutor.pool.connection() as c, c.transaction():
                cola.desencolar(c, thread_id)
                c.execute(UPDATE_ESTADO_CONSULTA_SQL, {"thread_id": thread_id, "estado": "abierta"})
            return "fila_obsoleta_borrada"
        if interrupcion is None and estado.next and hilo["estado"] == "abierta":
            return self._terminar_turno(thread_id, ctx, estado)
        if interrupcion is None and not estado.next and hilo["estado"] == "abierta":
            return (self._entregar_cierre(thread_id, ctx, estado)
                    or self._turno_sin_respuesta(thread_id, ctx, estado))
        return None

    def _turno_sin_respuesta(self, thread_id: str, ctx: ContextoCliente, estado: Any) -> str | None:
        """Un turno que empezó (el mensaje del cliente está anotado) y murió sin respuesta ni
        nada a medias que reanudar: se termina y se cierra como un turno normal, una vez.

        Si el último mensaje del cliente en el grafo es este, el turno ya entró (su primer
        checkpoint está escrito): se sigue desde él. Si no, el proceso murió antes y el
        mensaje entra ahora. Si la ejecución falla, la disculpa de siempre (el hilo pasa a
        una persona): el cliente nunca se queda sin respuesta. Quien llama tiene el candado.
        """
        with self._ejecutor.pool.connection() as c:
            fila = c.execute(
                SELECT_TURNO_SIN_RESPUESTA_SQL, {"thread_id": thread_id, "gracia": GRACIA_TURNO}
            ).fetchone()
        if fila is None:
            return None
        mensajes_estado = list((estado.values or {}).get("messages", []))
        ultimo = mensajes_estado[-1] if mensajes_estado else None
        dentro = isinstance(ultimo, HumanMessage) and _texto(ultimo).endswith(fila["texto"])
        trace_id = (estado.metadata or {}).get("trace_id") if dentro else None
        trace_id = trace_id or self._ejecutor.trazador.nuevo_trace_id()
        config = self._ejecutor.config(thread_id, ctx, trace_id=trace_id, tipo=REANUDACION)
        entrada = None if dentro else {"messages": [HumanMessage(fila["texto"])]}
        try:
            ejecucion = self._ejecutor.ejecutar(entrada, config, ctx)
        except CandadoPerdido:
            raise  # otro proceso puede tener ya el hilo: no se escribe nada más
        except Exception:
            logger.exception("no se pudo terminar el turno sin respuesta del hilo %s", thread_id)
            desenlace.disculpa(self._ejecutor, thread_id, trace_id)
            with self._ejecutor.pool.connection() as c:
                mensajes.avisar(c, thread_id)  # el chat abierto la recibe en vivo
            return "turno_disculpado"
        desenlace.cerrar_ejecucion(
            self._ejecutor, thread_id, ctx, ejecucion, trace_id=trace_id, avisar=True,
            desencolar=False,
        )
        return "turno_respondido"

    def _entregar_cierre(self, thread_id: str, ctx: ContextoCliente, estado: Any) -> str | None:
        """Un turno cuyo grafo terminó pero cuyo cierre no se escribió: la respuesta del
        último checkpoint llega al cliente (y su aviso en vivo), una vez.

        Se reconoce sin falsos positivos: el último mensaje del grafo no consta como
        entregado (``respuesta_de``, que escribe cada cierre), el último de la conversación
        es del cliente y ya llegó al agente, y el último mensaje del cliente en el grafo es
        ese mismo texto (un mensaje anotado cuyo turno no llegó a empezar no recibe la
        respuesta del turno anterior). Quien llama tiene el candado del hilo.
        """
        mensajes_estado = list((estado.values or {}).get("messages", []))
        ultimo = mensajes_estado[-1] if mensajes_estado else None
        if ultimo is None or isinstance(ultimo, HumanMessage) or not getattr(ultimo, "id", None):
            return None
        with self._ejecutor.pool.connection() as c:
            fila = c.execute(
                SELECT_CIERRE_PENDIENTE_SQL, {"thread_id": thread_id, "respuesta_de": ultimo.id}
            ).fetchone()
        espera = fila["rol"] == "cliente" and (not fila["retenido"] or fila["entregado_en"] is not None)
        if fila["entregada"] or not espera:
            return None
        humano = next((m for m in reversed(mensajes_estado) if isinstance(m, HumanMessage)), None)
        if humano is None or not _texto(humano).endswith(fila["texto"]):
            return None
        trace_id = (estado.metadata or {}).get("trace_id")
        desenlace.cerrar_ejecucion(
            self._ejecutor, thread_id, ctx, Ejecucion.desde_estado(estado.values),
            trace_id=trace_id, avisar=True, desencolar=False,
        )
        return "turno_entregado"

    def _terminar_turno(self, thread_id: str, ctx: ContextoCliente, estado: Any) -> str:
        """Un turno cortado a medias (parada o caída con una herramienta en curso): se
        termina desde su último checkpoint y se avisa al cliente. Tras una disculpa el hilo
        está en «necesita_persona» y no llega aquí."""
        trace_id = (estado.metadata or {}).get("trace_id")
        config = self._ejecutor.config(thread_id, ctx, trace_id=trace_id, tipo=REANUDACION)
        desenlace.cerrar_ejecucion(
            self._ejecutor, thread_id, ctx, self._ejecutor.ejecutar(None, config, ctx),
            trace_id=trace_id, avisar=True, desencolar=False,
        )
        return "turno_completado"

    def _terminar_decision(
        self,
        registro: RegistroDecision,
        ctx: ContextoCliente,
        estado: Any,
        interrupcion: Any | None,
        fila_cola: dict[str, Any] | None,
    ) -> str:
        decisiones = self._decisiones
        if interrupcion is not None and interrupcion.id == registro.interrupt_id:
            decisiones.reanudar(registro, ctx, tipo=REANUDACION)
            return "decision_aplicada"
        if interrupcion is None and estado.next:
            config = decisiones.config(registro, ctx, tipo=REANUDACION)
            decisiones.cerrar(registro, ctx, self._ejecutor.ejecutar(None, config, ctx))
            return "ejecucion_completada"
        if interrupcion is None:
            # La ejecución terminó pero no llegó a cerrarse la decisión.
            decisiones.cerrar(registro, ctx, Ejecucion.desde_estado(estado.values))
            return "decision_cerrada"
        # Otra pausa posterior: la decisión ya se aplicó a la anterior.
        decisiones.marcar_aplicada(registro, "esperando_aprobacion")
        if fila_cola is None or fila_cola["interrupt_id"] != interrupcion.id:
            desenlace.encolar_pausa(
                self._ejecutor, registro.thread_id, ctx, interrupcion, trace_id=registro.trace_id
            )
        return "decision_cerrada"


def _texto(mensaje: Any) -> str:
    return mensaje.text if hasattr(mensaje, "text") else str(mensaje.content)
