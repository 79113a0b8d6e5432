"""El cuerpo de cada petición se lee y se revisa en la puerta, antes que nada más (token,
validación, ruta): lo que no se puede leer es un 422 con ``{"detalle"}``, nunca un 500.

Va por dentro de ``LimiteCuerpo`` (más de 16 KiB: 413), así que aquí el cuerpo ya está
entero y acotado. En orden:

- un byte nulo, o bytes que no son UTF-8: 422;
- JSON que no se puede analizar, o que anida más de lo que admite el analizador de
  pydantic-core (``from_json``: unos 200 niveles, sin recursión de Python): 422. Antes
  se analizaba con ``json.loads``, que recursa por nivel: 3.000 corchetes daban un
  ``RecursionError`` (un 500 con traza, sin token). La API solo recibe JSON;
- un ``"\\u0000"`` en cualquier texto (claves incluidas): 422 (``texto_seguro``).

En el webhook del proveedor de pagos (``rutas_pagos.RUTA_STRIPE``) el mismo rechazo es un
400, como todo lo que el webhook no admite: es el contrato del proveedor, no el de la API.

Lo que pasa esta puerta lo vuelve a analizar FastAPI (``json.loads``): ya acotado en
profundidad, sin riesgo. Revisar cuesta microsegundos (medio milisegundo con 16 KiB de
listas). Las rutas sin cuerpo (``GET``, ``HEAD``, ``OPTIONS``) no lo leen: ni aquí ni
en ``LimiteCuerpo``.
"""

from __future__ import annotations

import codecs

from pydantic_core import from_json
from starlette.types import Message, Receive, Scope, Send

from agente.web.infra.asgi import MiddlewareHttp
from agente.web.infra.texto_seguro import DETALLE_NULO, responder
from nucleo.texto import contiene_nulo

__all__ = ["DETALLE_JSON", "DETALLE_PROFUNDIDAD", "DETALLE_UTF8", "SIN_CUERPO", "CuerpoJson", "revisar"]

DETALLE_UTF8 = "el cuerpo no es texto UTF-8 válido"
DETALLE_PROFUNDIDAD = "el cuerpo JSON anida demasiados niveles de listas u objetos"
DETALLE_JSON = "el cuerpo no es JSON válido"
SIN_CUERPO = frozenset({"GET", "HEAD", "OPTIONS"})
_ESCAPE_NULO = b"\\u0000"


def revisar(cuerpo: bytes, *, json_lines: bool = False) -> str | None:
    """El motivo (en español) por el que el cuerpo no se admite, o ``None`` si vale.

    ``json_lines``: un lote de la tienda, un registro JSON por línea; aquí solo se revisan
    los bytes (cada línea la valida el servicio y un error es de esa línea, no del lote)."""
    if not cuerpo:
        return None
    if b"\x00" in cuerpo:
        return DETALLE_NULO
    try:
        cuerpo.decode("utf-8")
    except UnicodeDecodeError:
        return DETALLE_UTF8
    if json_lines:
        return DETALLE_NULO if _ESCAPE_NULO in cuerpo else None
    try:
        # Como lo leerá Starlette, que admite el BOM de UTF-8. Un sustituto suelto
        # ("\ud800") o un entero de más de 4.300 cifras también son JSON no válido aquí.
        datos = from_json(cuerpo.removeprefix(codecs.BOM_UTF8))
    except ValueError as exc:
        return DETALLE_PROFUNDIDAD if "recursion limit" in str(exc) else DETALLE_JSON
    if _ESCAPE_NULO in cuerpo and contiene_nulo(datos):  # solo así llega un nulo a un texto
        return DETALLE_NULO
    return None


class CuerpoJson(MiddlewareHttp):
    def __init__(self, app, json_lines: frozenset[str] = frozenset(),
                 con_400: frozenset[str] = frozenset()) -> None:
        super().__init__(app)
        self.json_lines = json_lines  # rutas cuyo cuerpo es JSON lines (los lotes de la tienda)
        self.con_400 = con_400  # rutas cuyo contrato rechaza con 400 (el webhook del proveedor)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] in SIN_CUERPO:
            await self.app(scope, receive, send)
            return
        partes: list[bytes] = []
        while True:
            mensaje = await receive()
            if mensaje["type"] != "http.request":
                return  # el cliente se fue antes de terminar de mandarlo
            partes.append(mensaje.get("body", b""))
            if not mensaje.get("more_body", False):
                break
        cuerpo = b"".join(partes)
        motivo = revisar(cuerpo, json_lines=scope["path"] in self.json_lines)
        if motivo is not None:
            await responder(send, 400 if scope["path"] in self.con_400 else 422, motivo)
            return
        entregado = False

        async def recibir() -> Message:
            nonlocal entregado
            if not entregado:
                entregado = True
                return {"type": "http.request", "body": cuerpo, "more_body": False}
            return await receive()

        await self.app(scope, recibir, send)
