"""El prompt de sistema: el integrado (``PROMPT_BASE``) o uno de la gestión de prompts de Langfuse.

Con ``AGENTE_LANGFUSE_PROMPT`` y las claves de Langfuse, la plantilla se pide a
``GET /api/public/v2/prompts/{nombre}?label={etiqueta}`` y se guarda en memoria
``AGENTE_LANGFUSE_PROMPT_CACHE`` segundos. Si Langfuse no responde o la respuesta no
sirve, se usa la última buena y, si no hay, la integrada: el agente nunca se queda sin
prompt. ``version`` dice cuál se usó («integrado» o «langfuse:nombre:vN») y va en los
metadatos de cada traza.

Trampa: las plantillas de Langfuse usan ``{{variable}}`` (mustache) y la integrada
``{variable}`` (``str.format``); ``PromptSistema.rellenar`` aplica la de su origen.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx

from nucleo.ajustes import Ajustes

__all__ = ["VERSION_INTEGRADA", "FuentePrompt", "PromptSistema", "fuente_desde_ajustes"]

logger = logging.getLogger(__name__)

VERSION_INTEGRADA = "integrado"
RE_MUSTACHE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True, kw_only=True)
class PromptSistema:
    plantilla: str
    version: str
    origen: Literal["integrado", "langfuse"]

    def rellenar(self, **valores: str) -> str:
        if self.origen == "langfuse":
            return RE_MUSTACHE.sub(lambda m: str(valores.get(m.group(1), m.group(0))), self.plantilla)
        return self.plantilla.format(**valores)


def _integrado() -> PromptSistema:
    from agente.middleware.prompt_cliente import PROMPT_BASE

    return PromptSistema(plantilla=PROMPT_BASE, version=VERSION_INTEGRADA, origen="integrado")


class FuentePrompt:
    """De dónde sale el prompt; ``actual()`` es barato (caché) y nunca lanza.

    Sin ``nombre`` (o sin claves) siempre es el integrado y no abre conexiones.
    """

    def __init__(
        self, *, nombre: str | None = None, etiqueta: str = "production", cache: float = 300.0,
        host: str = "", public_key: str | None = None, secret_key: str | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.nombre = nombre if (nombre and public_key and secret_key) else None
        self.etiqueta = etiqueta
        self.cache = cache
        self._http = http
        if self.nombre and self._http is None:
            self._http = httpx.Client(base_url=host.rstrip("/"), auth=(public_key, secret_key), timeout=5.0)
        self._cerrojo = threading.Lock()
        self._ultimo: PromptSistema | None = None
        self._pedido = 0.0

    def _pedir(self) -> PromptSistema:
        respuesta = self._http.get(f"/api/public/v2/prompts/{quote(self.nombre, safe='')}",
                                   params={"label": self.etiqueta})
        respuesta.raise_for_status()
        datos: dict[str, Any] = respuesta.json()
        if datos.get("type", "text") != "text" or not isinstance(datos.get("prompt"), str):
            raise ValueError("el prompt de Langfuse no es de tipo texto")
        return PromptSistema(plantilla=datos["prompt"], origen="langfuse",
                             version=f"langfuse:{self.nombre}:v{datos.get('version', '?')}")

    def actual(self) -> PromptSistema:
        if not self.nombre:
            return _integrado()
        with self._cerrojo:
            if self._ultimo is not None and time.monotonic() - self._pedido < self.cache:
                return self._ultimo
            try:
                self._ultimo = self._pedir()
            except (httpx.HTTPError, ValueError):
                logger.warning("Langfuse no dio el prompt «%s» (%s); se usa %s", self.nombre, self.etiqueta,
                               "el anterior" if self._ultimo else "el integrado", exc_info=True)
            self._pedido = time.monotonic()
            return self._ultimo or _integrado()

    def version(self) -> str:
        return self.actual().version


def fuente_desde_ajustes(ajustes: Ajustes) -> FuentePrompt:
    if not ajustes.tracing_activo or not ajustes.langfuse_prompt:
        return FuentePrompt()
    return FuentePrompt(
        nombre=ajustes.langfuse_prompt, etiqueta=ajustes.langfuse_prompt_etiqueta,
        cache=ajustes.langfuse_prompt_cache, host=ajustes.langfuse_host,
        public_key=ajustes.langfuse_public_key, secret_key=ajustes.clave_secreta_langfuse(),
    )
