"""Elección del modelo de chat según el ajuste ``AGENTE_MODELO``.

- ``offline``: :class:`agente.modelo_offline.ModeloOffline` (reglas, NO es un LLM; sin clave).
- ``proveedor:modelo``: cualquier modelo que acepte ``langchain.chat_models.init_chat_model``
  (``openai:gpt-4o-mini``, ``anthropic:claude-sonnet-4-5``, ``ollama:llama3.1:8b``...).

Los fallos de configuración (proveedor desconocido, paquete sin instalar, falta la clave)
salen como :class:`nucleo.errores.ErrorConfiguracion` con un mensaje en español que dice
qué instalar o qué variable definir, en vez de un ``ImportError`` en inglés a media demo.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from nucleo.errores import ErrorConfiguracion

__all__ = ["crear_modelo", "juntar_argumentos"]

EJEMPLOS = "'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5' u 'ollama:llama3.1:8b'"
# Clave que se pasa a un servidor compatible con OpenAI propio (vLLM, llama.cpp, Ollama /v1)
# cuando no hay OPENAI_API_KEY: el SDK exige una, esos servidores no la miran.
CLAVE_SERVIDOR_PROPIO = "sin-clave"


@dataclass(frozen=True)
class Proveedor:
    paquete: str  # módulo de integración de LangChain
    extra: str  # extra de pip de este proyecto
    variable_clave: str | None  # variable de entorno con la clave de API
    admite_reintentos: bool  # el cliente tiene max_retries


PROVEEDORES = {
    "openai": Proveedor("langchain_openai", "openai", "OPENAI_API_KEY", True),
    "anthropic": Proveedor("langchain_anthropic", "anthropic", "ANTHROPIC_API_KEY", True),
    "ollama": Proveedor("langchain_ollama", "ollama", None, False),
}


def _error(mensaje: str) -> ErrorConfiguracion:
    return ErrorConfiguracion(mensaje, ajuste="AGENTE_MODELO")


def _separar(nombre: str) -> tuple[str, str]:
    proveedor, separador, modelo = nombre.partition(":")
    proveedor = proveedor.strip().lower().replace("-", "_")
    modelo = modelo.strip()
    if not separador or not proveedor or not modelo:
        raise _error(
            f"AGENTE_MODELO={nombre!r} no es válido: usa 'offline' (reglas, sin clave) o "
            f"'proveedor:modelo', por ejemplo {EJEMPLOS}."
        )
    return proveedor, modelo


def _comprobar_paquete(nombre: str, proveedor: Proveedor) -> None:
    try:
        importlib.import_module(proveedor.paquete)
    except ImportError as exc:
        raise _error(
            f"El modelo {nombre!r} necesita el paquete {proveedor.paquete.replace('_', '-')}, "
            f'que no está instalado. Instálalo con: pip install "agente-tienda[{proveedor.extra}]"'
        ) from exc


def crear_modelo(
    nombre: str,
    *,
    base_url: str | None = None,
    sin_reintentos: bool = False,
    timeout: float | None = None,
) -> BaseChatModel:
    """El modelo de chat para ``nombre`` (el valor de ``AGENTE_MODELO``).

    ``base_url``: servidor compatible con OpenAI (``AGENTE_MODELO_BASE_URL``), o la URL
    de Ollama/Anthropic si se quiere otra. ``sin_reintentos``: ``max_retries=0`` en el
    cliente del proveedor, porque los reintentos los hace ``ModelRetryMiddleware`` (si no,
    se multiplican). ``timeout``: segundos por llamada (OpenAI y Anthropic).
    """
    nombre = (nombre or "").strip()
    if nombre.lower() == "offline":
        from agente.modelo_offline import ModeloOffline

        return ModeloOffline()

    proveedor_id, modelo = _separar(nombre)
    proveedor = PROVEEDORES.get(proveedor_id)
    kwargs: dict[str, Any] = {}
    if base_url:
        kwargs["base_url"] = base_url
    if proveedor is not None:
        _comprobar_paquete(nombre, proveedor)
        variable = proveedor.variable_clave
        if variable and not os.environ.get(variable):
            if proveedor_id == "openai" and base_url:
                kwargs["api_key"] = CLAVE_SERVIDOR_PROPIO
            else:
                raise _error(
                    f"Falta la clave de API de {proveedor_id} para AGENTE_MODELO={nombre!r}: "
                    f"define la variable de entorno {variable}, o usa AGENTE_MODELO=offline "
                    "para la demo sin clave."
                )
        if sin_reintentos and proveedor.admite_reintentos:
            kwargs["max_retries"] = 0
        if timeout is not None and proveedor_id != "ollama":
            kwargs["timeout"] = timeout

    from langchain.chat_models import init_chat_model

    try:
        creado = init_chat_model(modelo, model_provider=proveedor_id, **kwargs)
    except ImportError as exc:
        paquete = re.search(r"pip install ([\w.\-\[\]]+)", str(exc))
        instalar = paquete.group(1) if paquete else f"langchain-{proveedor_id.replace('_', '-')}"
        raise _error(
            f"El modelo {nombre!r} necesita un paquete que no está instalado. "
            f"Instálalo con: pip install {instalar}"
        ) from exc
    except Exception as exc:
        if isinstance(exc, ValueError) and "Unsupported" in str(exc):
            raise _error(
                f"Proveedor de modelo desconocido en AGENTE_MODELO={nombre!r}: {proveedor_id!r}. "
                f"Usa 'offline' o 'proveedor:modelo', por ejemplo {EJEMPLOS}."
            ) from exc
        # Proveedores sin tabla propia: el SDK suele quejarse de la clave al construirse.
        if re.search(r"api[_ ]?key", str(exc), re.IGNORECASE):
            raise _error(
                f"Falta la clave de API del proveedor {proveedor_id!r} para AGENTE_MODELO={nombre!r}: "
                f"define la variable de entorno que indica su documentación ({exc})."
            ) from exc
        raise _error(f"No se pudo crear el modelo {nombre!r}: {exc}") from exc
    if proveedor_id == "openai":
        _trozos_en_crudo(creado)
    return creado


# Argumentos de ``Completions.create`` que no van en el cuerpo, y su opción de petición.
_OPCIONES_DE_PETICION = {"extra_headers": "headers", "extra_query": "params",
                         "extra_body": "extra_json", "timeout": "timeout"}


class _CompletionsEnCrudo:
    """``chat.completions`` del SDK de OpenAI, pero en streaming entrega cada trozo como el
    ``dict`` del JSON recibido, sin construir un ``ChatCompletionChunk``.

    Por qué: ``langchain-openai`` convierte cada trozo con ``model_dump()`` nada más
    recibirlo (y acepta un ``dict`` tal cual), mientras el SDK lo construye con su
    constructor permisivo, que recorre los tipos en Python (≈ 0,5 ms por trozo), y antes
    pasa el cuerpo por ``maybe_transform``, que en los parámetros de chat no cambia nada
    (no tienen alias ni formatos) y recorre en Python los mensajes y los esquemas de las
    herramientas (≈ 4 ms por llamada). Con un proveedor real era ≈ un tercio de la CPU de
    un turno (``docs/rendimiento.md``).

    Va por la API pública del SDK para rutas sin método propio: ``client.post`` con
    ``cast_to=object`` y ``stream_cls=Stream[object]``. El SDK sigue poniendo la clave,
    los reintentos del cliente, el ``timeout``, los errores HTTP (``openai.APIStatusError``)
    y los eventos de error a mitad del flujo. Sin streaming, y todo lo demás, va al
    ``chat.completions`` original.
    """

    def __init__(self, completions: Any, raiz: Any, flujo: type) -> None:
        self._completions, self._raiz, self._flujo = completions, raiz, flujo

    def _peticion(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        opciones: dict[str, Any] = {"security": {"bearer_auth": True}}  # la de create()
        for argumento, opcion in _OPCIONES_DE_PETICION.items():
            if argumento in kwargs:
                valor = kwargs.pop(argumento)
                if valor is not None or opcion == "timeout":  # timeout=None: sin límite
                    opciones[opcion] = valor
        return {"body": kwargs, "options": opciones, "cast_to": object, "stream": True,
                "stream_cls": self._flujo}

    def create(self, **kwargs: Any) -> Any:
        if not kwargs.get("stream"):
            return self._completions.create(**kwargs)
        return self._raiz.post("/chat/completions", **self._peticion(kwargs))

    def __getattr__(self, nombre: str) -> Any:
        return getattr(self._completions, nombre)


class _AsyncCompletionsEnCrudo(_CompletionsEnCrudo):
    async def create(self, **kwargs: Any) -> Any:
        if not kwargs.get("stream"):
            return await self._completions.create(**kwargs)
        return await self._raiz.post("/chat/completions", **self._peticion(kwargs))


@functools.cache
def _flujos() -> tuple[type, type]:
    """``Stream[object]`` y ``AsyncStream[object]`` que, al llegar ``data: [DONE]``, leen el
    cuerpo hasta el final antes de que el SDK lo cierre.

    Por qué: el SDK corta en ``[DONE]`` y cierra la respuesta; si el terminador del cuerpo
    *chunked* aún no se ha leído, httpcore no puede devolver la conexión al pool y la
    destruye, así que cada llamada en streaming abre una conexión nueva (TCP, y con un
    proveedor real, TLS). Es el fallo abierto openai/openai-python#3440; el arreglo
    propuesto allí (#3512) hace lo mismo que este. Se engancha en ``_iter_events``, el
    único punto entre el decodificador SSE y el cierre. La trampa: un servidor que no
    terminara el cuerpo tras ``[DONE]`` haría esperar hasta el ``timeout`` de lectura
    (la API de OpenAI lo termina justo después, según openai-python#3440).
    """
    import openai

    class FlujoCrudo(openai.Stream[object]):
        def __iter__(self):
            return juntar_argumentos(super().__iter__())

        def _iter_events(self):
            eventos = super()._iter_events()
            for evento in eventos:
                if evento.data.startswith("[DONE]"):
                    for _ in eventos:  # hasta el fin del cuerpo: la conexión vuelve al pool
                        pass
                yield evento

    class FlujoCrudoAsincrono(openai.AsyncStream[object]):
        async def __aiter__(self):
            pendiente = None
            async for trozo in super().__aiter__():
                pendiente, listos = _juntar(pendiente, trozo)
                for listo in listos:
                    yield listo
            if pendiente is not None:
                yield pendiente

        async def _iter_events(self):
            eventos = super()._iter_events()
            async for evento in eventos:
                if evento.data.startswith("[DONE]"):
                    async for _ in eventos:
                        pass
                yield evento

    return FlujoCrudo, FlujoCrudoAsincrono


def juntar_argumentos(trozos: Iterator[Any]) -> Iterator[Any]:
    """Los trozos de un streaming de chat, con los fragmentos seguidos de los argumentos de
    una misma llamada a herramienta juntos en un trozo.

    Por qué: el proveedor manda los argumentos token a token (``{"``, ``pedido``, ``":"``...)
    y LangChain convierte cada trozo en un ``AIMessageChunk`` y un ``ChatGenerationChunk``
    (con sus validadores, que intentan leer el JSON a medias) y avisa a cada callback. Nadie
    los enseña por el camino: la llamada solo sirve entera. Los trozos con texto, con otra
    llamada, con ``finish_reason`` o con el uso pasan tal cual y en orden; el texto sigue
    saliendo token a token hacia el cliente. Lo que junta llega cuando la llamada termina
    (el siguiente trozo que no es suyo), que es cuando LangChain la podía usar.
    """
    pendiente = None
    for trozo in trozos:
        pendiente, listos = _juntar(pendiente, trozo)
        yield from listos
    if pendiente is not None:
        yield pendiente


def _juntar(pendiente: dict | None, trozo: Any) -> tuple[dict | None, list[Any]]:
    llamada = _solo_llamada(trozo)
    if llamada is None:
        return None, [t for t in (pendiente, trozo) if t is not None]
    if pendiente is not None and _continua(pendiente, llamada):
        funcion = pendiente["choices"][0]["delta"]["tool_calls"][0].setdefault("function", {})
        funcion["arguments"] = (funcion.get("arguments") or "") + llamada["function"]["arguments"]
        return pendiente, []
    # Copia de lo que se va a ir alargando: el trozo recibido no se toca.
    eleccion = trozo["choices"][0]
    copia = {**llamada, "function": dict(llamada.get("function") or {})}
    nuevo = {**trozo, "choices": [{**eleccion, "delta": {**eleccion["delta"], "tool_calls": [copia]}}]}
    return nuevo, [pendiente] if pendiente is not None else []


_DELTA_DE_LLAMADA = frozenset({"tool_calls", "role", "content", "refusal"})


def _solo_llamada(trozo: Any) -> dict | None:
    """La llamada del trozo si no trae nada más (ni texto, ni fin, ni uso, ni logprobs)."""
    if type(trozo) is not dict or trozo.get("usage") or len(trozo.get("choices") or ()) != 1:
        return None
    eleccion = trozo["choices"][0]
    delta = eleccion.get("delta")
    if (eleccion.get("finish_reason") is not None or eleccion.get("logprobs") is not None
            or type(delta) is not dict or not delta.keys() <= _DELTA_DE_LLAMADA
            or delta.get("content") or delta.get("refusal")):
        return None
    llamadas = delta.get("tool_calls")
    if type(llamadas) is not list or len(llamadas) != 1 or type(llamadas[0]) is not dict:
        return None
    funcion = llamadas[0].get("function")
    if funcion is not None and (type(funcion) is not dict or not isinstance(funcion.get("arguments", ""), str)):
        return None
    return llamadas[0]


def _continua(pendiente: dict, llamada: dict) -> bool:
    # Un fragmento sin id ni nombre de la misma llamada (mismo índice) que lo pendiente.
    anterior = pendiente["choices"][0]["delta"]["tool_calls"][0]
    funcion = llamada.get("function") or {}
    return (llamada.get("index") == anterior.get("index") and not llamada.get("id")
            and llamada.keys() <= {"index", "function", "type"} and funcion.keys() <= {"arguments"}
            and bool(funcion.get("arguments")))


def _trozos_en_crudo(modelo: Any) -> None:
    """Cambia los clientes de un ``ChatOpenAI`` por :class:`_CompletionsEnCrudo`."""
    flujo, flujo_asincrono = _flujos()
    if getattr(modelo, "client", None) is not None and getattr(modelo, "root_client", None):
        modelo.client = _CompletionsEnCrudo(modelo.client, modelo.root_client, flujo)
    if getattr(modelo, "async_client", None) is not None and getattr(modelo, "root_async_client", None):
        modelo.async_client = _AsyncCompletionsEnCrudo(
            modelo.async_client, modelo.root_async_client, flujo_asincrono
        )
