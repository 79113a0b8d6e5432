"""Base de los middleware ASGI puros de la web (sin ``BaseHTTPMiddleware``: no copian el
scope, así que ven la ruta que eligió el router y no rompen los flujos SSE)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["MiddlewareHttp"]


class MiddlewareHttp:
    """Deja pasar tal cual lo que no es HTTP (``lifespan``); las peticiones van a ``http``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError
