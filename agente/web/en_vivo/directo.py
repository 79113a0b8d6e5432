"""Turnos y decisiones vistos desde la web: métricas, y la respuesta en directo (SSE).

La respuesta en directo emite los tokens del modelo según llegan. El servicio ejecuta el
agente con ``invoke`` síncrono y no admite callbacks propios, así que el manejador entra
por un *configure hook* de LangChain: una ``ContextVar`` que ``CallbackManager.configure``
consulta al arrancar cada ejecución raíz. Se fija dentro del hilo que ejecuta el turno,
así que solo ve ese turno. El manejador implementa el protocolo de streaming de
LangChain (``tap_output_iter``), con lo que el modelo de chat usa su ``_stream``.

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
web solo necesita hilos de sobra para llegar a él (``agente.web.infra.hilos``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import ErrorDominio
from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.infra import metricas
from agente.web.infra.disponibilidad import DETALLE_BD_CAIDA
from agente.web.infra.hilos import HilosDelAgente, en_hilo_del_agente
from agente.web.infra.vigencia import Fin, Vigencia

logger = logging.getLogger(__name__)

_manejador_ejecucion: ContextVar[BaseCallbackHandler | None] = ContextVar(
    "agente_web_manejador", default=None
)
register_configure_hook(_manejador_ejecucion, True)

_PALABRAS = re.compile(r"\S+\s*|\s+")


class EmisorTokens(metricas.ContadorErroresHerramienta):
    """Pasa los tokens del modelo a ``emitir`` y avisa cuando hay que descartarlos."""

    def __init__(self, emitir: Callable[[tuple[str, str]], None]) -> None:
        super().__init__()
        self._emitir = emitir

    def on_llm_new_token(self, token: str, *, run_id: UUID, **kwargs: Any) -> None:
        if token:
            self._emitir(("token", token))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        for generaciones in getattr(response, "generations", []) or []:
            for generacion in generaciones:
                if getattr(getattr(generacion, "message", None), "tool_calls", None):
                    self._emitir(("descartar", ""))
                    return

    # Protocolo de streaming de LangChain: con él, el modelo de chat emite por tokens.
    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return output


@contextmanager
def _observada(manejador: BaseCallbackHandler):
    marca = _manejador_ejecucion.set(manejador)
    try:
        yield
    finally:
        _manejador_ejecucion.reset(marca)


def ejecutar_turno(servicio, thread_id: str, texto: str, ctx: ContextoCliente, emisor=None):
    """``servicio.conversar`` con métricas (síncrono: se llama desde el pool de hilos)."""
    inicio = time.perf_counter()
    with _observada(emisor or metricas.ContadorErroresHerramienta()):
        respuesta = servicio.conversar(thread_id, texto, ctx)
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
    with _observada(metricas.ContadorErroresHerramienta()):
        respuesta = servicio.decidir(thread_id, encargado_id, decisiones, nota=nota, canal=canal)
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

    def poner(self, evento: tuple[str, str]) -> None:
        with self._cerrojo:
            self._tanda.append(evento)
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
    limitador: HilosDelAgente,
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
    emisor = EmisorTokens(_Buzon(asyncio.get_running_loop(), cola).poner)
    tarea = asyncio.ensure_future(
        en_hilo_del_agente(limitador, ejecutar_turno, servicio, thread_id, texto, ctx, emisor)
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
