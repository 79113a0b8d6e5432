"""La bandeja del encargado y sus decisiones: registrar antes de actuar, luego reanudar.

Una sola decisión por pausa (``docs/trampas.md``): en una transacción se bloquea la fila de
la cola (``FOR UPDATE``), se comprueba al firmante (activo y de una de sus tiendas), se
valida la decisión y se recoge su firma (``firmas``: 403 si su límite no alcanza, 409 si ya
firmó). Si aún faltan firmas, la firma queda guardada y la pausa sigue en la cola
(``FirmaParcial``). Cuando la autoridad se cumple (o alguien rechaza), se marca la fila
como ``decidiendo`` y se escribe la decisión combinada en ``decisiones_encargado``
(write-ahead). Después, con el candado del hilo, se reanuda con
``Command(resume={interrupt_id: ...})`` y el contexto guardado del cliente. Si el
proceso muere entre medias, el conciliador aplica lo registrado.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import Command
from psycopg.types.json import Jsonb

from agente.notificaciones.avisos_cliente import AvisoCliente
from agente.servicio import personas
from agente.servicio.aprobaciones import cola, firmas
from agente.servicio.conversaciones import desenlace, mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.conversaciones.retenidos import responder_retenidos
from agente.servicio.conversaciones.turnos import leer_consulta
from agente.servicio.decisiones.ficha import productos_de
from agente.servicio.decisiones.validacion import validar_decisiones, validar_nota
from agente.servicio.resultados import Ejecucion, Encargado, RegistroDecision, Respuesta
from nucleo.contexto import ContextoCliente
from nucleo.errores import (
    HiloNoEncontrado,
    HiloOcupado,
    NadaPendiente,
    PlazoVencido,
    Prohibido,
    YaDecidida,
)
from nucleo.fechas import fecha_hora
from nucleo.registro_log import evento
from politicas.descripcion import CLAVE_DESCRIPCIONES_FIJADAS

__all__ = ["FALLIDA", "SISTEMA", "Decisiones"]

logger = logging.getLogger(__name__)

SISTEMA = "sistema"  # quien «decide» al caducar una aprobación

# La fila de la cola pasa a «decidiendo» y la decisión se escribe en la misma sentencia
# (la fila ya está bloqueada FOR UPDATE por esta transacción): un viaje menos.
INSERT_DECISION_SQL = """
WITH marcada AS (
    UPDATE aprobaciones_pendientes SET estado = 'decidiendo', asignada_a = %(asignada_a)s
    WHERE thread_id = %(thread_id)s AND estado = 'pendiente'
)
INSERT INTO decisiones_encargado
    (thread_id, interrupt_id, encargado_id, tienda, peticion, decisiones, espera_segundos, trace_id,
     nota)
VALUES (%(thread_id)s, %(interrupt_id)s, %(encargado_id)s, %(tienda)s, %(peticion)s,
        %(decisiones)s, %(espera)s, %(trace_id)s, %(nota)s)
RETURNING id, thread_id, interrupt_id, encargado_id, decisiones, trace_id, nota, peticion
"""
MARCAR_DECISION_APLICADA_SQL = """
UPDATE decisiones_encargado SET aplicada = now(), resultado = %(resultado)s, fallo = %(fallo)s
WHERE id = %(id)s
"""
# Las llamadas aprobadas (o editadas) de la decisión que volvieron con error y no dejaron
# asiento en el libro: el efecto que firmó el encargado no se hizo (sin stock al ejecutar,
# precio cambiado...). Un reembolso o cobro que queda pendiente de la pasarela sí tiene
# asiento: no es un fallo, lo completa el sistema.
SELECT_EFECTOS_FALLIDOS_SQL = """
SELECT x.tool_call_id FROM decisiones_encargado d
CROSS JOIN LATERAL jsonb_array_elements_text(d.peticion -> 'tool_call_ids')
    WITH ORDINALITY AS x(tool_call_id, n)
WHERE d.id = %(id)s AND x.tool_call_id = ANY(%(con_error)s)
  AND d.decisiones -> (x.n::int - 1) ->> 'type' IN ('approve', 'edit')
  AND NOT EXISTS (SELECT 1 FROM reembolsos r
                  WHERE r.thread_id = d.thread_id AND r.tool_call_id = x.tool_call_id)
  AND NOT EXISTS (SELECT 1 FROM sustituciones s
                  WHERE s.thread_id = d.thread_id AND s.tool_call_id = x.tool_call_id)
ORDER BY x.n
"""
FALLIDA = "fallida"  # decisiones_encargado.resultado de una decisión cuyo efecto falló
_ORDEN_PUNTUACION = ("reject", "edit", "respond", "approve")  # la más significativa manda


class Decisiones:
    def __init__(self, *, ejecutor: Ejecutor) -> None:
        self._ejecutor = ejecutor

    # -- bandeja --------------------------------------------------------------------------

    def bandeja(
        self, tienda: str | list[str] | tuple[str, ...] | None, limite: int = 50, *,
        firmante: Encargado | None = None,
    ) -> list[dict[str, Any]]:
        """La cola de una tienda, de varias (un regional) o de todas (None). Con ``firmante``,
        cada fila dice además si su firma contaría (``mi_firma``, ``firmas.mi_firma``)."""
        with self._ejecutor.pool.connection() as c:
            filas = cola.bandeja(c, tienda, limite)
            _con_mi_firma(c, filas, firmante)
            _con_productos(c, filas)
        return [self._con_traza(f) for f in filas]

    def aprobacion(
        self, thread_id: str, *, tienda: str | None = None, tiendas: tuple[str, ...] | None = None,
        firmante: Encargado | None = None,
    ) -> dict[str, Any]:
        """La aprobación pendiente de un hilo; ``Prohibido`` si no es de ``tienda`` (o de
        ninguna de ``tiendas``). Con ``firmante``, también ``mi_firma``."""
        with self._ejecutor.pool.connection() as c:
            fila = cola.aprobacion_detallada(c, thread_id)
            _con_mi_firma(c, [fila] if fila else [], firmante)
            _con_productos(c, [fila] if fila else [])
        if fila is None:
            raise NadaPendiente(f"no hay ninguna aprobación pendiente en {thread_id}")
        permitidas = tiendas if tiendas is not None else ((tienda,) if tienda is not None else None)
        if permitidas is not None and fila["tienda"] not in permitidas:
            raise Prohibido("esta aprobación es de otra tienda")
        return self._con_traza(fila)

    def _con_traza(self, fila: dict[str, Any]) -> dict[str, Any]:
        trace_id = fila["trace_id"]
        fila["traza_url"] = self._ejecutor.trazador.url_traza(trace_id) if trace_id else None
        return fila

    def encargado_activo(self, encargado_id: str) -> Encargado:
        with self._ejecutor.pool.connection() as c:
            return personas.encargado_activo(c, encargado_id)

    # -- decidir ----------------------------------------------------------------------------

    def decidir(
        self, thread_id: str, encargado_id: str, decisiones: Any, *, nota: str | None = None,
        canal: str | None = None, callbacks: Sequence[Any] = (),
    ) -> Respuesta | firmas.FirmaParcial:
        """Recoge la firma; si basta, registra la decisión (write-ahead) y reanuda el hilo.
        Si aún faltan firmas, devuelve ``FirmaParcial`` (la pausa sigue en la cola). ``nota``:
        texto del encargado que se añade al mensaje final del cliente. ``canal``: por dónde llegó
        la firma (``web``, ``cli``, ``protocolo``), para la auditoría. ``callbacks``: de
        LangChain, se añaden a los de la reanudación (métricas)."""
        if encargado_id == SISTEMA:
            raise Prohibido("«sistema» no puede decidir desde fuera")
        return self._decidir(thread_id, encargado_id, decisiones, sistema=False, nota=nota, canal=canal,
                             callbacks=callbacks)

    def decidir_como_sistema(self, thread_id: str, decisiones: Any) -> Respuesta:
        """La decisión de la aplicación (caducidad): sin encargado ni comprobación de tienda."""
        return self._decidir(thread_id, SISTEMA, decisiones, sistema=True)

    def _decidir(
        self, thread_id: str, encargado_id: str, decisiones: Any, *, sistema: bool,
        nota: str | None = None, canal: str | None = None, callbacks: Sequence[Any] = (),
    ) -> Respuesta | firmas.FirmaParcial:
        # El sitio se toma antes de registrar: con un 503 (Saturado) no cambia nada.
        with self._ejecutor.sitio():
            return self._registrar_y_aplicar(
                thread_id, encargado_id, decisiones, sistema=sistema, nota=nota, canal=canal,
                callbacks=callbacks,
            )

    def _registrar_y_aplicar(
        self, thread_id: str, encargado_id: str, decisiones: Any, *, sistema: bool,
        nota: str | None = None, canal: str | None = None, callbacks: Sequence[Any] = (),
    ) -> Respuesta | firmas.FirmaParcial:
        registro, fila = self._registrar(
            thread_id, encargado_id, decisiones, sistema=sistema, nota=nota, canal=canal
        )
        if isinstance(registro, firmas.FirmaParcial):
            return registro
        try:
            return self.aplicar(
                registro,
                ContextoCliente.desde_json(fila["contexto"]),
                tipo="caducidad" if sistema else "decision_encargado",
                callbacks=callbacks,
            )
        except HiloOcupado as exc:
            raise HiloOcupado(
                "la decisión está registrada, pero la conversación está ocupada con otra "
                "operación: se aplicará en cuanto quede libre",
                thread_id=thread_id,
                reintentar_en=exc.datos["reintentar_en"],
                registrada=True,
            ) from None

    def _registrar(
        self, thread_id: str, encargado_id: str, decisiones: Any, *, sistema: bool,
        nota: str | None = None, canal: str | None = None,
    ) -> tuple[RegistroDecision | firmas.FirmaParcial, dict[str, Any]]:
        ejecutor = self._ejecutor
        # Sin modo pipeline: en el socket local cuesta más de lo que ahorra en viajes
        # (``python -m bench.transacciones``).
        with ejecutor.pool.connection() as c, c.transaction():
            fila = c.execute(
                cola.SELECT_APROBACION_PARA_DECIDIR_SQL,
                {"thread_id": thread_id, "encargado_id": None if sistema else encargado_id},
            ).fetchone()
            # Quien firma se comprueba antes que la pausa (un desconocido recibe 403, no 404).
            encargado = None if sistema else (
                personas.encargado_activo(c, encargado_id) if fila is None
                else personas.encargado_de_fila(fila["firmante"], encargado_id)
            )
            if fila is None:
                if leer_consulta(c, thread_id) is None:
                    raise HiloNoEncontrado(f"conversación no encontrada: {thread_id}")
                raise NadaPendiente(f"no hay ninguna aprobación pendiente en {thread_id}")
            if encargado is not None and fila["tienda"] not in encargado.tiendas:
                raise Prohibido("esta aprobación es de otra tienda")
            if fila["estado"] != "pendiente":
                raise YaDecidida("esta aprobación ya está decidida o se está decidiendo")
            if fila["vencida"] and not sistema:
                # Un plazo es un plazo, haya pasado o no la caducidad: nada cambia aquí.
                raise PlazoVencido(
                    "esta aprobación caducó el "
                    f"{fecha_hora(fila['caduca'])}: ya no se puede decidir; "
                    "se cerrará como caducada y el cliente recibirá el aviso",
                    thread_id=thread_id,
                )
            normalizadas = validar_decisiones(
                fila["peticion"], decisiones, registro=ejecutor.registro, conexion=c
            )
            if encargado is not None:
                firmado = firmas.firmar(
                    c, fila=fila, firmante=encargado, decisiones=normalizadas,
                    matrices=firmas.MatricesLeidas(c, versiones=ejecutor.versiones_matriz),
                    canal=canal,
                )
                if isinstance(firmado, firmas.FirmaParcial):
                    # Las bandejas abiertas, al momento: la firma nueva cambia recuentos y quién puede.
                    mensajes.avisar_bandeja(c, fila["tienda"])
                    evento(logger, "firma_parcial", thread_id=thread_id, trace_id=fila["trace_id"],
                           encargado_id=encargado_id, tienda=fila["tienda"], firmas=firmado.firmas,
                           firmas_necesarias=firmado.firmas_necesarias)
                    return firmado, fila
                normalizadas = firmado
            espera = Decimal(str(round((datetime.now(UTC) - fila["creada"]).total_seconds(), 2)))
            escrita = c.execute(
                INSERT_DECISION_SQL,
                {
                    "thread_id": thread_id,
                    "asignada_a": None if sistema else encargado_id,
                    "interrupt_id": fila["interrupt_id"],
                    "encargado_id": encargado_id,
                    "tienda": fila["tienda"],
                    "peticion": Jsonb(fila["peticion"]),
                    "decisiones": Jsonb(normalizadas),
                    "espera": espera,
                    "trace_id": fila["trace_id"],
                    "nota": validar_nota(nota),
                },
            ).fetchone()
        self._puntuar(fila, normalizadas, espera, sistema=sistema)
        registro = RegistroDecision.desde_fila(escrita)
        evento(logger, "decision", thread_id=thread_id, trace_id=fila["trace_id"],
               decision_id=registro.id, encargado_id=encargado_id, tienda=fila["tienda"],
               tipos=[d["type"] for d in normalizadas], espera_segundos=float(espera))
        return registro, fila

    def _puntuar(
        self, fila: dict[str, Any], decisiones: list[dict[str, Any]], espera: Decimal, *, sistema: bool
    ) -> None:
        tipos = {d["type"] for d in decisiones}
        tipo = "expired" if sistema else next((t for t in _ORDEN_PUNTUACION if t in tipos), "approve")
        motivo = next((d.get("message") for d in decisiones if d["type"] == "reject"), None)
        self._ejecutor.trazador.puntuar_decision(
            trace_id=fila["trace_id"],
            thread_id=fila["thread_id"],
            interrupt_id=fila["interrupt_id"],
            decision=tipo,
            comentario=motivo,
            espera_minutos=float(espera) / 60,
        )

    # -- aplicar (también lo usa el conciliador) ----------------------------------------------

    def config(
        self, registro: RegistroDecision, ctx: ContextoCliente, *, tipo: str, callbacks: Sequence[Any] = ()
    ) -> dict[str, Any]:
        config = self._ejecutor.config(
            registro.thread_id, ctx, trace_id=registro.trace_id, tipo=tipo,
            encargado_id=registro.encargado_id, callbacks=callbacks,
        )
        config["configurable"][CLAVE_DESCRIPCIONES_FIJADAS] = registro.descripciones
        return config

    def aplicar(
        self, registro: RegistroDecision, ctx: ContextoCliente, *, tipo: str, callbacks: Sequence[Any] = ()
    ) -> Respuesta:
        """Reanuda con una decisión ya registrada, con el candado del hilo."""
        with self._ejecutor.candado(registro.thread_id):
            return self.reanudar(registro, ctx, tipo=tipo, callbacks=callbacks)

    def reanudar(
        self, registro: RegistroDecision, ctx: ContextoCliente, *, tipo: str, callbacks: Sequence[Any] = ()
    ) -> Respuesta:
        """Reanuda la pausa con la decisión. Quien llama ya tiene el candado del hilo."""
        config = self.config(registro, ctx, tipo=tipo, callbacks=callbacks)
        ejecucion = self._ejecutor.ejecutar(Command(resume=registro.resume), config, ctx)
        return self.cerrar(registro, ctx, ejecucion)

    def cerrar(self, registro: RegistroDecision, ctx: ContextoCliente, ejecucion: Ejecucion) -> Respuesta:
        """Guarda el desenlace de la ejecución y marca la decisión como aplicada (``fallida``,
        con el error, si un efecto aprobado no se pudo hacer)."""
        fallo = self._fallo(registro, ejecucion)
        # El cliente que cerró el chat recibe el resultado (urgente: lo está esperando; una
        # caducidad, no). Una vez por decisión, aunque se cierre dos veces.
        aviso = AvisoCliente(
            suceso="decision", clave=f"decision:{registro.id}", decision_id=registro.id,
            urgente=registro.encargado_id != SISTEMA,
            datos={"nota": registro.nota, "fallo": bool(fallo)},
        )

        def marcar_aplicada(conexion, estado: str) -> None:
            # Con el desenlace, en su transacción: aplicada si y solo si cerrada.
            conexion.execute(MARCAR_DECISION_APLICADA_SQL, {
                "id": registro.id, "resultado": FALLIDA if fallo else estado, "fallo": fallo})

        retenidos: list[dict[str, Any]] = []
        respuesta = desenlace.cerrar_ejecucion(
            self._ejecutor, registro.thread_id, ctx, ejecucion, trace_id=registro.trace_id,
            avisar=True, nota=registro.nota, aviso_cliente=aviso, junto_al_cierre=marcar_aplicada,
            retenidos=retenidos,
        )
        if fallo:
            respuesta = replace(respuesta, fallo=fallo)
        if respuesta.estado == "respondida":
            # Lo que el cliente escribió mientras esperaba (el cierre ya lo marcó como
            # entregado): se contesta ya, con el mismo candado.
            responder_retenidos(self._ejecutor, registro.thread_id, ctx, filas=retenidos)
        evento(logger, "decision_aplicada", thread_id=registro.thread_id, trace_id=registro.trace_id,
               decision_id=registro.id, resultado=respuesta.estado)
        return respuesta

    def _fallo(self, registro: RegistroDecision, ejecucion: Ejecucion) -> str | None:
        """El error de los efectos aprobados que no se hicieron, o None (sin consulta si
        ninguna herramienta volvió con error)."""
        errores = {m.tool_call_id: m for m in ejecucion.mensajes
                   if isinstance(m, ToolMessage) and m.status == "error"}
        if not errores:
            return None
        with self._ejecutor.pool.connection() as c:
            fallidas = [f["tool_call_id"] for f in c.execute(
                SELECT_EFECTOS_FALLIDOS_SQL, {"id": registro.id, "con_error": list(errores)}
            ).fetchall()]
        textos = [_sin_prefijo(errores[t].text if hasattr(errores[t], "text") else str(errores[t].content))
                  for t in fallidas]
        return "; ".join(textos) or None

    def marcar_aplicada(self, registro: RegistroDecision, resultado: str, *, fallo: str | None = None) -> None:
        with self._ejecutor.pool.connection() as c:
            c.execute(MARCAR_DECISION_APLICADA_SQL, {"id": registro.id, "resultado": resultado, "fallo": fallo})


def _con_productos(conexion: Any, filas: list[dict[str, Any]]) -> None:
    """El nombre de cada producto que nombran las acciones de ``filas`` (una sentencia)."""
    acciones = [a for f in filas for a in ((f.get("peticion") or {}).get("action_requests") or [])]
    productos = productos_de(conexion, acciones)
    for fila in filas:
        fila["productos"] = productos


def _con_mi_firma(conexion, filas: list[dict[str, Any]], firmante: Encargado | None) -> None:
    if firmante is not None:
        matrices = firmas.MatricesLeidas(conexion)  # una lectura por versión de la matriz
        for fila in filas:
            fila["mi_firma"] = firmas.mi_firma(matrices, fila, firmante)


def _sin_prefijo(texto: str) -> str:
    return texto.removeprefix("Error: ").strip()
