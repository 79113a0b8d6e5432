"""El carácter nulo (U+0000) se rechaza en la puerta, en un solo sitio, para toda la API.

PostgreSQL no lo admite en ``text`` ni en ``jsonb``; sin este filtro un ``%00`` en un id o
un ``"\\u0000"`` en un texto llegaba a psycopg y daba un 500 con traza. Aquí:

- en la ruta (``/api/conversaciones/%00``): 404, como cualquier id que no existe;
- en la query (``?tienda=%00``): 422.

En el cuerpo JSON (cualquier texto, claves incluidas, a cualquier profundidad: el mensaje,
el motivo de un rechazo, los args editados) lo rechaza con 422 ``agente.web.infra.cuerpo``, que
lo analiza con un límite de profundidad.
"""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes

from starlette.types import Receive, Scope, Send

from agente.web.infra.asgi import MiddlewareHttp
from nucleo.texto import NULO

__all__ = ["DETALLE_NULO", "SinNulos", "responder"]

DETALLE_NULO = "el texto no puede contener el carácter nulo (\\u0000)"


class SinNulos(MiddlewareHttp):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if NULO in scope["path"]:
            await responder(send, 404, "no encontrado")
            return
        if b"\x00" in unquote_to_bytes(scope.get("query_string", b"")):
            await responder(send, 422, DETALLE_NULO)
            return
        await self.app(scope, receive, send)


async def responder(send: Send, estado: int, detalle: str) -> None:
    cuerpo = json.dumps({"detalle": detalle}, ensure_ascii=False).encode()
    await send({
        "type": "http.response.start",
        "status": estado,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(cuerpo)).encode())],
    })
    await send({"type": "http.response.body", "body": cuerpo})
