"""Tokens firmados (JWT HS256 con ``AGENTE_SECRETO``) y las dependencias que los exigen.

Dos roles:

- cliente: ``{"rol": "cliente", "cliente_id", "tienda", "exp"}``; lo emite la web de la
  tienda con el mismo secreto, ``agente token cliente ID`` o el login de demo;
- encargado: ``{"rol": "encargado", "encargado_id", "tienda", "exp"}``; en cada petición se
  comprueba en la base de datos que sigue activo (una baja corta el acceso al momento).

Solo cabecera ``Authorization: Bearer`` (sin cookies: no hay CSRF), también en los
``/eventos`` (del cliente y de la bandeja): las páginas los leen con ``fetch`` y la cabecera
en vez de ``EventSource``, así que ningún token viaja en una URL (ni llega a un log de
accesos, un proxy o el historial).

Un token de una sesión del personal abierta por OIDC o por enlace de correo lleva además
``ent`` (el proveedor, o ``correo``) e ``ini`` (cuándo empezó la sesión); vive
``AGENTE_SESION_MINUTOS`` y la página lo renueva (``POST /api/sesion/renovar``) hasta
``AGENTE_TOKEN_HORAS`` desde ``ini``.

Un token de sesión abierta desde la CLI (``agente entrar``) lleva además ``can: "cli"``:
el canal por el que firma esa persona (``CanalActual``), firmado con el token (la página no
puede decir que es la CLI sin haber entrado por ella). Es informativo: quién firma lo fija
el token; el canal queda en la auditoría de cada firma.

Un token de cliente con ``hilo`` (el enlace de un aviso por correo,
``nucleo.enlaces``) solo abre las rutas de esa conversación: cualquier otra (sus
pedidos, la lista, abrir otra) responde 403 (``_en_su_alcance``).

Un flujo SSE dura más que una petición: sus dependencias (``ClienteDeEventos``,
``EncargadoDeEventos``, ``VigenciaCliente``) dan además una ``Vigencia``
(``agente.web.infra.vigencia``) con la que el flujo repite estas mismas comprobaciones mientras
esté abierto y se cierra con un evento ``fin`` cuando ya no pasan.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import jwt
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agente.servicio.fachada import Servicio
from agente.servicio.resultados import Encargado
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from agente.web.infra.vigencia import Fin, Vigencia
from nucleo.ajustes import Ajustes
from nucleo.contexto import ContextoCliente
from nucleo.errores import NoAutorizado, Prohibido

__all__ = [
    "ROL_CLIENTE",
    "ROL_ENCARGADO",
    "CANAL_CLI",
    "CANAL_WEB",
    "CanalActual",
    "ClienteActual",
    "ClienteDeEventos",
    "ClienteEnFlujo",
    "Credencial",
    "Encargado",
    "EncargadoActual",
    "EncargadoDeEventos",
    "EncargadoEnFlujo",
    "VigenciaCliente",
    "emitir_sesion",
    "emitir_token",
    "leer_token",
    "renovar_sesion",
    "tienda_del_token",
]

ALGORITMO = "HS256"
ROL_CLIENTE = "cliente"
ROL_ENCARGADO = "encargado"
_CAMPO_ID = {ROL_CLIENTE: "cliente_id", ROL_ENCARGADO: "encargado_id"}
CANAL_WEB = "web"
CANAL_CLI = "cli"

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
    extra: dict[str, Any] | None = None,
) -> str:
    """Firma un token de ``rol`` para ``sujeto`` (id de cliente o de encargado)."""
    if rol not in _CAMPO_ID:
        raise ValueError(f"rol desconocido: {rol}")
    ahora = ahora or datetime.now(UTC)
    caduca = ahora + timedelta(hours=horas if horas is not None else ajustes.token_horas)
    datos = {**(extra or {}), "rol": rol, _CAMPO_ID[rol]: sujeto, "tienda": tienda, "iat": ahora, "exp": caduca}
    return jwt.encode(datos, ajustes.secreto.get_secret_value(), algorithm=ALGORITMO)


def tienda_del_token(encargado: Encargado) -> str:
    """La tienda que lleva su token: la suya, o «» si no tiene (un regional o un
    administrador sin tienda propia, ``sql/037_alta.sql``)."""
    return encargado.tienda or ""


def emitir_sesion(
    ajustes: Ajustes, encargado: Encargado, entrada: str, *, inicio: datetime | None = None,
    canal: str = CANAL_WEB,
) -> str:
    """El token de una sesión del personal (OIDC, enlace o, en la demo, ``agente entrar
    --demo``): el mismo de la bandeja, de vida corta (``AGENTE_SESION_MINUTOS``), con la
    entrada y el inicio de la sesión; ``canal="cli"``: abierta desde la CLI."""
    ahora = datetime.now(UTC)
    inicio = inicio or ahora
    extra: dict[str, Any] = {"ent": entrada, "ini": int(inicio.timestamp())}
    if canal == CANAL_CLI:
        extra["can"] = CANAL_CLI
    return emitir_token(
        ajustes, rol=ROL_ENCARGADO, sujeto=encargado.encargado_id, tienda=tienda_del_token(encargado),
        horas=ajustes.sesion_minutos / 60, ahora=ahora, extra=extra,
    )


def renovar_sesion(ajustes: Ajustes, servicio: Servicio, token: str | None) -> str:
    """Un token nuevo para la misma sesión si quien la tiene sigue activo y en su tienda;
    solo sesiones de OIDC o enlace, y hasta ``AGENTE_TOKEN_HORAS`` desde que empezó."""
    datos = leer_token(ajustes, token, ROL_ENCARGADO)
    encargado = _encargado_de(servicio, datos)
    if not isinstance(datos.get("ent"), str) or not isinstance(datos.get("ini"), int):
        raise Prohibido("este token no es de una sesión que se renueve: vuelve a iniciar sesión")
    inicio = datetime.fromtimestamp(datos["ini"], UTC)
    if datetime.now(UTC) - inicio > timedelta(hours=ajustes.token_horas):
        raise NoAutorizado("la sesión ha durado el máximo: vuelve a iniciar sesión")
    return emitir_sesion(ajustes, encargado, datos["ent"], inicio=inicio, canal=canal_de(datos))


def canal_de(datos: dict[str, Any]) -> str:
    """``cli`` si el token es de una sesión abierta desde la CLI; si no, ``web``."""
    return CANAL_CLI if datos.get("can") == CANAL_CLI else CANAL_WEB


def leer_token(ajustes: Ajustes, token: str | None, rol: str) -> dict[str, Any]:
    """Los datos de un token válido de ``rol``; ``NoAutorizado`` (401) o ``Prohibido`` (403)."""
    if not token:
        raise NoAutorizado("falta el token: envía la cabecera «Authorization: Bearer <token>»")
    try:
        datos = jwt.decode(
            token, ajustes.secreto.get_secret_value(), algorithms=[ALGORITMO], options={"require": ["exp", "rol"]}
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
    return _contexto_de(servicio, leer_token(ajustes, token, ROL_CLIENTE))


def _en_su_alcance(datos: dict[str, Any], request: Request) -> dict[str, Any]:
    """Un token de una sola conversación (``hilo``) solo vale en las rutas de esa conversación."""
    hilo = datos.get("hilo")
    if hilo is not None and request.path_params.get("thread_id") != hilo:
        raise Prohibido("este enlace solo abre la conversación del aviso: entra en el chat de la tienda para lo demás")
    return datos


def _contexto_de(servicio: Servicio, datos: dict[str, Any]) -> ContextoCliente:
    ctx = servicio.contexto_de_cliente(datos["cliente_id"], canal="web")
    if ctx.tienda != datos["tienda"]:
        raise Prohibido("el token no corresponde a la tienda de este cliente")
    return ctx


def _caduca(datos: dict[str, Any]) -> datetime:
    return datetime.fromtimestamp(datos["exp"], UTC)


def _vigencia_cliente(servicio: Servicio, datos: dict[str, Any]) -> Vigencia:
    def comprobar() -> Fin | None:
        try:
            ctx = servicio.contexto_de_cliente(datos["cliente_id"], canal="web")
        except Prohibido as exc:
            return Fin("sin_acceso", exc.mensaje)
        if ctx.tienda != datos["tienda"]:
            return Fin("sin_tienda", "el token no corresponde a la tienda de este cliente")
        return None

    return Vigencia(_caduca(datos), comprobar)


@dataclass(frozen=True)
class ClienteEnFlujo:
    """El cliente que abre un flujo SSE y la vigencia con la que el flujo lo recomprueba."""

    ctx: ContextoCliente
    vigencia: Vigencia


def cliente_actual(
    ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial, request: Request
) -> ContextoCliente:
    datos = leer_token(ajustes, credencial.credentials if credencial else None, ROL_CLIENTE)
    return _contexto_de(servicio, _en_su_alcance(datos, request))


def cliente_de_eventos(
    ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial, request: Request
) -> ClienteEnFlujo:
    datos = _en_su_alcance(
        leer_token(ajustes, credencial.credentials if credencial else None, ROL_CLIENTE), request
    )
    return ClienteEnFlujo(_contexto_de(servicio, datos), _vigencia_cliente(servicio, datos))


def vigencia_cliente(ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial) -> Vigencia:
    """La vigencia del token de la cabecera (la respuesta en directo de un turno). Solo
    lee el token: a quien es lo comprueba ``ClienteActual`` en la misma petición."""
    datos = leer_token(ajustes, credencial.credentials if credencial else None, ROL_CLIENTE)
    return _vigencia_cliente(servicio, datos)


def _encargado(ajustes: Ajustes, servicio: Servicio, token: str | None) -> Encargado:
    return _encargado_de(servicio, leer_token(ajustes, token, ROL_ENCARGADO))


def _encargado_de(servicio: Servicio, datos: dict[str, Any]) -> Encargado:
    encargado = servicio.encargado_activo(datos["encargado_id"])  # Prohibido si de baja
    if tienda_del_token(encargado) != datos["tienda"]:
        raise Prohibido("el token no corresponde a la tienda de este encargado")
    return encargado


def _vigencia_encargado(servicio: Servicio, datos: dict[str, Any], al_abrir: Encargado) -> Vigencia:
    """Sigue activo, en la tienda del token y firmando en todas las tiendas que veía al abrir."""

    def comprobar() -> Fin | None:
        try:
            actual = servicio.encargado_activo(datos["encargado_id"])
        except Prohibido as exc:
            return Fin("baja", exc.mensaje)
        if tienda_del_token(actual) != datos["tienda"]:
            return Fin("sin_tienda", "ya no eres de la tienda de este token: vuelve a iniciar sesión")
        perdidas = sorted(set(al_abrir.tiendas) - set(actual.tiendas))
        if perdidas:
            return Fin("sin_tienda", f"ya no firmas en {', '.join(perdidas)}")
        return None

    return Vigencia(_caduca(datos), comprobar)


@dataclass(frozen=True)
class EncargadoEnFlujo:
    """El firmante que abre la bandeja en vivo y la vigencia con la que se le recomprueba."""

    encargado: Encargado
    vigencia: Vigencia


def encargado_actual(
    ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial
) -> Encargado:
    return _encargado(ajustes, servicio, credencial.credentials if credencial else None)


def encargado_de_eventos(ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial) -> EncargadoEnFlujo:
    datos = leer_token(ajustes, credencial.credentials if credencial else None, ROL_ENCARGADO)
    encargado = _encargado_de(servicio, datos)
    return EncargadoEnFlujo(encargado, _vigencia_encargado(servicio, datos, encargado))


def canal_actual(ajustes: AjustesWeb, credencial: Credencial) -> str:
    """Por dónde firma quien llama (``web`` o ``cli``), del token. A quien es lo comprueba
    ``EncargadoActual`` en la misma petición."""
    return canal_de(leer_token(ajustes, credencial.credentials if credencial else None, ROL_ENCARGADO))


ClienteActual = Annotated[ContextoCliente, Depends(cliente_actual)]
CanalActual = Annotated[str, Depends(canal_actual)]
ClienteDeEventos = Annotated[ClienteEnFlujo, Depends(cliente_de_eventos)]
VigenciaCliente = Annotated[Vigencia, Depends(vigencia_cliente)]
EncargadoActual = Annotated[Encargado, Depends(encargado_actual)]
EncargadoDeEventos = Annotated[EncargadoEnFlujo, Depends(encargado_de_eventos)]
