"""Métricas Prometheus de ``/metrics``.

- ``agente_aprobaciones_pendientes{tienda}``: se lee de la base de datos en cada consulta,
  así que es la misma en todos los procesos;
- ``agente_decisiones_total{tipo}``, ``agente_tiempo_hasta_decision_segundos``,
  ``agente_latencia_turno_segundos{estado}`` y ``agente_errores_herramienta_total{herramienta}``
  las cuenta cada proceso. Con ``agente serve --workers N`` (N > 1) se usa el modo
  multiproceso de prometheus-client (``PROMETHEUS_MULTIPROC_DIR``, lo prepara ``serve``) y
  cualquier proceso devuelve la suma de todos. Dos servidores distintos (dos ``agente
  serve``) se raspan por separado y se suman en Prometheus.
- Errores de herramienta: cada ejecución de una herramienta que terminó en error (la que
  el agente recibe como ``ToolMessage`` con ``status="error"``), reintentos incluidos. Un
  rechazo del encargado no cuenta: la herramienta no llegó a ejecutarse.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from agente.servicio.fachada import Servicio

TIPO_CONTENIDO = CONTENT_TYPE_LATEST
REGISTRO = CollectorRegistry(auto_describe=True)

DECISIONES = Counter(
    "agente_decisiones",
    "Decisiones de encargados aplicadas, por tipo (approve, edit, reject, respond).",
    ["tipo"],
    registry=REGISTRO,
)
TIEMPO_HASTA_DECISION = Histogram(
    "agente_tiempo_hasta_decision_segundos",
    "Segundos entre la pausa del agente y la decisión del encargado.",
    buckets=(30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200),
    registry=REGISTRO,
)
LATENCIA_TURNO = Histogram(
    "agente_latencia_turno_segundos",
    "Duración de un turno del cliente (mensaje -> respuesta o pausa).",
    ["estado"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40),
    registry=REGISTRO,
)
ERRORES_HERRAMIENTA = Counter(
    "agente_errores_herramienta",
    "Ejecuciones de herramientas que terminaron en error.",
    ["herramienta"],
    registry=REGISTRO,
)



class ContadorErroresHerramienta(BaseCallbackHandler):
    """Callback de LangChain: cuenta las herramientas que lanzan (antes de volverse ToolMessage)."""

    def __init__(self) -> None:
        self._nombres: dict[UUID, str] = {}

    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID, **kwargs: Any) -> None:
        self._nombres[run_id] = (serialized or {}).get("name") or kwargs.get("name") or "desconocida"

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._nombres.pop(run_id, None)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        ERRORES_HERRAMIENTA.labels(herramienta=self._nombres.pop(run_id, "desconocida")).inc()


def registrar_decision(decisiones: list[dict[str, Any]], espera_segundos: float | None) -> None:
    for decision in decisiones:
        DECISIONES.labels(tipo=str(decision.get("type"))).inc()
    if espera_segundos is not None:
        TIEMPO_HASTA_DECISION.observe(max(0.0, float(espera_segundos)))


class _Pendientes(Collector):
    def __init__(self, servicio: Servicio) -> None:
        self.servicio = servicio

    def collect(self) -> Iterator[GaugeMetricFamily]:
        familia = GaugeMetricFamily(
            "agente_aprobaciones_pendientes",
            "Aprobaciones esperando a un encargado, por tienda (leído de la base de datos).",
            labels=["tienda"],
        )
        for tienda, pendientes in self.servicio.pendientes_por_tienda():
            familia.add_metric([tienda], pendientes)
        yield familia


class _Auditoria(Collector):
    """Hallazgos de cada comprobación de la auditoría (una consulta cada una; 0 = cuadra)."""

    def __init__(self, servicio: Servicio) -> None:
        self.servicio = servicio

    def collect(self) -> Iterator[GaugeMetricFamily]:
        informe = self.servicio.auditoria()
        familia = GaugeMetricFamily(
            "agente_auditoria_hallazgos",
            "Hallazgos de la auditoría por comprobación (firmas, libro, política y orden en serie); deben ser 0.",
            labels=["comprobacion"],
        )
        familia.add_metric(["sin_firma"], len(informe["sin_firma"]))
        familia.add_metric(["firmas"], len(informe["firmas"]))
        familia.add_metric(["afirmaciones"], len(informe.get("afirmaciones", [])))
        for comprobacion, filas in [*informe["libro"].items(), *informe["politica"].items(),
                                    *informe["serie"].items()]:
            familia.add_metric([comprobacion], len(filas))
        yield familia


class _Propias(Collector):
    def collect(self):
        yield from REGISTRO.collect()


def exponer(servicio: Servicio) -> bytes:
    """El texto de ``/metrics``: las del proceso (o de todos los procesos) y la cola."""
    registro = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registro)
    else:
        registro.register(_Propias())
    registro.register(_Pendientes(servicio))
    registro.register(_Auditoria(servicio))
    return generate_latest(registro)
