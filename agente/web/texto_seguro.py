"""El carácter nulo (U+0000) se rechaza en la puerta, en un solo sitio, para toda la API.

PostgreSQL no lo admite en ``text`` ni en ``jsonb``; sin este filtro un ``%00`` en un id o
un ``"\\u0000"`` en un texto llegaba a psycopg y daba un 500 con traza. Aquí:

- en la ruta (``/api/conversaciones/%00``): 404, como cualquier id que no existe;
- en la query (``?tienda=%00``) o en cualquier texto del cuerpo JSON (claves incluidas, a
  cualquier profundidad: el mensaje, el motivo de un rechazo, los args editados): 422.

Va por dentro de ``LimiteCuerpo``: el cuerpo ya está entero y acotado (16 KiB). Solo se
analiza el JSON si trae ``\\u0000`` o un byte nulo (lo normal es que no: coste casi nulo).
"""

from __future__ import annotations

import json
from urllib.parse import unquote_to_bytes

from starlette.types import Message, Receive, Scope, Send

from agente.nucleo.texto import NULO, contiene_nulo
from agente.web.asgi import MiddlewareHttp

__all__ = ["DETALLE_NULO", "SinNulos"]

DETALLE_NULO = "el texto no puede contener el carácter nulo (\\u0000)"
_ESCAPE_NULO = b"\\u0000"


def _cuerpo_con_nulo(cuerpo: bytes) -> bool:
    if b"\x00" in cuerpo:
        return True
    if _ESCAPE_NULO not in cuerpo:
        return False
    try:
        return contiene_nulo(json.loads(cuerpo))
    except ValueError:
        return False  # JSON no válido: lo explica la validación de siempre (422)


class SinNulos(MiddlewareHttp):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if NULO in scope["path"]:
            await _responder(send, 404, "no encontrado")
            return
        if b"\x00" in unquote_to_bytes(scope.get("query_string", b"")):
            await _responder(send, 422, DETALLE_NULO)
            return
        partes: list[bytes] = []
        while True:
            mensaje = await receive()
            if mensaje["type"] != "http.request":
                break
            partes.append(mensaje.get("body", b""))
            if not mensaje.get("more_body", False):
                break
        cuerpo = b"".join(partes)
        if _cuerpo_con_nulo(cuerpo):
            await _responder(send, 422, DETALLE_NULO)
            return
        entregado = False

        async def recibir() -> Message:
            nonlocal entregado
            if not entregado:
                entregado = True
                return {"type": "http.request", "body": cuerpo, "more_body": False}
            return await receive()

        await self.app(scope, recibir, send)


async def _responder(send: Send, estado: int, detalle: str) -> None:
    cuerpo = json.dumps({"detalle": detalle}, ensure_ascii=False).encode()
    await send({
        "type": "http.response.start",
        "status": estado,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(cuerpo)).encode())],
    })
    await send({"type": "http.response.body", "body": cuerpo})
