"""Trazas en Langfuse (SDK 5) de cada ejecución del agente.

Uso desde el servicio (una vez por proceso)::

    trazador = Trazador.desde_ajustes(ajustes)
    ...
    trace_id = trazador.nuevo_trace_id(semilla=f"{hilo}:{turno}")   # se guarda en la cola
    config = trazador.config_ejecucion(
        trace_id=trace_id, thread_id=hilo, cliente_id=ctx.cliente_id,
        tienda=ctx.tienda, canal=ctx.canal, tipo="turno_cliente",
    )
    config["configurable"] = {"thread_id": hilo}
    agente.invoke(entrada, config, context=ctx, version="v2")

Al reanudar (decisión, caducidad, reconciliador) se vuelve a llamar a
``config_ejecucion`` con el ``trace_id`` guardado: un manejador NUEVO por ejecución,
y sesión, usuario y etiquetas otra vez en los metadatos (el SDK no los recuerda).

Sin claves no se importa ``langfuse``, no se crea cliente ni manejador y no se abre
ninguna conexión; todos los métodos siguen funcionando (``nuevo_trace_id`` da el mismo
id que daría con claves, para poder guardarlo siempre).

Errores: un argumento inválido (trace id mal formado, tipo o decisión desconocidos,
ids no ASCII) lanza ``ValueError`` con o sin claves, para que los tests lo vean. Un
fallo del SDK o de la red nunca llega al llamante: se registra en el log.

Trampas del SDK 5 (comprobadas con langfuse 5.0.4):

- El cliente es un singleton por ``public_key`` (``LangfuseResourceManager``): un
  segundo ``Langfuse(public_key=igual, base_url=otra, mask=otra)`` devuelve en
  silencio la configuración del primero. ``cerrar()`` lo saca del registro para que
  un ``Trazador`` nuevo en el mismo proceso (tests, recarga) arranque limpio.
- Sin ``tracer_provider`` propio, Langfuse registra el suyo como proveedor GLOBAL de
  OpenTelemetry (solo se puede fijar una vez por proceso) y su procesador sigue
  exportando a la URL antigua aunque se cierre el cliente. Aquí cada ``Trazador``
  tiene su ``TracerProvider`` y lo apaga al cerrar.
- ``CallbackHandler()`` sin ``public_key`` usa ``get_client()``: con más de un cliente
  en el proceso devuelve uno desactivado; con ninguno, crea uno leyendo el entorno.
  Aquí siempre se le pasa la clave.
- ``mask=`` no cubre ``status_message`` (donde el SDK escribe la interrupción de HITL
  con los argumentos de la herramienta), ni usuario, sesión, etiquetas o metadatos
  propagados, ni el comentario de una puntuación. Por eso hay además
  ``mask_otel_spans=`` y el comentario se enmascara aquí.
- ``get_trace_url()`` del SDK hace una petición (``GET /api/public/projects``) para
  saber el id del proyecto; ver ``url_traza``.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agente.trazas.ids import (
    DECISIONES,
    EVENTO_VEREDICTO,
    PUNTUACION_AFIRMACIONES,
    PUNTUACION_DECISION,
    PUNTUACION_ESPERA,
    TIPOS_EJECUCION,
    Decision,
    TipoEjecucion,
    id_puntuacion,
    trace_id_determinista,
    validar_id,
    validar_trace_id,
)
from agente.trazas.mascara import enmascarar, enmascarar_spans_otel, enmascarar_texto
from nucleo.registro_log import anotar

if TYPE_CHECKING:
    from nucleo.ajustes import Ajustes

logger = logging.getLogger(__name__)

__all__ = ["Trazador"]

HOST_POR_DEFECTO = "https://cloud.langfuse.com"


class Trazador:
    """Punto único de contacto con Langfuse. Seguro entre hilos; uno por proceso."""

    def __init__(
        self,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        host: str = HOST_POR_DEFECTO,
        project_id: str | None = None,
        entorno: str | None = None,
    ) -> None:
        self._public_key = public_key
        self._host = (host or HOST_POR_DEFECTO).rstrip("/")
        self._project_id = project_id
        self._cliente: Any = None
        self._proveedor: Any = None
        self._cerrojo = threading.Lock()
        self._cerrado = False
        # Quién dice la versión del prompt de sistema (``FuentePrompt.version``); la pone
        # ``crear_servicio`` y va en los metadatos de cada ejecución como ``prompt_version``.
        self.version_prompt: Callable[[], str] | None = None
        if not (public_key and secret_key):
            return
        # El chat es solo texto: sin esto el SDK recorre cada entrada y salida (el historial
        # entero en cada generación) buscando adjuntos en base64. Se puede reactivar.
        os.environ.setdefault("LANGFUSE_MEDIA_UPLOAD_ENABLED", "false")
        # Importación perezosa: sin claves, ni siquiera se carga el SDK.
        from langfuse import Langfuse
        from opentelemetry.sdk.trace import TracerProvider

        self._proveedor = TracerProvider()
        self._cliente = Langfuse(
            public_key=public_key,
            secret_key=secret_key,
            base_url=self._host,
            environment=entorno,
            mask=enmascarar,
            mask_otel_spans=enmascarar_spans_otel,
            tracer_provider=self._proveedor,
        )
        recursos = getattr(self._cliente, "_resources", None)
        if recursos is not None and (
            recursos.base_url != self._host or recursos.mask is not enmascarar
        ):
            logger.warning(
                "Ya había un cliente de Langfuse con esta clave pública en el proceso y "
                "el SDK reutiliza su configuración (host %s); llama a cerrar() del anterior.",
                recursos.base_url,
            )

    @classmethod
    def desde_ajustes(cls, ajustes: Ajustes) -> Trazador:
        if not ajustes.tracing_activo:
            return cls()
        return cls(
            public_key=ajustes.langfuse_public_key,
            secret_key=ajustes.clave_secreta_langfuse(),
            host=ajustes.langfuse_host,
            project_id=getattr(ajustes, "langfuse_project_id", None),
        )

    @property
    def activo(self) -> bool:
        return self._cliente is not None and not self._cerrado

    # --- ids -----------------------------------------------------------------------

    def nuevo_trace_id(self, semilla: str | None = None) -> str:
        """Un trace id válido (32 hex), con o sin trazado. Determinista con semilla."""
        if semilla:
            return trace_id_determinista(semilla)
        return secrets.token_hex(16)

    # --- ejecución del agente --------------------------------------------------------

    def config_ejecucion(
        self,
        *,
        trace_id: str | None,
        thread_id: str,
        cliente_id: str,
        tienda: str,
        canal: str,
        encargado_id: str | None = None,
        tipo: TipoEjecucion | str,
    ) -> dict[str, Any]:
        """Lo que hay que fundir en la config de ``invoke``: callbacks, metadatos, nombre.

        Devuelve ``{"callbacks": [...], "metadata": {...}, "run_name": tipo}``. Los
        metadatos solo llevan ids seudónimos: LangGraph copia a cada fila de checkpoint
        los valores de texto de ``metadata`` (nada de nombres, correos ni teléfonos).
        Con ``trace_id=None`` la ejecución abre una traza nueva.
        """
        if trace_id is not None:
            validar_trace_id(trace_id)
        # Las líneas de log de esta ejecución (y la de su petición) llevan sus ids.
        anotar(trace_id=trace_id, thread_id=thread_id)
        if tipo not in TIPOS_EJECUCION:
            raise ValueError(f"tipo de ejecución desconocido: {tipo!r}")
        for nombre, valor in (
            ("thread_id", thread_id),
            ("cliente_id", cliente_id),
            ("tienda", tienda),
            ("canal", canal),
        ):
            validar_id(nombre, valor)
        metadatos: dict[str, Any] = {
            "langfuse_session_id": thread_id,
            "langfuse_user_id": cliente_id,
            "langfuse_tags": [tienda, canal],
        }
        if encargado_id is not None:
            validar_id("encargado_id", encargado_id)
            metadatos["encargado_id"] = encargado_id
        if self.version_prompt is not None:
            metadatos["prompt_version"] = self.version_prompt()
        return {
            "callbacks": self._manejadores(trace_id),
            "metadata": metadatos,
            "run_name": tipo,
        }

    def _manejadores(self, trace_id: str | None) -> list[Any]:
        if not self.activo:
            return []
        try:
            from agente.trazas.manejador import ManejadorLangfuse

            contexto = {"trace_id": trace_id} if trace_id else None
            return [ManejadorLangfuse(public_key=self._public_key, trace_context=contexto)]
        except Exception:
            logger.exception("No se pudo crear el manejador de Langfuse; se sigue sin traza")
            return []

    # --- política y decisiones -------------------------------------------------------

    def registrar_veredicto(
        self,
        *,
        trace_id: str | None,
        herramienta: str,
        tool_call_id: str,
        requiere_encargado: bool,
        motivos: list[str] | tuple[str, ...],
        umbrales: dict[str, Any],
    ) -> None:
        """Un evento ``veredicto_politica`` en la traza, con motivos y umbrales.

        Llamado dentro de la ejecución (desde el ``when`` de HITL) cuelga del span
        activo, el del nodo ``HumanInTheLoopMiddleware.after_model``; ``trace_id=None``
        significa justo eso: "la traza en curso" (si no hay ninguna, no hace nada).
        Fuera de una ejecución cuelga de la raíz de ``trace_id``. Ojo: el ``when`` se
        vuelve a evaluar al reanudar; registra solo el veredicto nuevo, no el recordado.
        """
        if trace_id is not None:
            validar_trace_id(trace_id)
        if not self.activo:
            return
        try:
            from opentelemetry import trace as otel_trace

            evento: dict[str, Any] = {
                "name": EVENTO_VEREDICTO,
                "input": {"herramienta": herramienta, "tool_call_id": tool_call_id},
                "output": {
                    "requiere_encargado": bool(requiere_encargado),
                    "motivos": list(motivos),
                },
                "metadata": {"umbrales": umbrales, "tool_call_id": tool_call_id},
                "level": "WARNING" if requiere_encargado else "DEFAULT",
            }
            actual = otel_trace.get_current_span().get_span_context()
            en_curso = format(actual.trace_id, "032x") if actual.is_valid else None
            if en_curso is not None and trace_id in (None, en_curso):
                self._cliente.create_event(**evento)
            elif trace_id is not None:
                self._cliente.create_event(trace_context={"trace_id": trace_id}, **evento)
            else:
                logger.debug("Veredicto sin traza en curso ni trace_id: no se registra")
        except Exception:
            logger.exception("No se pudo registrar el veredicto en Langfuse")

    def puntuar_decision(
        self,
        *,
        trace_id: str,
        thread_id: str,
        interrupt_id: str,
        decision: Decision | str,
        comentario: str | None,
        espera_minutos: float,
    ) -> None:
        """Dos puntuaciones en la traza: ``decision_encargado`` y ``espera_minutos``.

        Ids deterministas por (hilo, interrupción, nombre): un reintento sobrescribe.
        El comentario (motivo del rechazo) se enmascara: ``create_score`` no pasa por
        ``mask=``.
        """
        validar_trace_id(trace_id)
        if decision not in DECISIONES:
            raise ValueError(f"decisión desconocida: {decision!r}")
        if not self.activo:
            return
        metadatos = {"thread_id": thread_id, "interrupt_id": interrupt_id}
        try:
            self._cliente.create_score(
                score_id=id_puntuacion(thread_id, interrupt_id, PUNTUACION_DECISION),
                trace_id=trace_id,
                name=PUNTUACION_DECISION,
                value=decision,
                data_type="CATEGORICAL",
                comment=enmascarar_texto(comentario) if comentario else None,
                metadata=metadatos,
            )
            self._cliente.create_score(
                score_id=id_puntuacion(thread_id, interrupt_id, PUNTUACION_ESPERA),
                trace_id=trace_id,
                name=PUNTUACION_ESPERA,
                value=round(float(espera_minutos), 2),
                data_type="NUMERIC",
                metadata=metadatos,
            )
        except Exception:
            logger.exception("No se pudo puntuar la decisión en Langfuse")

    def puntuar_afirmaciones(self, *, trace_id: str, thread_id: str, mensaje: str, falsas: list[str]) -> None:
        """``afirmaciones_verdaderas``: 1 si nada de lo que dice el mensaje es falso, 0 si no
        (las falsas, enmascaradas, en el comentario). Id por (hilo, traza, ``mensaje``)."""
        validar_trace_id(trace_id)
        if not self.activo:
            return
        try:
            self._cliente.create_score(
                score_id=id_puntuacion(thread_id, f"{trace_id}:{mensaje}", PUNTUACION_AFIRMACIONES),
                trace_id=trace_id, name=PUNTUACION_AFIRMACIONES, value=0 if falsas else 1,
                data_type="BOOLEAN", comment=enmascarar_texto("; ".join(falsas)) if falsas else None,
                metadata={"thread_id": thread_id},
            )
        except Exception:
            logger.exception("No se pudo puntuar las afirmaciones en Langfuse")

    # --- enlaces y ciclo de vida -----------------------------------------------------

    def url_traza(self, trace_id: str) -> str | None:
        """Enlace a la traza en la interfaz de Langfuse, sin red; ``None`` si está apagado.

        ``Langfuse.get_trace_url()`` pide el id del proyecto a la API (una petición
        síncrona la primera vez), impropio de una respuesta web. Con ``project_id``
        se construye la ruta canónica ``/project/{id}/traces/{trace}``; sin él, la
        ruta ``/trace/{trace}``, que el servidor redirige al proyecto (Langfuse v3;
        en servidores v4 se ha visto que no resuelve: conviene dar ``project_id``).
        """
        validar_trace_id(trace_id)
        if not self.activo:
            return None
        if self._project_id:
            return f"{self._host}/project/{self._project_id}/traces/{trace_id}"
        return f"{self._host}/trace/{trace_id}"

    def flush(self) -> None:
        """Envía ya lo pendiente (bloquea hasta entregarlo). No hace nada si está apagado."""
        if not self.activo:
            return
        try:
            self._cliente.flush()
        except Exception:
            logger.exception("No se pudo vaciar la cola de Langfuse")

    def cerrar(self) -> None:
        """Vacía, para los hilos del SDK y suelta el singleton. Idempotente."""
        with self._cerrojo:
            if self._cliente is None or self._cerrado:
                self._cerrado = True
                return
            self._cerrado = True
        try:
            self._cliente.shutdown()
        except Exception:
            logger.exception("Fallo al cerrar el cliente de Langfuse")
        try:
            self._proveedor.shutdown()
        except Exception:
            logger.exception("Fallo al cerrar el proveedor de trazas")
        self._soltar_singleton()

    def _soltar_singleton(self) -> None:
        # Interno del SDK 5: el registro de clientes por clave pública. Sin esto, un
        # Trazador nuevo con la misma clave heredaría este cliente ya cerrado.
        try:
            from langfuse._client.resource_manager import LangfuseResourceManager

            with LangfuseResourceManager._lock:
                recursos = LangfuseResourceManager._instances.get(self._public_key)
                if recursos is not None and recursos is getattr(self._cliente, "_resources", None):
                    del LangfuseResourceManager._instances[self._public_key]
        except Exception:
            logger.debug("No se pudo soltar el cliente de Langfuse del registro", exc_info=True)

    def __enter__(self) -> Trazador:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cerrar()
