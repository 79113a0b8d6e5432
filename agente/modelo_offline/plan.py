"""El plan del turno: qué herramienta llamar después, o qué contestar, por cada tarea.

Cada intención tiene su función de pasos (``PASOS``; las de las operaciones con efecto,
por la intención que declara cada una en ``nucleo.operaciones``), que mira las llamadas ya hechas
en este turno y sus resultados (``resultados``) y devuelve un ``Paso``: ``leer`` (una
consulta), ``actuar`` (una operación que puede pedir firma) o ``fin`` (el texto, de
``redaccion``). ``planificar`` junta los pasos de todas las tareas: primero todas las
lecturas, después todas las operaciones en UN solo mensaje (una sola revisión del
encargado) y al final la respuesta.

Si un paso es ``leer`` o ``actuar`` lo dice el registro de herramientas: ``actuar`` es
una herramienta que puede pasar por un encargado. Toda llamada sale por
``Contexto.pedir``: es el sitio donde pedir la confirmación del cliente antes de una
operación con efectos, cuando una regla lo exija.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from agente.modelo_offline import abono, matices, redaccion
from agente.modelo_offline.lectura import Tarea, tareas, texto_de
from agente.modelo_offline.pasos import Contexto, Paso, fin, pedido_consultado
from agente.modelo_offline.resultados import llamadas_desde
from agente.modelo_offline.seguimiento import desenlace_reciente, sigo_aqui, solo_seguimiento
from herramientas.registro import CONSULTAR_ENCARGADO, CONSULTAR_POLITICA
from operaciones import carpetas

__all__ = ["PASOS", "Contexto", "Paso", "Plan", "planificar"]


@dataclass(frozen=True, kw_only=True)
class Plan:
    """Lo que dirá el asistente: llamadas ``(nombre, args)`` o, si no hay, el texto."""

    llamadas: tuple[tuple[str, dict[str, Any]], ...] = ()
    texto: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # va en ``additional_kwargs`` del mensaje


def _paso_estado(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = pedido_consultado(tarea, ctx, "consultar tu pedido")
    if isinstance(pedido, Paso):
        return pedido
    return fin(redaccion.estado_pedido(pedido, tarea.pedido))


def _paso_abono(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = pedido_consultado(tarea, ctx, "decirte cuándo te llega el dinero")
    if isinstance(pedido, Paso):
        return pedido
    return fin(abono.plazo(tarea.pedido, pedido))


def _paso_encargado(tarea: Tarea, ctx: Contexto) -> Paso:
    llamada = ctx.buscar(CONSULTAR_ENCARGADO)
    if llamada is None:
        return ctx.pedir(CONSULTAR_ENCARGADO, {"pregunta": tarea.texto})
    return fin(redaccion.respuesta_encargado(llamada.resultado))


def _paso_politica(tarea: Tarea, ctx: Contexto) -> Paso:
    llamada = ctx.buscar(CONSULTAR_POLITICA)
    if llamada is None:
        return ctx.pedir(CONSULTAR_POLITICA, {})
    if llamada.resultado.tipo != "ok":
        return fin(redaccion.error("consultar las condiciones de la tienda", llamada.resultado))
    return fin(redaccion.condiciones(llamada.resultado))


# Una tarea da un paso o, si toca varias líneas a la vez (un reenvío), una lista.
# Perezosa: el paso de una carpeta importa este paquete (``operaciones/carpetas.py``).
PASOS: Mapping[str, Callable[[Tarea, Contexto], Paso | list[Paso]]] = carpetas.Perezosa(lambda: {
    "estado": _paso_estado,
    "encargado": _paso_encargado,
    abono.INTENCION: _paso_abono,
    "politica": _paso_politica,
    "ayuda": lambda _tarea, _ctx: fin(redaccion.AYUDA),
    "aclarar": lambda tarea, _ctx: fin(redaccion.aclarar(tarea.pedido)),
    "anulada": lambda tarea, _ctx: fin(redaccion.cambio_anulado(tarea.pedido)),
    "retirada": lambda tarea, _ctx: fin(matices.retirada(tarea.pedido)),
    # El de cada carpeta de ``operaciones/``, por la intención que declara.
    **{carpetas.pieza(nombre, "declaracion").OPERACION.offline.intencion: carpetas.pieza(nombre, "paso").paso
       for nombre in carpetas.nombres()},
})


def _agrupar(pasos: Sequence[Paso]) -> Plan:
    for tipo in ("leer", "actuar"):
        vistos: set[str] = set()
        llamadas = []
        for paso in pasos:
            if paso.tipo != tipo:
                continue
            clave = json.dumps([paso.nombre, paso.args], sort_keys=True)
            if clave in vistos:
                continue
            vistos.add(clave)
            llamadas.append((paso.nombre, paso.args))
        if llamadas:
            return Plan(llamadas=tuple(llamadas))
    extra = {k: v for paso in pasos if paso.tipo == "fin" for k, v in paso.args.items()}
    return Plan(texto="\n\n".join(paso.texto for paso in pasos if paso.texto), extra=extra)


def planificar(mensajes: Sequence[BaseMessage], herramientas: set[str] | None = None) -> Plan:
    """El plan para el último mensaje del cliente en ``mensajes`` (función pura).

    ``herramientas``: nombres disponibles; ``None`` = todas (uso sin ``bind_tools``).
    """
    ultimo = max((i for i, m in enumerate(mensajes) if isinstance(m, HumanMessage)), default=-1)
    if ultimo < 0:
        return Plan(texto=redaccion.AYUDA)
    ctx = Contexto(llamadas=llamadas_desde(mensajes[ultimo + 1:]), disponibles=herramientas)
    pendientes = tareas(texto_de(mensajes[ultimo]), mensajes[:ultimo])
    if all(solo_seguimiento(t.tipo, t.texto) for t in pendientes):
        desenlace = desenlace_reciente(mensajes[:ultimo])
        if desenlace:  # p. ej. «¿hay novedades?», escrito mientras decidía el encargado
            return Plan(texto=sigo_aqui(desenlace))
    pasos: list[Paso] = []
    for tarea in pendientes:
        paso = PASOS[tarea.tipo](tarea, ctx)
        pasos.extend(paso if isinstance(paso, list) else [paso])
    return _agrupar(pasos)
