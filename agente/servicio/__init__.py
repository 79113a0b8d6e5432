"""La capa de servicio: la única puerta al agente para la CLI y la API HTTP.

Responsabilidades que el checkpointer no cubre (ver VERIFIED-FACTS 4, 7, 8):
- la cola de aprobaciones (qué hilos esperan a una persona);
- un mensaje nuevo nunca llega a un hilo en pausa (borraría la aprobación): se guarda;
- una sola decisión por pausa: se registra antes de actuar (write-ahead) y un
  candado por hilo serializa toda ejecución del agente sobre ese hilo;
- al reanudar se pasan de nuevo el contexto del cliente y la traza de la historia.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.types import Command
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from agente.middleware.limites import limite_alcanzado
from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import (
    AprobacionPendiente,
    CandadoPerdido,
    DecisionNoValida,
    HiloNoEncontrado,
    NadaPendiente,
    Prohibido,
    Saturado,
    YaDecidida,
)
from agente.servicio import cola, mensajes, textos
from agente.servicio.candados import CandadosHilo
from agente.servicio.limite import LimiteEjecuciones
from agente.servicio.validacion import validar_decisiones
from herramientas import REGISTRO, Registro

logger = logging.getLogger(__name__)

SISTEMA = "sistema"

INSERT_CONSULTA_SQL = """
INSERT INTO consultas_asistente (thread_id, cliente_id, tienda, canal)
VALUES (%(thread_id)s, %(cliente_id)s, %(tienda)s, %(canal)s)
"""
SELECT_CONSULTA_SQL = "SELECT * FROM consultas_asistente WHERE thread_id = %(thread_id)s"
# Dueño, fila en la cola y, por si la fila se perdió, si el último checkpoint del hilo
# dejó una interrupción (índice de checkpoint_writes; evita cargar el estado en cada turno).
SELECT_CONSULTA_Y_PENDIENTE_SQL = """
SELECT c.cliente_id, a.thread_id IS NOT NULL AS pendiente,
       EXISTS (
           SELECT 1 FROM checkpoint_writes w
           WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.channel = '__interrupt__'
             AND w.checkpoint_id = (SELECT max(k.checkpoint_id) FROM checkpoints k
                                    WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = '')
       ) AS interrumpido
FROM consultas_asistente c LEFT JOIN aprobaciones_pendientes a ON a.thread_id = c.thread_id
WHERE c.thread_id = %(thread_id)s
"""
UPDATE_ESTADO_CONSULTA_SQL = """
UPDATE consultas_asistente SET estado = %(estado)s, actualizada = now()
WHERE thread_id = %(thread_id)s
"""
SELECT_CLIENTE_SQL = "SELECT id, tienda, nombre FROM clientes WHERE id = %(cliente_id)s"
SELECT_ENCARGADO_SQL = "SELECT id, tienda, nombre, activo FROM encargados WHERE id = %(encargado_id)s"
SELECT_VEREDICTOS_SQL = """
SELECT tool_call_id, requiere_encargado, motivos, umbrales FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = ANY(%(ids)s)
"""
INSERT_DECISION_SQL = """
INSERT INTO decisiones_encargado
    (thread_id, interrupt_id, encargado_id, tienda, peticion, decisiones, espera_segundos, trace_id)
VALUES (%(thread_id)s, %(interrupt_id)s, %(encargado_id)s, %(tienda)s, %(peticion)s,
        %(decisiones)s, %(espera)s, %(trace_id)s)
RETURNING id, decidida
"""
MARCAR_DECISION_APLICADA_SQL = """
UPDATE decisiones_encargado SET aplicada = now(), resultado = %(resultado)s WHERE id = %(id)s
"""
SELECT_DECISION_SIN_APLICAR_HILO_SQL = """
SELECT * FROM decisiones_encargado WHERE thread_id = %(thread_id)s AND aplicada IS NULL
ORDER BY decidida LIMIT 1
"""
SELECT_HILOS_ABIERTOS_SQL = """
SELECT thread_id, cliente_id, tienda, canal, estado FROM consultas_asistente
WHERE estado <> 'cerrada' ORDER BY actualizada
"""


@dataclass
class Respuesta:
    estado: str  # "respondida" | "esperando_aprobacion"
    mensaje_cliente: str
    thread_id: str
    trace_id: str | None = None


def _interrupciones(salida) -> list:
    return list(getattr(salida, "interrupts", None) or [])


def _mensaje_final(mensajes_estado: list) -> str:
    for mensaje in reversed(mensajes_estado):
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls and mensaje.content:
            return mensaje.text if hasattr(mensaje, "text") else str(mensaje.content)
        if isinstance(mensaje, HumanMessage):
            break
    return "Lo siento, no he podido completar tu consulta. Una persona de la tienda te atenderá."


class Servicio:
    """Conversaciones, cola de aprobaciones, decisiones, caducidad, conciliación y auditoría."""

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        agente,
        trazador=None,
        espera_candado: float = 30.0,
        registro: Registro = REGISTRO,
        candados: CandadosHilo | None = None,
        limite: LimiteEjecuciones | None = None,
    ):
        """``candados``: los del proceso (por defecto, sobre la base del pool); ``limite``:
        ejecuciones a la vez de este servicio (por defecto 100, 10 s de espera)."""
        from agente.trazas import Trazador

        self.pool = pool
        self.candados = candados or CandadosHilo(conninfo=pool.conninfo)
        self.limite = limite or LimiteEjecuciones(maximo=100, espera=10.0)
        self.registro = registro
        self.agente = agente
        self.trazador = trazador or Trazador()
        self.espera_candado = espera_candado

    # -- configuración de cada ejecución ---------------------------------------------

    def _config(
        self,
        thread_id: str,
        ctx: ContextoCliente,
        *,
        trace_id: str | None,
        tipo: str,
        encargado_id: str | None = None,
    ) -> dict[str, Any]:
        # Solo identificadores: la metadata se copia en cada fila de checkpoint.
        metadata: dict[str, Any] = {
            "thread_id": thread_id,
            "cliente_id": ctx.cliente_id,
            "tienda": ctx.tienda,
            "trace_id": trace_id,
            "tipo_ejecucion": tipo,
        }
        if encargado_id:
            metadata["aprobado_por"] = encargado_id
        trazas = self.trazador.config_ejecucion(
            trace_id=trace_id,
            thread_id=thread_id,
            cliente_id=ctx.cliente_id,
            tienda=ctx.tienda,
            canal=ctx.canal,
            encargado_id=encargado_id,
            tipo=tipo,
        )
        metadata.update(trazas.get("metadata", {}))
        return {
            "configurable": {"thread_id": thread_id},
            "metadata": metadata,
            "callbacks": trazas.get("callbacks", []),
            "run_name": tipo,
        }

    def _invocar(self, entrada, config: dict[str, Any], ctx: ContextoCliente):
        return self.agente.invoke(entrada, config, context=ctx, durability="sync", version="v2")

    # -- conversaciones ---------------------------------------------------------------

    def contexto_de_cliente(self, cliente_id: str, canal: str = "web") -> ContextoCliente:
        with self.pool.connection() as c:
            fila = c.execute(SELECT_CLIENTE_SQL, {"cliente_id": cliente_id}).fetchone()
        if fila is None:
            raise Prohibido(f"cliente desconocido: {cliente_id}")
        return ContextoCliente(cliente_id=fila["id"], tienda=fila["tienda"], nombre=fila["nombre"], canal=canal)

    def iniciar_conversacion(self, ctx: ContextoCliente) -> str:
        thread_id = f"h-{uuid.uuid4().hex}"
        with self.pool.connection() as c:
            c.execute(
                INSERT_CONSULTA_SQL,
                {"thread_id": thread_id, "cliente_id": ctx.cliente_id, "tienda": ctx.tienda, "canal": ctx.canal},
            )
        return thread_id

    def consulta(self, thread_id: str, ctx: ContextoCliente | None = None) -> dict:
        with self.pool.connection() as c:
            fila = c.execute(SELECT_CONSULTA_SQL, {"thread_id": thread_id}).fetchone()
        if fila is None:
            raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
        if ctx is not None and fila["cliente_id"] != ctx.cliente_id:
            raise Prohibido("esta conversación no es tuya")
        return fila

    def historial(self, thread_id: str, ctx: ContextoCliente | None = None, *, desde: int = 0) -> dict:
        consulta = self.consulta(thread_id, ctx)
        with self.pool.connection() as c:
            filas = mensajes.mensajes_de(c, thread_id, desde=desde)
        return {"thread_id": thread_id, "estado": consulta["estado"], "mensajes": filas}

    def _interrupcion_pendiente(self, thread_id: str, config: dict[str, Any]):
        estado = self.agente.get_state(config)
        pendientes = [i for tarea in estado.tasks for i in tarea.interrupts]
        return estado, (pendientes[0] if pendientes else None)

    def conversar(self, thread_id: str, texto: str, ctx: ContextoCliente) -> Respuesta:
        texto = (texto or "").strip()
        if not texto:
            raise DecisionNoValida("el mensaje está vacío")
        with self.limite.ejecucion(), self.candados.hilo(thread_id, esperar=self.espera_candado):
            with self.pool.connection() as c:
                fila = c.execute(SELECT_CONSULTA_Y_PENDIENTE_SQL, {"thread_id": thread_id}).fetchone()
            if fila is None:
                raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
            if fila["cliente_id"] != ctx.cliente_id:
                raise Prohibido("esta conversación no es tuya")
            pendiente = fila["pendiente"]
            if not pendiente and fila["interrumpido"]:
                # La fila de la cola pudo perderse (caída tras la pausa): el checkpoint manda.
                # Mandar un mensaje nuevo a un hilo en pausa borraría la aprobación.
                config_lectura = {"configurable": {"thread_id": thread_id}}
                _, interrupcion = self._interrupcion_pendiente(thread_id, config_lectura)
                if interrupcion is not None:
                    self._encolar_desde_estado(thread_id, ctx, interrupcion, trace_id=None)
                    pendiente = True
            if pendiente:
                with self.pool.connection() as c:
                    mensajes.anotar_mensaje(c, thread_id, "cliente", texto, retenido=True)
                raise AprobacionPendiente(textos.mensaje_retenido(), thread_id=thread_id)

            trace_id = self.trazador.nuevo_trace_id()
            config = self._config(thread_id, ctx, trace_id=trace_id, tipo="turno_cliente")
            with self.pool.connection() as c:
                mensajes.anotar_mensaje(c, thread_id, "cliente", texto)
            try:
                salida = self._invocar({"messages": [HumanMessage(texto)]}, config, ctx)
            except CandadoPerdido:
                raise  # otro proceso puede tener ya el hilo: aquí no se escribe nada más
            except Exception:
                # Proveedor caído tras los reintentos u otro fallo: disculpa corta, nunca una traza.
                logger.exception("fallo en el turno del cliente (hilo %s)", thread_id)
                return self._disculpa(thread_id, trace_id)
            # Sin fila en la cola (comprobado bajo el candado): no hay nada que desencolar.
            return self._tras_ejecucion(
                thread_id, ctx, salida, trace_id=trace_id, avisar=False, desencolar=False
            )

    def _disculpa(self, thread_id: str, trace_id: str | None) -> Respuesta:
        with self.pool.connection() as c:
            mensajes.cerrar_turno(c, thread_id, textos.DISCULPA, estado="necesita_persona", desencolar=False)
        return Respuesta("respondida", textos.DISCULPA, thread_id, trace_id)

    def _encolar_desde_estado(
        self, thread_id, ctx, interrupcion, *, trace_id, mensajes_estado=None, texto=None
    ) -> dict:
        if mensajes_estado is None or trace_id is None:
            estado = self.agente.get_state({"configurable": {"thread_id": thread_id}})
            mensajes_estado = estado.values.get("messages", [])
            # La metadata de la ejecución se copia en cada checkpoint: ahí sigue la traza.
            trace_id = trace_id or (estado.metadata or {}).get("trace_id")
        ultimo = next((m for m in reversed(mensajes_estado) if isinstance(m, AIMessage)), None)
        llamadas = [
            t for t in (ultimo.tool_calls if ultimo else []) if t["name"] in self.registro.decisiones_permitidas()
        ]
        with self.pool.connection() as c:
            return cola.encolar(
                c,
                thread_id=thread_id,
                tienda=ctx.tienda,
                cliente_id=ctx.cliente_id,
                interrupt_id=interrupcion.id,
                peticion=dict(interrupcion.value),
                contexto=ctx.como_json(),
                trace_id=trace_id,
                llamadas=llamadas,
                texto=texto,
            )

    def _tras_ejecucion(
        self, thread_id, ctx, salida, *, trace_id, avisar: bool, desencolar: bool = True
    ) -> Respuesta:
        self.candados.comprobar(thread_id)  # fencing antes de escribir el cierre
        valores = salida.value if hasattr(salida, "value") else salida
        mensajes_estado = valores.get("messages", [])
        interrupciones = _interrupciones(salida)
        if interrupciones:
            texto = textos.mensaje_espera(interrupciones[0].value)
            peticion = self._encolar_desde_estado(
                thread_id, ctx, interrupciones[0], trace_id=trace_id,
                mensajes_estado=mensajes_estado, texto=texto,
            )
            if avisar:
                with self.pool.connection() as c:
                    mensajes.avisar(c, thread_id)
            self._registrar_veredictos(thread_id, peticion, trace_id)
            return Respuesta("esperando_aprobacion", texto, thread_id, trace_id)
        ultimo = mensajes_estado[-1] if mensajes_estado else None
        estado = "necesita_persona" if limite_alcanzado(ultimo) else "abierta"
        texto = _mensaje_final(mensajes_estado)
        with self.pool.connection() as c:
            mensajes.cerrar_turno(c, thread_id, texto, estado=estado, desencolar=desencolar)
            if avisar:
                mensajes.avisar(c, thread_id)
        return Respuesta("respondida", texto, thread_id, trace_id)

    def _registrar_veredictos(self, thread_id: str, peticion: dict, trace_id: str | None) -> None:
        if not trace_id or not self.trazador.activo:
            return
        with self.pool.connection() as c:
            filas = c.execute(
                SELECT_VEREDICTOS_SQL, {"thread_id": thread_id, "ids": peticion.get("tool_call_ids", [])}
            ).fetchall()
        for fila, accion in zip(filas, peticion.get("action_requests", []), strict=False):
            self.trazador.registrar_veredicto(
                trace_id=trace_id,
                herramienta=accion.get("name"),
                tool_call_id=fila["tool_call_id"],
                requiere_encargado=fila["requiere_encargado"],
                motivos=fila["motivos"],
                umbrales=fila["umbrales"],
            )

    # -- cola y decisiones --------------------------------------------------------------

    def aprobaciones_pendientes(self, tienda: str | None, limite: int = 50) -> list[dict]:
        with self.pool.connection() as c:
            filas = cola.bandeja(c, tienda, limite)
        for fila in filas:
            fila["traza_url"] = self.trazador.url_traza(fila["trace_id"]) if fila["trace_id"] else None
        return filas

    def aprobacion(self, thread_id: str, *, tienda: str | None = None) -> dict:
        with self.pool.connection() as c:
            fila = cola.aprobacion_detallada(c, thread_id)
        if fila is None:
            raise NadaPendiente(f"no hay ninguna aprobación pendiente en {thread_id}")
        if tienda is not None and fila["tienda"] != tienda:
            raise Prohibido("esta aprobación es de otra tienda")
        fila["traza_url"] = self.trazador.url_traza(fila["trace_id"]) if fila["trace_id"] else None
        return fila

    def encargado_activo(self, encargado_id: str) -> dict:
        with self.pool.connection() as c:
            encargado = c.execute(SELECT_ENCARGADO_SQL, {"encargado_id": encargado_id}).fetchone()
        if encargado is None:
            raise Prohibido(f"encargado desconocido: {encargado_id}")
        if not encargado["activo"]:
            raise Prohibido(f"el encargado {encargado_id} está dado de baja")
        return encargado

    def decidir(self, thread_id: str, encargado_id: str, decisiones: Any) -> Respuesta:
        """Registra la decisión (write-ahead) y después reanuda el hilo."""
        if encargado_id == SISTEMA:
            raise Prohibido("«sistema» no puede decidir desde fuera")
        # El sitio se toma antes de registrar: con 503 no cambia nada.
        with self.limite.ejecucion():
            return self._decidir(thread_id, encargado_id, decisiones, sistema=False)

    def _decidir(self, thread_id: str, encargado_id: str, decisiones: Any, *, sistema: bool) -> Respuesta:
        with self.pool.connection() as c:
            with c.transaction():
                encargado = None
                if not sistema:
                    encargado = c.execute(SELECT_ENCARGADO_SQL, {"encargado_id": encargado_id}).fetchone()
                    if encargado is None:
                        raise Prohibido(f"encargado desconocido: {encargado_id}")
                    if not encargado["activo"]:
                        raise Prohibido(f"el encargado {encargado_id} está dado de baja")
                fila = c.execute(cola.SELECT_APROBACION_PARA_DECIDIR_SQL, {"thread_id": thread_id}).fetchone()
                if fila is None:
                    if c.execute(SELECT_CONSULTA_SQL, {"thread_id": thread_id}).fetchone() is None:
                        raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
                    raise NadaPendiente(f"no hay ninguna aprobación pendiente en {thread_id}")
                if encargado is not None and encargado["tienda"] != fila["tienda"]:
                    raise Prohibido("esta aprobación es de otra tienda")
                if fila["estado"] != "pendiente":
                    raise YaDecidida("esta aprobación ya está decidida o se está decidiendo")
                normalizadas = validar_decisiones(fila["peticion"], decisiones, conexion=c)
                c.execute(cola.MARCAR_DECIDIENDO_SQL, {"thread_id": thread_id, "encargado": None if sistema else encargado_id})
                espera = Decimal(str(round((datetime.now(UTC) - fila["creada"]).total_seconds(), 2)))
                decision = c.execute(
                    INSERT_DECISION_SQL,
                    {
                        "thread_id": thread_id,
                        "interrupt_id": fila["interrupt_id"],
                        "encargado_id": encargado_id,
                        "tienda": fila["tienda"],
                        "peticion": Jsonb(fila["peticion"]),
                        "decisiones": Jsonb(normalizadas),
                        "espera": espera,
                        "trace_id": fila["trace_id"],
                    },
                ).fetchone()
        self._puntuar(fila, normalizadas, espera, sistema=sistema)
        registro = {
            "id": decision["id"],
            "thread_id": thread_id,
            "interrupt_id": fila["interrupt_id"],
            "encargado_id": encargado_id,
            "decisiones": normalizadas,
            "trace_id": fila["trace_id"],
        }
        return self._aplicar(
            registro,
            ContextoCliente.desde_json(fila["contexto"]),
            tipo="caducidad" if sistema else "decision_encargado",
        )

    def _puntuar(self, fila, decisiones, espera: Decimal, *, sistema: bool) -> None:
        tipos = {d["type"] for d in decisiones}
        tipo = "expired" if sistema else next(
            (t for t in ("reject", "edit", "respond", "approve") if t in tipos), "approve"
        )
        motivo = next((d.get("message") for d in decisiones if d["type"] == "reject"), None)
        self.trazador.puntuar_decision(
            trace_id=fila["trace_id"],
            thread_id=fila["thread_id"],
            interrupt_id=fila["interrupt_id"],
            decision=tipo,
            comentario=motivo,
            espera_minutos=float(espera) / 60,
        )

    def _aplicar(self, decision: dict, ctx: ContextoCliente, *, tipo: str) -> Respuesta:
        """Reanuda con una decisión ya registrada. La usan decidir y el conciliador."""
        thread_id = decision["thread_id"]
        trace_id = decision.get("trace_id")
        encargado = decision["encargado_id"]
        with self.limite.ejecucion(), self.candados.hilo(thread_id, esperar=self.espera_candado):
            config = self._config(
                thread_id, ctx, trace_id=trace_id, tipo=tipo, encargado_id=encargado
            )
            resume = {decision["interrupt_id"]: {"decisions": decision["decisiones"]}}
            salida = self._invocar(Command(resume=resume), config, ctx)
            return self._cerrar_decision(decision, ctx, salida, trace_id)

    def _cerrar_decision(self, decision, ctx, salida, trace_id) -> Respuesta:
        respuesta = self._tras_ejecucion(decision["thread_id"], ctx, salida, trace_id=trace_id, avisar=True)
        with self.pool.connection() as c:
            c.execute(MARCAR_DECISION_APLICADA_SQL, {"id": decision["id"], "resultado": respuesta.estado})
        return respuesta

    # -- caducidad ------------------------------------------------------------------------

    def caducar(self) -> list[str]:
        """Rechaza (o responde, si es una consulta) las aprobaciones sin revisar a tiempo."""
        caducadas = []
        with self.pool.connection() as c:
            hilos = cola.caducadas(c)
        for thread_id in hilos:
            with self.pool.connection() as c:
                fila = cola.aprobacion(c, thread_id)
            if fila is None or fila["estado"] != "pendiente":
                continue
            decisiones = [
                {"type": "respond", "message": textos.RESPUESTA_CADUCIDAD}
                if "reject" not in config["allowed_decisions"]
                else {"type": "reject", "message": textos.MOTIVO_CADUCIDAD}
                for config in fila["peticion"].get("review_configs", [])
            ]
            try:
                with self.limite.ejecucion():
                    self._decidir(thread_id, SISTEMA, decisiones, sistema=True)
                caducadas.append(thread_id)
            except YaDecidida:
                continue
            except Saturado:
                break  # el proceso va lleno: la siguiente pasada sigue
        return caducadas

    # -- conciliador ----------------------------------------------------------------------

    def reconciliar(self) -> list[dict[str, str]]:
        """Deja cada hilo abierto coherente con la cola y las decisiones. Devuelve lo arreglado."""
        arreglos: list[dict[str, str]] = []
        with self.pool.connection() as c:
            hilos = c.execute(SELECT_HILOS_ABIERTOS_SQL).fetchall()
        for hilo in hilos:
            thread_id = hilo["thread_id"]
            try:
                with self.limite.ejecucion(), self.candados.hilo(thread_id, esperar=0) as obtenido:
                    if not obtenido:
                        continue  # una ejecución viva lo tiene: no se toca
                    arreglo = self._reconciliar_hilo(hilo)
            except Saturado:
                break  # el proceso va lleno: la siguiente pasada sigue
            except Exception:  # un hilo roto no debe parar al resto
                logger.exception("no se pudo conciliar el hilo %s", thread_id)
                arreglos.append({"thread_id": thread_id, "accion": "error"})
                continue
            if arreglo:
                arreglos.append({"thread_id": thread_id, "accion": arreglo})
        return arreglos

    def _reconciliar_hilo(self, hilo: dict) -> str | None:
        thread_id = hilo["thread_id"]
        config_lectura = {"configurable": {"thread_id": thread_id}}
        estado, interrupcion = self._interrupcion_pendiente(thread_id, config_lectura)
        with self.pool.connection() as c:
            fila_cola = cola.aprobacion(c, thread_id)
            pendiente = c.execute(SELECT_DECISION_SIN_APLICAR_HILO_SQL, {"thread_id": thread_id}).fetchone()
        try:
            ctx = ContextoCliente.desde_json(fila_cola["contexto"])
        except (TypeError, KeyError):  # sin fila o con un contexto ilegible: el de la tabla
            ctx = self.contexto_de_cliente(hilo["cliente_id"], hilo["canal"])
        if pendiente is not None:
            registro = {
                "id": pendiente["id"],
                "thread_id": thread_id,
                "interrupt_id": pendiente["interrupt_id"],
                "encargado_id": pendiente["encargado_id"],
                "decisiones": pendiente["decisiones"],
                "trace_id": pendiente["trace_id"],
            }
            config = self._config(
                thread_id, ctx, trace_id=pendiente["trace_id"], tipo="reanudacion",
                encargado_id=pendiente["encargado_id"],
            )
            if interrupcion is not None and interrupcion.id == pendiente["interrupt_id"]:
                resume = {pendiente["interrupt_id"]: {"decisions": pendiente["decisiones"]}}
                salida = self._invocar(Command(resume=resume), config, ctx)
                self._cerrar_decision(registro, ctx, salida, pendiente["trace_id"])
                return "decision_aplicada"
            if interrupcion is None and estado.next:
                salida = self._invocar(None, config, ctx)
                self._cerrar_decision(registro, ctx, salida, pendiente["trace_id"])
                return "ejecucion_completada"
            if interrupcion is None:
                # La ejecución terminó pero no llegó a cerrarse la decisión.
                valores = type("Salida", (), {"value": estado.values, "interrupts": ()})()
                self._cerrar_decision(registro, ctx, valores, pendiente["trace_id"])
                return "decision_cerrada"
            # Otra pausa posterior: la decisión ya se aplicó a la anterior.
            with self.pool.connection() as c:
                c.execute(MARCAR_DECISION_APLICADA_SQL, {"id": pendiente["id"], "resultado": "esperando_aprobacion"})
            if fila_cola is None or fila_cola["interrupt_id"] != interrupcion.id:
                self._encolar_desde_estado(thread_id, ctx, interrupcion, trace_id=pendiente["trace_id"])
            return "decision_cerrada"
        if interrupcion is not None and fila_cola is None:
            self._encolar_desde_estado(thread_id, ctx, interrupcion, trace_id=None)
            return "reencolada"
        if interrupcion is None and fila_cola is not None:
            with self.pool.connection() as c, c.transaction():
                cola.desencolar(c, thread_id)
                c.execute(UPDATE_ESTADO_CONSULTA_SQL, {"thread_id": thread_id, "estado": "abierta"})
            return "fila_obsoleta_borrada"
        return None

    # -- auditoría e inspección -----------------------------------------------------------

    def auditoria(self) -> dict[str, list[dict]]:
        from agente.servicio import auditoria

        with self.pool.connection() as c:
            return {
                "sin_firma": auditoria.efectos_sin_firma(c),
                "tiempos": auditoria.tiempos_de_decision(c),
            }

    def estado_hilo(self, thread_id: str) -> dict[str, Any]:
        consulta = self.consulta(thread_id)
        config = {"configurable": {"thread_id": thread_id}}
        estado = self.agente.get_state(config)
        historia = [
            {
                "checkpoint_id": s.config["configurable"].get("checkpoint_id"),
                "siguiente": list(s.next),
                "paso": (s.metadata or {}).get("step"),
                "mensajes": len(s.values.get("messages", [])),
            }
            for s in self.agente.get_state_history(config, limit=50)
        ]
        return {
            "consulta": consulta,
            "siguiente": list(estado.next),
            "interrupciones": [
                {"id": i.id, "valor": i.value} for t in estado.tasks for i in t.interrupts
            ],
            "mensajes": estado.values.get("messages", []),
            "historia": historia,
        }

    def cerrar(self) -> None:
        self.trazador.cerrar()
        self.candados.cerrar()
        self.pool.close()
