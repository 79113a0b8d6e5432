"""Los enlaces de los avisos al cliente: volver a una conversación y darse de baja.

Los dos son JWT HS256 con ``AGENTE_SECRETO`` (el mismo formato que los tokens de
``agente.web.entrada.auth``) y viajan en el fragmento de la URL (``#token=...``, ``#baja=...``):
el navegador no envía el fragmento al servidor, así que no queda en ningún log de accesos.

- ``token_de_conversacion``: un token de cliente con ``hilo``: entra como ese cliente y
  solo en esa conversación (la web rechaza cualquier otra ruta), y caduca pronto.
- ``token_de_baja``: ``rol = "baja_avisos"``; solo sirve para dar de baja a ese cliente
  (ninguna ruta lo acepta como sesión).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import jwt

__all__ = [
    "ROL_BAJA",
    "enlace_baja",
    "enlace_conversacion",
    "leer_token_de_baja",
    "token_de_baja",
    "token_de_conversacion",
]

ALGORITMO = "HS256"
ROL_BAJA = "baja_avisos"
DIAS_BAJA = 180  # el enlace de baja de un correo viejo sigue sirviendo meses


def token_de_conversacion(
    secreto: str, *, cliente_id: str, tienda: str, hilo: str, horas: float,
    ahora: datetime | None = None,
) -> str:
    ahora = ahora or datetime.now(UTC)
    datos = {"rol": "cliente", "cliente_id": cliente_id, "tienda": tienda, "hilo": hilo,
             "iat": ahora, "exp": ahora + timedelta(hours=horas)}
    return jwt.encode(datos, secreto, algorithm=ALGORITMO)


def token_de_baja(secreto: str, *, cliente_id: str, ahora: datetime | None = None) -> str:
    ahora = ahora or datetime.now(UTC)
    datos = {"rol": ROL_BAJA, "cliente_id": cliente_id, "iat": ahora,
             "exp": ahora + timedelta(days=DIAS_BAJA)}
    return jwt.encode(datos, secreto, algorithm=ALGORITMO)


def leer_token_de_baja(secreto: str, token: str) -> str | None:
    """El cliente de un token de baja válido, o None."""
    try:
        datos: dict[str, Any] = jwt.decode(token, secreto, algorithms=[ALGORITMO],
                                           options={"require": ["exp", "rol"]})
    except jwt.InvalidTokenError:
        return None
    if datos.get("rol") != ROL_BAJA or not isinstance(datos.get("cliente_id"), str):
        return None
    return datos["cliente_id"]


def enlace_conversacion(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/#token={quote(token, safe='')}"


def enlace_baja(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/avisos#baja={quote(token, safe='')}"
