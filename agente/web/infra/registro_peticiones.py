"""Una línea de log por petición (evento ``peticion``), en JSON si el servidor lo configura.

Campos: ``metodo``, ``ruta`` (la plantilla de la ruta, ``/api/conversaciones/{thread_id}``,
no la URL: sin query, así que nunca el ``?token=`` de ``/eventos``), ``estado``,
``duracion_ms``, ``thread_id`` (si la ruta lo lleva) y ``trace_id`` (si la petición
ejecutó el agente: lo anota el trazador). Nada del cuerpo ni la IP del cliente.

Las sondas (``/healthz``, ``/readyz``, ``/metrics``) van a DEBUG salvo que fallen: un
balanceador las pide cada pocos segundos.
"""

from __future__ import annotations

import logging
import time

from starlette.types import Message, Receive, Scope, Send

from agente.web.infra.asgi import MiddlewareHttp
from nucleo.registro_log import contexto_registro, evento

__all__ = ["RegistroPeticiones"]

logger = logging.getLogger("agente.web.peticiones")

SONDAS = frozenset({"/healthz", "/readyz", "/metrics"})


class RegistroPeticiones(MiddlewareHttp):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        estado = 500  # si la app revienta sin responder
        inicio = time.perf_counter()

        async def enviar(mensaje: Message) -> None:
            nonlocal estado
            if mensaje["type"] == "http.response.start":
                estado = mensaje["status"]
            await send(mensaje)

        with contexto_registro() as datos:
            try:
                await self.app(scope, receive, enviar)
            finally:
                ruta = getattr(scope.get("route"), "path", None) or "(sin ruta)"
                thread_id = (scope.get("path_params") or {}).get("thread_id")
                if thread_id is not None:
                    datos.setdefault("thread_id", thread_id)
                nivel = logging.DEBUG if ruta in SONDAS and estado < 500 else logging.INFO
                duracion = round((time.perf_counter() - inicio) * 1000, 1)
                evento(logger, "peticion", nivel=nivel, mensaje=f"{scope['method']} {ruta} {estado}",
                       metodo=scope["method"], ruta=ruta, estado=estado, duracion_ms=duracion)
