"""Errores de herramientas y del proveedor, sobre el middleware de LangChain.

Capas (de fuera adentro): ``ToolErrorMiddleware`` convierte errores en un resultado que
el modelo puede leer; dentro, ``ToolRetryMiddleware`` reintenta solo errores
transitorios de base de datos y solo en herramientas idempotentes (un reintento no
paga dos veces: la clave es el ``tool_call_id``). ``ModelRetryMiddleware`` reintenta
los fallos del proveedor del modelo.

- Error de negocio (``ErrorDominio``): «Error: <mensaje en español>», el modelo actúa.
- Error inesperado: se registra con el hilo y el modelo recibe ``MENSAJE_INTERNO``, un
  texto que el cliente puede leer tal cual, nunca una traza.
"""

from __future__ import annotations

import logging

import psycopg
from langchain.agents.middleware import (
    ModelRetryMiddleware,
    ToolCallRequest,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)

from nucleo.errores import CandadoPerdido, ContextoAusente, ErrorDominio, NecesitaFirma

logger = logging.getLogger(__name__)

ERRORES_TRANSITORIOS = (psycopg.OperationalError,)
# Lo puede leer el cliente tal cual (el modelo offline lo enseña, y un LLM lo repite): en
# segunda persona, sin instrucciones para el modelo ni detalles de la excepción.
MENSAJE_INTERNO = (
    "Error: ha fallado algo en nuestro sistema y no se ha completado. "
    "No se ha cobrado ni cambiado nada; puedes intentarlo de nuevo en unos minutos."
)


def _hilo(request: ToolCallRequest) -> str | None:
    config = getattr(request.runtime, "config", None) or {}
    return (config.get("configurable") or {}).get("thread_id")


def convertir_error(exc: Exception, request: ToolCallRequest) -> str | None:
    if isinstance(exc, ContextoAusente | CandadoPerdido | NecesitaFirma):
        # Sin cliente, o sin el candado del hilo: nada que contar al modelo; que pare la ejecución.
        # NecesitaFirma sube a RevalidacionEfectos, que la convierte en una pausa.
        return None
    if isinstance(exc, ErrorDominio):
        return f"Error: {exc.mensaje}"
    logger.exception(
        "error inesperado en la herramienta %s (hilo %s, tool_call_id %s)",
        request.tool_call.get("name"),
        _hilo(request),
        request.tool_call.get("id"),
    )
    return MENSAJE_INTERNO


def _es_fallo_del_proveedor(exc: Exception) -> bool:
    # Nuestros errores de dominio no se arreglan repitiendo la llamada.
    return not isinstance(exc, ErrorDominio)


def middleware_errores(
    *, reintentables: list[str], reintentos: int = 2, pausa_inicial: float = 0.2
) -> list:
    """``reintentables``: las herramientas idempotentes (``Registro.reintentables``)."""
    return [
        ToolErrorMiddleware(on_error=convertir_error),
        ToolRetryMiddleware(
            tools=list(reintentables),
            retry_on=ERRORES_TRANSITORIOS,
            on_failure="error",
            max_retries=reintentos,
            initial_delay=pausa_inicial,
            max_delay=2.0,
        ),
        ModelRetryMiddleware(
            retry_on=_es_fallo_del_proveedor,
            on_failure="error",
            max_retries=reintentos,
            initial_delay=pausa_inicial * 5,
            max_delay=10.0,
        ),
    ]
