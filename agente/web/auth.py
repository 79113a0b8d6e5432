"""Tokens firmados (JWT HS256 con ``AGENTE_SECRETO``) y las dependencias que los exigen.

Dos roles:

- cliente: ``{"rol": "cliente", "cliente_id", "tienda", "exp"}``; lo emite la web de la
  tienda con el mismo secreto, ``agente token cliente ID`` o el login de demo;
- encargado: ``{"rol": "encargado", "encargado_id", "tienda", "exp"}``; en cada petición se
  comprueba en la base de datos que sigue activo (una baja corta el acceso al momento).

Solo cabecera ``Authorization: Bearer`` (sin cookies: no hay CSRF). La única excepción es
los ``/eventos`` (del cliente y de la bandeja): ``EventSource`` no puede enviar
cabeceras y aceptan ``?token=``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import jwt
from fastapi import Depends, Query
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agente.nucleo.ajustes import Ajustes
from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import NoAutorizado, Prohibido
from agente.servicio import Encargado, Servicio
from agente.web.dependencias import AjustesWeb, ServicioWeb

__all__ = [
    "ROL_CLIENTE",
    "ROL_ENCARGADO",
    "ClienteActual",
    "ClienteDeEventos",
    "Encargado",
    "EncargadoActual",
    "EncargadoDeEventos",
    "emitir_token",
    "leer_token",
]

ALGORITMO = "HS256"
ROL_CLIENTE = "cliente"
ROL_ENCARGADO = "encargado"
_CAMPO_ID = {ROL_CLIENTE: "cliente_id", ROL_ENCARGADO: "encargado_id"}

_portador = HTTPBearer(auto_error=False, description="Token de cliente o de encargado.")
Credencial = Annotated[HTTPAuthorizationCredentials | None, Depends(_portador)]


def emitir_token(
    ajustes: Ajustes,
    *,
    rol: str,
    sujeto: str,
    tienda: str,
    horas: float | None = None,
    ahora: datetime | None = None,
) -> str:
    """Firma un token de ``rol`` para ``sujeto`` (id de cliente o de encargado)."""
    if rol not in _CAMPO_ID:
        raise ValueError(f"rol desconocido: {rol}")
    ahora = ahora or datetime.now(UTC)
    caduca = ahora + timedelta(hours=horas if horas is not None else ajustes.token_horas)
    datos = {"rol": rol, _CAMPO_ID[rol]: sujeto, "tienda": tienda, "iat": ahora, "exp": caduca}
    return jwt.encode(datos, ajustes.secreto, algorithm=ALGORITMO)


def leer_token(ajustes: Ajustes, token: str | None, rol: str) -> dict[str, Any]:
    """Los datos de un token válido de ``rol``; ``NoAutorizado`` (401) o ``Prohibido`` (403)."""
    if not token:
        raise NoAutorizado("falta el token: envía la cabecera «Authorization: Bearer <token>»")
    try:
        datos = jwt.decode(
            token, ajustes.secreto, algorithms=[ALGORITMO], options={"require": ["exp", "rol"]}
        )
    except jwt.ExpiredSignatureError:
        raise NoAutorizado("el token ha caducado: vuelve a iniciar sesión") from None
    except jwt.InvalidTokenError:
        raise NoAutorizado("token no válido") from None
    if datos.get("rol") not in _CAMPO_ID:
        raise NoAutorizado("token no válido: rol desconocido")
    if datos["rol"] != rol:
        raise Prohibido(f"esta operación es para un {rol}, no para un {datos['rol']}")
    if not isinstance(datos.get(_CAMPO_ID[rol]), str) or not isinstance(datos.get("tienda"), str):
        raise NoAutorizado("token no válido: faltan datos")
    return datos


def _contexto(ajustes: Ajustes, servicio: Servicio, token: str | None) -> ContextoCliente:
    datos = leer_token(ajustes, token, ROL_CLIENTE)
    ctx = servicio.contexto_de_cliente(datos["cliente_id"], canal="web")
    if ctx.tienda != datos["tienda"]:
        raise Prohibido("el token no corresponde a la tienda de este cliente")
    return ctx


def cliente_actual(
    ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial
) -> ContextoCliente:
    return _contexto(ajustes, servicio, credencial.credentials if credencial else None)


def cliente_de_eventos(
    ajustes: AjustesWeb,
    servicio: ServicioWeb,
    credencial: Credencial,
    token: Annotated[str | None, Query(description="Token del cliente (EventSource no envía cabeceras).")] = None,
) -> ContextoCliente:
    return _contexto(ajustes, servicio, credencial.credentials if credencial else token)


def _encargado(ajustes: Ajustes, servicio: Servicio, token: str | None) -> Encargado:
    datos = leer_token(ajustes, token, ROL_ENCARGADO)
    encargado = servicio.encargado_activo(datos["encargado_id"])  # Prohibido si de baja
    if encargado.tienda != datos["tienda"]:
        raise Prohibido("el token no corresponde a la tienda de este encargado")
    return encargado


def encargado_actual(
    ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial
) -> Encargado:
    return _encargado(ajustes, servicio, credencial.credentials if credencial else None)


def encargado_de_eventos(
    ajustes: AjustesWeb,
    servicio: ServicioWeb,
    credencial: Credencial,
    token: Annotated[str | None, Query(description="Token del encargado (EventSource no envía cabeceras).")] = None,
) -> Encargado:
    return _encargado(ajustes, servicio, credencial.credentials if credencial else token)


ClienteActual = Annotated[ContextoCliente, Depends(cliente_actual)]
ClienteDeEventos = Annotated[ContextoCliente, Depends(cliente_de_eventos)]
EncargadoActual = Annotated[Encargado, Depends(encargado_actual)]
EncargadoDeEventos = Annotated[Encargado, Depends(encargado_de_eventos)]
