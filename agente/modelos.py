"""Elección del modelo de chat según el ajuste ``AGENTE_MODELO``.

- ``offline``: :class:`agente.modelo_offline.ModeloOffline` (reglas, NO es un LLM; sin clave).
- ``proveedor:modelo``: cualquier modelo que acepte ``langchain.chat_models.init_chat_model``
  (``openai:gpt-4o-mini``, ``anthropic:claude-sonnet-4-5``, ``ollama:llama3.1:8b``...).

Los fallos de configuración (proveedor desconocido, paquete sin instalar, falta la clave)
salen como :class:`agente.nucleo.errores.ErrorConfiguracion` con un mensaje en español que dice
qué instalar o qué variable definir, en vez de un ``ImportError`` en inglés a media demo.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from agente.nucleo.errores import ErrorConfiguracion

__all__ = ["crear_modelo"]

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
        return init_chat_model(modelo, model_provider=proveedor_id, **kwargs)
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
