"""Turnos y decisiones vistos desde la web: métricas, y la respuesta en directo (SSE).

La respuesta en directo emite los tokens del modelo según llegan: el turno corre con
``Servicio.conversar_en_directo``, que recorre ``stream`` de LangGraph (modos ``messages`` y
``values``; ver ``agente.servicio.conversaciones.en_directo``) y pasa cada trozo de texto
del nodo del modelo, y cada «descartar», a un buzón que los lleva al bucle de eventos. Las
métricas de errores de herramienta van como callback explícito de cada ejecución.

Eventos del flujo (``text/event-stream``):

- ``token`` ``{"texto"}``: un trozo de la respuesta;
- ``descartar`` ``{}``: lo emitido hasta ahora no es la respuesta final (el modelo acabó
  pidiendo herramientas, o el turno terminó en pausa): se borra;
- ``estado`` ``{"estado", "mensajes": [{"rol": "agente", "texto"}]}``: el final, con el texto
  definitivo (lo que queda guardado en la conversación);
- ``error`` ``{"codigo", "detalle"}``: el turno falló después de empezar a emitir;
- ``fin`` ``{"motivo", "detalle"}``: el cliente perdió el acceso a mitad (su token caducó):
  el flujo se cierra; el turno sigue y su respuesta queda en la conversación
  (``agente.web.infra.vigencia``).

Si lo emitido no coincide con el texto definitivo (modelo sin streaming, o pausa para el
encargado: ese texto lo redacta la aplicación), se descarta y se envía el definitivo por
palabras antes de ``estado``.

Cada ejecución del agente (turno o decisión) corre en un hilo. El límite de ejecuciones
a la vez lo pone el servicio (``agente.servicio.conversaciones.limite``, ``AGENTE_EJECUCIONES_MAX``); la
web solo necesita hilos de sobra para llegar a él (``agente.web.infra.hebras``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.infra import metricas
from agente.web.infra.disponibilidad import DETALLE_BD_CAIDA
from agente.web.infra.hebras import HebrasDelAgente, en_hebra_del_agente
from agente.web.infra.vigencia import Fin, Vigencia
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio

logger = logging.getLogger(__name__)

_PALABRAS = re.compile(r"\S+\s*|\s+")


def _conversar(servicio, thread_id: str, texto: str, ctx: ContextoCliente,
               al_trozo: Callable[[str, str], None] | None):
    contador = [metricas.ContadorErroresHerramienta()]
    if al_trozo is None:
        return servicio.conversar(thread_id, texto, ctx, callbacks=contador)
    en_directo = getattr(servicio, "conversar_en_directo", None)
    if en_directo is None:  # un servicio sin la variante (un doble): el texto final va por palabras
        return servicio.conversar(thread_id, texto, ctx)
    return en_directo(thread_id, texto, ctx, al_trozo, callbacks=contador)


def ejecutar_turno(servicio, thread_id: str, texto: str, ctx: ContextoCliente,
                   al_trozo: Callable[[str, str], None] | None = None):
    """Un turno con métricas (síncrono: se llama desde el pool de hilos). Con ``al_trozo``,
    en directo (``Servicio.conversar_en_directo``): recibe ``("token", texto)`` y
    ``("descartar", "")`` según llegan."""
    inicio = time.perf_counter()
    respuesta = _conversar(servicio, thread_id, texto, ctx, al_trozo)
    metricas.LATENCIA_TURNO.labels(estado=respuesta.estado).observe(time.perf_counter() - inicio)
    return respuesta


def ejecutar_decision(
    servicio, thread_id: str, encargado_id: str, tiendas: tuple[str, ...], decisiones: list[dict],
    nota: str | None = None, canal: str | None = None,
):
    """``servicio.decidir`` con métricas. La tienda se comprueba antes de tocar nada (403):
    ``tiendas``, las del firmante (varias si es regional); ``canal``: por dónde llegó la
    firma (web, cli, protocolo), para la auditoría."""
    pendiente = servicio.aprobacion(thread_id, tiendas=tuple(tiendas))
    respuesta = servicio.decidir(thread_id, encargado_id, decisiones, nota=nota, canal=canal,
                                 callbacks=[metricas.ContadorErroresHerramienta()])
    metricas.registrar_decision(decisiones, pendiente.get("espera_segundos"))
    return respuesta


async def _sin_acceso(vigencia: Vigencia | None) -> Fin | None:
    """El ``Fin`` si el cliente del turno ya no tiene acceso (con la base caída, se sigue:
    el propio turno dirá lo que pase)."""
    if vigencia is None:
        return None
    try:
        return await vigencia.comprobar_si_toca()
    except ERRORES_BD_CAIDA:
        return None


def json_evento(datos: dict[str, Any]) -> str:
    return json.dumps(datos, ensure_ascii=False)


class _Buzon:
    """Del hilo del turno al bucle de eventos: un solo aviso al bucle por tanda de eventos.

    ``call_soon_threadsafe`` por token despierta el bucle (una escritura en su tubería)
    por cada uno; aquí, mientras el bucle no haya recogido la tanda anterior, los eventos
    nuevos se suman a ella. Sin carga sale uno por uno, como antes.
    """

    def __init__(self, bucle: asyncio.AbstractEventLoop, cola: asyncio.Queue) -> None:
        self._bucle, self._cola = bucle, cola
        self._cerrojo = threading.Lock()
        self._tanda: list[tuple[str, str]] = []

    def poner(self, tipo: str, valor: str) -> None:
        with self._cerrojo:
            self._tanda.append((tipo, valor))
            if len(self._tanda) > 1:
                return  # el aviso de esta tanda ya está en camino
        self._bucle.call_soon_threadsafe(self._vaciar)

    def _vaciar(self) -> None:
        with self._cerrojo:
            tanda, self._tanda = self._tanda, []
        for evento in tanda:
            self._cola.put_nowait(evento)


async def turno_en_directo(
    servicio,
    thread_id: str,
    texto: str,
    ctx: ContextoCliente,
    como_json: Callable[[Any], dict],
    limitador: HebrasDelAgente,
    vigencia: Vigencia | None = None,
) -> AsyncIterator[dict[str, str]]:
    """Arranca el turno y espera a su primer evento antes de devolver el flujo.

    Así los errores previos a la respuesta (409 aprobación pendiente, 403, 422...) salen
    con su código HTTP; solo un fallo a mitad de respuesta llega como evento ``error``.
    Con ``vigencia``, el token se mira en cada evento (y la base cada
    ``RECOMPROBAR_SEGUNDOS``, con eventos o sin ellos): sin acceso, un ``fin`` y se cierra
    (el turno sigue en su hilo y su respuesta queda en la conversación).
    """
    cola: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    buzon = _Buzon(asyncio.get_running_loop(), cola)
    tarea = asyncio.ensure_future(
        en_hebra_del_agente(limitador, ejecutar_turno, servicio, thread_id, texto, ctx, buzon.poner)
    )
    # Si el cliente se va, el turno sigue (queda guardado): que su error no quede sin leer.
    tarea.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def siguiente(con_plazo: bool = True) -> tuple[str, str] | None:
        """El siguiente evento, o ``None`` cuando el turno terminó y no queda nada;
        ``("comprobar", "")`` si pasa ``vigencia.espera()`` sin ninguno (``con_plazo``)."""
        while True:
            if not cola.empty():
                return cola.get_nowait()
            if tarea.done():
                # Los tokens se encolan antes de que la tarea termine; uno más por si acaso.
                await asyncio.sleep(0)
                return cola.get_nowait() if not cola.empty() else None
            lector = asyncio.ensure_future(cola.get())
            await asyncio.wait({lector, tarea}, return_when=asyncio.FIRST_COMPLETED,
                               timeout=vigencia.espera() if con_plazo and vigencia is not None else None)
            if lector.done():
                return lector.result()
            lector.cancel()
            if not tarea.done():
                return ("comprobar", "")

    primero = await siguiente(con_plazo=False)  # aún no se ha respondido nada
    if primero is None:
        tarea.result()  # lanza el error del dominio antes de empezar a responder

    async def flujo() -> AsyncIterator[dict[str, str]]:
        emitido: list[str] = []
        evento = primero
        while evento is not None:
            fin = await _sin_acceso(vigencia)
            if fin is not None:
                yield fin.evento()
                return
            tipo, valor = evento
            if tipo == "token":
                emitido.append(valor)
                yield {"event": "token", "data": json_evento({"texto": valor})}
            elif tipo == "descartar" and emitido:
                emitido.clear()
                yield {"event": "descartar", "data": "{}"}
            evento = await siguiente()
        try:
            respuesta = tarea.result()
        except ErrorDominio as exc:
            yield {"event": "error", "data": json_evento({"codigo": exc.estado_http, "detalle": exc.mensaje})}
            return
        except ERRORES_BD_CAIDA:
            yield {"event": "error", "data": json_evento({"codigo": 503, "detalle": DETALLE_BD_CAIDA})}
            return
        except Exception:
            logger.exception("turno en directo fallido en %s", thread_id)
            yield {"event": "error", "data": json_evento({"codigo": 500, "detalle": "error interno del servidor"})}
            return
        fin = await _sin_acceso(vigencia)
        if fin is not None:
            yield fin.evento()
            return
        final = respuesta.mensaje_cliente
        if "".join(emitido) != final:
            if emitido:
                yield {"event": "descartar", "data": "{}"}
            for palabra in _PALABRAS.findall(final):
                yield {"event": "token", "data": json_evento({"texto": palabra})}
        yield {"event": "estado", "data": json_evento(como_json(respuesta))}

    return flujo()
