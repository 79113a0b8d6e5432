"""La suite como dataset de Langfuse y cada pasada como un dataset run (experimento).

Con claves de Langfuse: al empezar se crea (o actualiza, el id es el de la tarea) un
item por tarea en el dataset ``AGENTE_EVALUACION_DATASET``; cada intento enlaza su traza
(la del primer turno) al run con ``dataset-run-items`` y le pone las puntuaciones
``exito`` (0/1) y ``escalado_correcto`` (0/1). Sin claves no hace nada ni abre conexiones.

Va por la API pública (``/api/public/...``) con ``httpx`` y no por el SDK: el SDK valida
las respuestas con sus modelos y un fallo de red o de versión no debe parar la
evaluación; aquí un fallo se registra en el log y la pasada sigue.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import httpx

from agente.evaluacion.ensayo import Intento
from agente.evaluacion.tareas import Tarea
from nucleo.ajustes import Ajustes

__all__ = ["ConjuntoLangfuse"]

logger = logging.getLogger(__name__)


class ConjuntoLangfuse:
    """El dataset y el run de una pasada; ``activo`` es False sin claves (y nada se envía)."""

    def __init__(self, *, ajustes: Ajustes, tareas: list[Tarea], nombre_run: str | None = None) -> None:
        self.activo = ajustes.tracing_activo
        self.dataset = ajustes.evaluacion_dataset
        self.tareas = {t.id: t for t in tareas}
        self.run = nombre_run or f"{ajustes.modelo} {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S}"
        self.modelo = ajustes.modelo
        self.enviados = 0
        self._http: httpx.Client | None = None
        if self.activo:
            self._http = httpx.Client(
                base_url=ajustes.langfuse_host.rstrip("/"),
                auth=(ajustes.langfuse_public_key or "", ajustes.clave_secreta_langfuse() or ""),
                timeout=10.0,
            )
            self._crear_dataset()

    @classmethod
    def desde_ajustes(cls, ajustes: Ajustes, tareas: list[Tarea]) -> ConjuntoLangfuse:
        return cls(ajustes=ajustes, tareas=tareas)

    def _post(self, ruta: str, cuerpo: dict[str, Any]) -> None:
        if self._http is None:
            return
        try:
            self._http.post(ruta, json=cuerpo).raise_for_status()
            self.enviados += 1
        except httpx.HTTPError:
            logger.exception("Langfuse no aceptó %s", ruta)

    def _crear_dataset(self) -> None:
        self._post("/api/public/v2/datasets", {
            "name": self.dataset,
            "description": "Tareas de la evaluación del agente (agente evaluar)",
            "metadata": {"origen": "agente.evaluacion"},
        })
        for tarea in self.tareas.values():
            self._post("/api/public/dataset-items", {
                "datasetName": self.dataset, "id": tarea.id, **tarea.para_langfuse(),
            })

    def anotar(self, intento: Intento) -> None:
        """Enlaza la traza del intento al run y le pone sus puntuaciones."""
        if not self.activo or not intento.trace_id:
            return
        tarea = self.tareas[intento.tarea]
        self._post("/api/public/dataset-run-items", {
            "runName": self.run, "datasetItemId": tarea.id, "traceId": intento.trace_id,
            "metadata": {"modelo": self.modelo, "instantanea": intento.instantanea},
        })
        escalado = sorted(intento.escalados) == sorted(tarea.esperado.escalado)
        for nombre, valor, comentario in (
            ("exito", 1 if intento.exito else 0, "; ".join(intento.fallos)[:1000]),
            ("escalado_correcto", 1 if escalado else 0, ", ".join(intento.escalados)),
        ):
            self._post("/api/public/scores", {
                "traceId": intento.trace_id, "name": nombre, "value": valor,
                "dataType": "NUMERIC", "comment": comentario or None,
            })

    def cerrar(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
