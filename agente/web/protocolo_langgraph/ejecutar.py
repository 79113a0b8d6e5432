"""Una ejecución del protocolo: el turno o la firma por el servicio, con su *run* guardado,
y los eventos que la cuentan (``values``, ``updates``, ``messages``).

Todo lo que el servicio rechaza (403 del límite de firma, 409 de la pausa o del hilo
ocupado, 429...) sale como error HTTP antes de abrir el flujo, con el run en ``error``.
El turno corre entero antes de emitir: los eventos cuentan lo que quedó (los mensajes
nuevos de la transcripción), no los tokens a medida que llegan.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from agente.servicio.aprobaciones.firmas import FirmaParcial
from agente.servicio.fachada import Servicio
from agente.web.en_vivo.directo import ejecutar_decision, ejecutar_turno
from agente.web.protocolo_langgraph import vistas
from agente.web.protocolo_langgraph.identidad import Quien
from agente.web.protocolo_langgraph.peticion import Firma, Turno

__all__ = ["Resultado", "ejecutar", "eventos", "hilo_de", "tipos_de", "valores_finales"]

logger = logging.getLogger(__name__)

# El nodo al que se atribuyen los mensajes en ``updates`` y ``messages``.
NODO = "model"


@dataclass(frozen=True)
class Resultado:
    run: dict[str, Any]
    antes: dict[str, Any]
    despues: dict[str, Any]
    firmas: dict[str, Any] | None = None  # una firma que aún no basta


def hilo_de(servicio: Servicio, thread_id: str, quien: Quien) -> dict[str, Any]:
    """El hilo si ``quien`` puede verlo (404, 403): el suyo, o de una tienda donde firma."""
    if quien.ctx is not None:
        return servicio.hilo_protocolo(thread_id, cliente_id=quien.ctx.cliente_id)
    return servicio.hilo_protocolo(thread_id, tiendas=quien.encargado.tiendas)


def ejecutar(servicio: Servicio, ajustes, thread_id: str, quien: Quien, operacion: Turno | Firma,
             antes: dict[str, Any], metadatos: dict[str, Any] | None) -> Resultado:
    """Síncrono (en un hilo del agente): guarda el run, llama al servicio como ``quien`` y
    cierra el run con su estado (``interrupted`` si el hilo sigue esperando firmas)."""
    if isinstance(operacion, Turno):
        servicio.comprobar_ritmo(quien.ctx.cliente_id, ajustes.mensajes_por_minuto)  # 429
    run = servicio.nueva_ejecucion_protocolo(
        thread_id=thread_id, assistant_id=vistas.ASISTENTE_ID, autor=quien.autor,
        tipo="turno" if isinstance(operacion, Turno) else "firma", metadatos=metadatos)
    firmas = None
    try:
        if isinstance(operacion, Turno):
            ejecutar_turno(servicio, thread_id, operacion.texto, quien.ctx)
        else:
            enc = quien.encargado
            respuesta = ejecutar_decision(servicio, thread_id, enc.encargado_id, enc.tiendas,
                                          operacion.decisiones, operacion.nota, canal="protocolo")
            if isinstance(respuesta, FirmaParcial):
                firmas = {"estado": respuesta.estado, "firmas": respuesta.firmas,
                          "firmas_necesarias": respuesta.firmas_necesarias}
    except BaseException:
        try:
            servicio.terminar_ejecucion_protocolo(run["run_id"], "error")
        except Exception:  # la base caída: el error que cuenta es el de la ejecución
            logger.warning("no se pudo cerrar el run %s", run["run_id"], exc_info=True)
        raise
    despues = hilo_de(servicio, thread_id, quien)
    estado = "interrupted" if despues.get("interrupt_id") is not None else "success"
    run = servicio.terminar_ejecucion_protocolo(run["run_id"], estado) or run
    return Resultado(run=run, antes=antes, despues=despues, firmas=firmas)


def tipos_de(modo: str | list[str]) -> list[str]:
    return [modo] if isinstance(modo, str) else list(dict.fromkeys(modo))


def _evento(tipo: str, datos: Any) -> dict[str, str]:
    return {"event": tipo, "data": json.dumps(datos, ensure_ascii=False, default=str)}


def valores_finales(resultado: Resultado, quien: Quien) -> dict[str, Any]:
    """Los ``values`` del final; con ``__interrupt__`` si el hilo espera firmas (como el
    servidor de LangGraph), y ``__firmas__`` si esta firma aún no bastaba."""
    valores = vistas.valores(resultado.despues)
    pendientes = vistas.interrupciones(resultado.despues, quien)
    if pendientes:
        valores["__interrupt__"] = pendientes
    if resultado.firmas is not None:
        valores["__firmas__"] = resultado.firmas
    return valores


def eventos(resultado: Resultado, quien: Quien, modos: list[str]) -> list[dict[str, str]]:
    """Los eventos SSE de la ejecución, en el orden del protocolo."""
    run_id = str(resultado.run["run_id"])
    thread_id = resultado.despues["thread_id"]
    salida = [_evento("metadata", {"run_id": run_id, "thread_id": thread_id, "attempt": 1})]
    nuevos = vistas.mensajes(resultado.despues, desde=vistas.ultimo_id(resultado.antes))
    del_agente = [m for m in nuevos if m["type"] == "ai"]  # los mensajes de chat: los del agente
    pendientes = vistas.interrupciones(resultado.despues, quien)
    metadatos = {"run_id": run_id, "thread_id": thread_id, "langgraph_node": NODO,
                 "graph_id": vistas.GRAFO, "assistant_id": vistas.ASISTENTE_ID}
    for modo in modos:
        if modo == "messages-tuple":
            salida += [_evento("messages", [m, metadatos]) for m in del_agente]
        elif modo == "messages":
            for m in del_agente:
                salida.append(_evento("messages/metadata", {m["id"]: {"metadata": metadatos}}))
                salida.append(_evento("messages/complete", [m]))
        elif modo == "updates":
            if nuevos:
                salida.append(_evento("updates", {NODO: {"messages": nuevos}}))
            if pendientes:
                salida.append(_evento("updates", {"__interrupt__": pendientes}))
    if "values" in modos:
        salida.append(_evento("values", valores_finales(resultado, quien)))
    return salida
