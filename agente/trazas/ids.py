"""Los ids y nombres de una traza, y lo que se comprueba antes de mandarlos a Langfuse.

- ``TIPOS_EJECUCION`` y ``DECISIONES``: los únicos tipos de ejecución y decisiones que se
  trazan; ``PUNTUACION_*`` y ``EVENTO_VEREDICTO``: los nombres de puntuaciones y eventos;
- ``trace_id_determinista`` (el mismo algoritmo que ``Langfuse.create_trace_id(seed=...)``,
  sin importar el SDK) e ``id_puntuacion`` (reintentar una decisión actualiza, no duplica);
- ``validar_trace_id`` y ``validar_id``: ``ValueError`` con o sin claves, para que los tests
  lo vean (Langfuse descarta en silencio lo que no sea ASCII o pase de 200 caracteres).
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from agente.trazas.mascara import enmascarar_texto

__all__ = [
    "DECISIONES",
    "EVENTO_VEREDICTO",
    "PUNTUACION_AFIRMACIONES",
    "PUNTUACION_DECISION",
    "PUNTUACION_ESPERA",
    "TIPOS_EJECUCION",
    "Decision",
    "TipoEjecucion",
    "id_puntuacion",
    "trace_id_determinista",
    "validar_id",
    "validar_trace_id",
]

TipoEjecucion = Literal["turno_cliente", "decision_encargado", "caducidad", "reanudacion"]
TIPOS_EJECUCION: frozenset[str] = frozenset(
    {"turno_cliente", "decision_encargado", "caducidad", "reanudacion"}
)
Decision = Literal["approve", "edit", "reject", "respond", "expired"]
DECISIONES: frozenset[str] = frozenset({"approve", "edit", "reject", "respond", "expired"})

PUNTUACION_DECISION = "decision_encargado"
PUNTUACION_ESPERA = "espera_minutos"
# 1 si todo lo que el mensaje del turno dice que pasó está en la base (issue 42), 0 si no.
PUNTUACION_AFIRMACIONES = "afirmaciones_verdaderas"
EVENTO_VEREDICTO = "veredicto_politica"

_TRACE_ID_RE = re.compile(r"^[0-9a-f]{32}$")


def trace_id_determinista(semilla: str) -> str:
    # El mismo algoritmo que Langfuse.create_trace_id(seed=...) (lo comprueba un test),
    # para no importar el SDK cuando el trazado está apagado.
    return hashlib.sha256(semilla.encode("utf-8")).digest()[:16].hex()


def id_puntuacion(thread_id: str, interrupt_id: str, nombre: str) -> str:
    """Id estable de una puntuación: reintentar una decisión la actualiza, no la duplica."""
    semilla = "\x1f".join(("puntuacion", thread_id, interrupt_id, nombre))
    return hashlib.sha256(semilla.encode("utf-8")).hexdigest()[:32]


def validar_trace_id(trace_id: str) -> None:
    if not isinstance(trace_id, str) or not _TRACE_ID_RE.match(trace_id):
        raise ValueError(f"trace id inválido (se esperan 32 hex en minúscula): {trace_id!r}")


def validar_id(nombre: str, valor: str) -> None:
    # Langfuse descarta en silencio sesión/usuario/etiquetas no ASCII o de más de 200.
    if not isinstance(valor, str) or not valor or not valor.isascii() or len(valor) > 200:
        raise ValueError(
            f"{nombre} debe ser texto ASCII no vacío de hasta 200 caracteres: {valor!r}"
        )
    # Sesión, usuario y etiquetas no pasan por mask= y se copian a los checkpoints.
    if enmascarar_texto(valor) != valor:
        raise ValueError(f"{nombre} parece un dato personal; usa un id seudónimo")
