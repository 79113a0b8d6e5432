"""Un intento de una tarea sobre su propia base, por la capa de servicio de verdad.

Turno a turno: el cliente simulado escribe (``Servicio.conversar``); si el agente se
pausa, el encargado simulado decide (``Servicio.decidir``), deja la pausa sin decidir o
la hace vencer (``Servicio.caducar``). Al final se lee de la base lo que pasó y se
comprueba contra lo esperado.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, ToolMessage

from agente.bd.pool import KWARGS_CONEXION
from agente.evaluacion import instantanea
from agente.evaluacion.cliente import ClienteSimulado
from agente.evaluacion.comprobaciones import Observado, comprobar
from agente.evaluacion.encargado import decisiones
from agente.evaluacion.tareas import Tarea
from agente.servicio.auditoria.verdad import afirmaciones_falsas
from nucleo.errores import AprobacionPendiente, ErrorDominio, Prohibido

__all__ = ["Intento", "ensayar"]

VENCER_SQL = """
UPDATE aprobaciones_pendientes SET caduca = now() - interval '1 second'
WHERE thread_id = %(thread_id)s
"""
TRANSCRIPCION_SQL = """
SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(thread_id)s ORDER BY id
"""
ESTADO_SQL = "SELECT estado FROM consultas_asistente WHERE thread_id = %(thread_id)s"
RECHAZO = "User rejected the tool call"


@dataclass(kw_only=True)
class Intento:
    """El resultado de un intento: si salió bien, por qué no, y lo que costó."""

    tarea: str
    exito: bool
    fallos: list[str]
    transcripcion: list[dict[str, str]]
    escalados: list[str]
    segundos: float
    tokens: int = 0
    trace_id: str | None = None
    instantanea: str = ""
    # Lo que el agente dijo que pasó y no está en la base (``agente.servicio.afirmaciones_falsas``).
    afirmaciones_falsas: list[dict[str, Any]] = field(default_factory=list)
    # Su primera respuesta fue una pregunta y nada se hizo ni se pausó con ella.
    pregunto_primero: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _llamadas(mensajes: list[Any]) -> tuple[list[dict[str, Any]], int]:
    """Las llamadas a herramientas del historial (con ``rechazada``) y los tokens gastados."""
    rechazos = {
        m.tool_call_id for m in mensajes
        if isinstance(m, ToolMessage) and str(m.content).startswith(RECHAZO)
    }
    llamadas, tokens = [], 0
    for m in mensajes:
        if isinstance(m, AIMessage):
            tokens += int((m.usage_metadata or {}).get("total_tokens") or 0)
            for c in m.tool_calls:
                llamadas.append({"name": c["name"], "args": c.get("args") or {},
                                 "rechazada": c.get("id") in rechazos})
    return llamadas, tokens


class FirmaIndebida(ErrorDominio):
    """El servicio aceptó una firma que la matriz de autoridad no permite."""


def _decidir_pausas(servicio: Any, hilo: str, acciones: list, quien: str) -> None:
    """El encargado decide cada pausa pendiente, en orden, hasta quedarse sin acciones."""
    while servicio.consulta(hilo)["estado"] == "esperando_aprobacion" and acciones:
        accion = acciones.pop(0)
        if accion.accion == "nunca":
            return
        if accion.accion == "caducar":
            with servicio.pool.connection() as c:
                c.execute(VENCER_SQL, {"thread_id": hilo})
            servicio.caducar()
            continue
        pendiente = servicio.aprobacion(hilo)
        firmante = accion.quien or quien
        try:
            servicio.decidir(hilo, firmante, decisiones(accion, pendiente, servicio.registro))
        except Prohibido:
            if not accion.sin_autoridad:
                raise
            continue  # rechazada como se esperaba: nada cambia y firma el siguiente
        if accion.sin_autoridad:
            raise FirmaIndebida(f"la firma de {firmante} se aceptó y su límite no cubre el importe")


def ensayar(
    tarea: Tarea, *, servicio: Any, url: str, cliente: ClienteSimulado,
    al_turno: Callable[[], None] | None = None,
) -> Intento:
    """Ejecuta ``tarea`` una vez con ``servicio`` (sobre la base ``url``) y la comprueba.

    Un error del servicio (``ErrorDominio``) no corta el intento: se anota como fallo.
    """
    inicio = time.monotonic()
    ctx = servicio.contexto_de_cliente(tarea.cliente, canal="evaluacion")
    hilo = servicio.iniciar_conversacion(ctx)
    acciones = list(tarea.encargado)
    quien = f"enc-{ctx.tienda}"
    efectos_antes: dict[int, int] = {}
    errores: list[str] = []
    trace_id = None
    pregunto_primero = False
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        turno = 0
        while True:
            transcripcion = list(c.execute(TRANSCRIPCION_SQL, {"thread_id": hilo}))
            texto = cliente.siguiente(transcripcion)
            if texto is None:
                break
            turno += 1
            efectos_antes[turno] = instantanea.efectos(c)
            try:
                respuesta = servicio.conversar(hilo, texto, ctx)
                trace_id = trace_id or respuesta.trace_id
            except AprobacionPendiente:
                pass  # el mensaje queda guardado para cuando el encargado decida
            except ErrorDominio as exc:
                errores.append(f"turno {turno}: {exc.mensaje}")
            try:
                _decidir_pausas(servicio, hilo, acciones, quien)
            except ErrorDominio as exc:
                errores.append(f"decisión del encargado: {exc.mensaje}")
            if turno == 1:
                dichas = [m["texto"] for m in list(c.execute(TRANSCRIPCION_SQL, {"thread_id": hilo}))[1:]
                          if m["rol"] == "agente"]
                pregunto_primero = any("?" in d for d in dichas) and not instantanea.efectos(c)
            if al_turno:
                al_turno()
        transcripcion = list(c.execute(TRANSCRIPCION_SQL, {"thread_id": hilo}))
        estado = c.execute(ESTADO_SQL, {"thread_id": hilo}).fetchone()["estado"]
        llamadas, tokens = _llamadas(servicio.estado_hilo(hilo).mensajes)
        falsas = afirmaciones_falsas(c, hilos=[hilo])
        obs = Observado(
            mensajes_agente=[m["texto"] for m in transcripcion if m["rol"] == "agente"],
            transcripcion=transcripcion,
            bd=instantanea.instantanea(c),
            numeros=instantanea.numeros(c),
            escalados=instantanea.escalados(c),
            estado_final="esperando_aprobacion" if estado == "esperando_aprobacion" else "respondida",
            efectos_antes=efectos_antes,
            llamadas=llamadas,
            errores=errores,
        )
    # Decir al cliente algo que no pasó suspende la tarea, aunque lo demás cuadre.
    fallos = comprobar(tarea, obs) + [f"afirmación falsa ({f['hallazgo']}): «{f['frase']}»: {f['detalle']}"
                                      for f in falsas]
    return Intento(
        tarea=tarea.id, exito=not fallos, fallos=fallos, transcripcion=transcripcion,
        escalados=obs.escalados, segundos=time.monotonic() - inicio, tokens=tokens,
        trace_id=trace_id, instantanea=instantanea.hash_instantanea(obs.bd), afirmaciones_falsas=falsas,
        pregunto_primero=pregunto_primero, extra={"bd": obs.bd},
    )
