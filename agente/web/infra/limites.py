"""Límite del tamaño del cuerpo de la petición (413). El de mensajes por cliente y minuto
(429) es una dependencia de su ruta (``agente/web/rutas/cliente.py``)."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_CUERPO", "MAX_LOTE", "LimiteCuerpo"]

MAX_CUERPO = 16 * 1024
MAX_LOTE = 8 * 1024 * 1024  # un lote de la tienda por la API (más grande: agente importar)
_SIN_CUERPO = {"GET", "HEAD", "OPTIONS"}


class LimiteCuerpo:
    """Rechaza con 413 los cuerpos de más de ``maximo`` bytes, declarados o no.

    Lee el cuerpo entero (como mucho ``maximo`` bytes) antes de pasar la petición: así el
    413 sale siempre en JSON y en español, nunca a mitad de una respuesta.
    """

    def __init__(self, app: ASGIApp, maximo: int = MAX_CUERPO,
                 por_ruta: dict[str, int] | None = None) -> None:
        self.app = app
        self.maximo = maximo
        self.por_ruta = por_ruta or {}  # rutas con otro máximo (los lotes de la tienda)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _SIN_CUERPO:
            await self.app(scope, receive, send)
            return
        maximo = self.por_ruta.get(scope["path"], self.maximo)
        declarado = dict(scope["headers"]).get(b"content-length")
        if declarado is not None and declarado.isdigit() and int(declarado) > maximo:
            await self._rechazar(send, maximo)
            return
        partes: list[bytes] = []
        total = 0
        while True:
            mensaje = await receive()
            if mensaje["type"] == "http.disconnect":
                return
            cuerpo = mensaje.get("body", b"")
            total += len(cuerpo)
            if total > maximo:
                await self._rechazar(send, maximo)
                return
            partes.append(cuerpo)
            if not mensaje.get("more_body", False):
                break
        entregado = False

        async def recibir() -> Message:
            nonlocal entregado
            if not entregado:
                entregado = True
                return {"type": "http.request", "body": b"".join(partes), "more_body": False}
            return await receive()

        await self.app(scope, recibir, send)

    async def _rechazar(self, send: Send, maximo: int) -> None:
        cuerpo = json.dumps(
            {"detalle": f"la petición es demasiado grande (máximo {maximo // 1024} KiB)"},
            ensure_ascii=False,
        ).encode()
        await send({
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(cuerpo)).encode()),
                (b"connection", b"close"),
            ],
        })
        await send({"type": "http.response.body", "body": cuerpo})
