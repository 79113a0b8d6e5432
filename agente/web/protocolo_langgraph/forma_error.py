"""La forma de error del protocolo bajo ``/langgraph``: ``{"detail": "..."}``.

Los errores se traducen a HTTP en un solo sitio (``agente.web.infra.errores_http``) y las capas
comunes (413, 422 del cuerpo, 503) escriben ``{"detalle": ...}``; los SDK de LangGraph
leen ``detail``. Este middleware solo cambia el nombre de la clave en las respuestas de
error JSON de las rutas del protocolo: el texto, el código y las cabeceras no cambian.
"""

from __future__ import annotations

import json

from starlette.types import Message, Receive, Scope, Send

from agente.web.infra.asgi import MiddlewareHttp

__all__ = ["FormaErrorProtocolo"]


class FormaErrorProtocolo(MiddlewareHttp):
    prefijo = "/langgraph"

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        ruta = scope.get("path", "")
        if ruta != self.prefijo and not ruta.startswith(self.prefijo + "/"):
            await self.app(scope, receive, send)
            return
        inicio: Message | None = None
        partes: list[bytes] = []

        async def enviar(mensaje: Message) -> None:
            nonlocal inicio
            if mensaje["type"] == "http.response.start":
                cabeceras = dict(mensaje.get("headers", []))
                if mensaje["status"] >= 400 and cabeceras.get(b"content-type", b"").startswith(b"application/json"):
                    inicio = mensaje  # se retiene hasta tener el cuerpo (pequeño)
                    return
            elif inicio is not None and mensaje["type"] == "http.response.body":
                partes.append(mensaje.get("body", b""))
                if mensaje.get("more_body", False):
                    return
                await self._reescrito(send, inicio, b"".join(partes))
                return
            await send(mensaje)

        await self.app(scope, receive, enviar)

    @staticmethod
    async def _reescrito(send: Send, inicio: Message, cuerpo: bytes) -> None:
        try:
            datos = json.loads(cuerpo)
        except ValueError:
            datos = None
        if isinstance(datos, dict) and "detalle" in datos and "detail" not in datos:
            datos = {"detail": datos.pop("detalle"), **datos}
            cuerpo = json.dumps(datos, ensure_ascii=False).encode()
        cabeceras = [(k, v) for k, v in inicio.get("headers", []) if k.lower() != b"content-length"]
        cabeceras.append((b"content-length", str(len(cuerpo)).encode()))
        await send({**inicio, "headers": cabeceras})
        await send({"type": "http.response.body", "body": cuerpo})
