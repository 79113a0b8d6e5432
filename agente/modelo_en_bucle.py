"""El modelo de un proveedor, llamado desde un único bucle asyncio del proceso.

Cada ejecución del agente corre en su hilo y llama al modelo de forma síncrona. Con el
cliente síncrono del proveedor, cada token que llega por la red despierta a ese hilo:
con cien conversaciones a la vez son miles de despertares por segundo, cada uno con su
traspaso del GIL, y el proceso gastaba en eso más CPU que en el propio turno
(``docs/rendimiento.md``, sección 7). ``ModeloEnBucle`` hace la llamada con el cliente
asíncrono del mismo modelo (``_astream``) en un bucle de eventos compartido: todos los
flujos se leen en un solo hilo, y el hilo del turno espera una vez por llamada.

Contrato: es un ``BaseChatModel`` normal para ``create_agent`` y los middleware
(``bind_tools``, reintentos, límites, HITL); los tokens siguen llegando a los callbacks
de la ejecución (``on_llm_new_token``: la respuesta en directo y Langfuse) según llegan,
y el resultado es el mismo mensaje que daría el modelo envuelto, con sus tool calls y su
uso de tokens.

Trampa: los callbacks de token corren en el hilo del bucle, no en el del turno; los que
se usan aquí (``EmisorTokens``, Langfuse) no dependen del hilo. Un callback lento frena
todos los flujos del proceso.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult

__all__ = ["ModeloEnBucle", "admite_bucle"]

_cerrojo = threading.Lock()
_bucle: asyncio.AbstractEventLoop | None = None


def _bucle_del_proceso() -> asyncio.AbstractEventLoop:
    """El bucle compartido, arrancado la primera vez (también tras un fork: otro pid)."""
    global _bucle
    with _cerrojo:
        if _bucle is None or _bucle.is_closed() or not _hilo_vivo(_bucle):
            bucle = asyncio.new_event_loop()
            hilo = threading.Thread(target=bucle.run_forever, name="modelo-en-bucle", daemon=True)
            hilo.start()
            bucle._agente_hilo = hilo  # type: ignore[attr-defined]
            _bucle = bucle
        return _bucle


def _hilo_vivo(bucle: asyncio.AbstractEventLoop) -> bool:
    hilo = getattr(bucle, "_agente_hilo", None)
    return hilo is not None and hilo.is_alive()


def admite_bucle(modelo: BaseChatModel) -> bool:
    """Si el modelo tiene streaming asíncrono propio (no el de serie, que usa el síncrono)."""
    return type(modelo)._astream is not BaseChatModel._astream


class ModeloEnBucle(BaseChatModel):
    """``interno`` (p. ej. ``ChatOpenAI``) llamado por ``_astream`` en el bucle del proceso."""

    interno: BaseChatModel

    @property
    def _llm_type(self) -> str:
        return self.interno._llm_type

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return dict(self.interno._identifying_params)

    def _get_invocation_params(self, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        # Lo que ven las trazas (modelo, temperatura...): lo del modelo envuelto.
        return self.interno._get_invocation_params(stop=stop, **kwargs)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any):
        return self.interno._get_ls_params(stop=stop, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):
        # El modelo envuelto da el formato de sus herramientas; se pasan tal cual a _astream.
        atado = self.interno.bind_tools(tools, **kwargs)
        return self.bind(**atado.kwargs)

    def _should_stream(self, *, async_api: bool, run_manager=None, **kwargs: Any) -> bool:
        # invoke va por _generate, que ya avisa token a token desde el bucle; el streaming
        # síncrono (un despertar del hilo por token) solo si quien llama lo pide: .stream().
        return bool(kwargs.get("stream"))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        futuro = asyncio.run_coroutine_threadsafe(
            self._recoger(messages, stop, run_manager, kwargs), _bucle_del_proceso()
        )
        try:
            return futuro.result()
        except BaseException:
            futuro.cancel()  # si el turno se interrumpe, que el flujo no siga leyendo
            raise

    async def _recoger(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        run_manager: CallbackManagerForLLMRun | None,
        kwargs: dict[str, Any],
    ) -> ChatResult:
        trozos: list[ChatGenerationChunk] = []
        async for trozo in self.interno._astream(messages, stop=stop, **kwargs):
            if run_manager is not None:
                run_manager.on_llm_new_token(trozo.text, chunk=trozo)
            trozos.append(trozo)
        return generate_from_stream(iter(trozos))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        trozos: queue.SimpleQueue[Any] = queue.SimpleQueue()
        fin = object()

        async def producir() -> None:
            try:
                async for trozo in self.interno._astream(messages, stop=stop, **kwargs):
                    trozos.put(trozo)
            except BaseException as exc:
                trozos.put(exc)
                return
            trozos.put(fin)

        futuro = asyncio.run_coroutine_threadsafe(producir(), _bucle_del_proceso())
        try:
            while (trozo := trozos.get()) is not fin:
                if isinstance(trozo, BaseException):
                    raise trozo
                if run_manager is not None:
                    run_manager.on_llm_new_token(trozo.text, chunk=trozo)
                yield trozo
        finally:
            futuro.cancel()
