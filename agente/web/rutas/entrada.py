"""La entrada del personal sin la CLI: OpenID Connect y enlace por correo.

- ``GET /entrada/oidc/{proveedor}``: guarda el intento (state, nonce, verificador PKCE) en
  una cookie firmada, ``HttpOnly`` y de 10 minutos, y manda al proveedor.
- ``GET /entrada/oidc/{proveedor}/vuelta``: comprueba el ``state`` contra la cookie, canjea
  el código, valida el ID token (``agente.web.entrada.oidc``) y casa el correo verificado con un
  encargado activo. Bien: a ``/encargado#token=...`` (el fragmento no llega a ningún log).
  Mal: una página de rechazo en español; no se crea nada.
- ``GET /entrada/salir/{proveedor}``: «Cerrar sesión» también en el proveedor, si ofrece
  ``end_session_endpoint``.
- ``POST /api/entrada/correo`` y ``/api/entrada/correo/canjear``: el enlace por correo.
- ``POST /api/sesion/renovar``: la bandeja renueva su token mientras la pestaña está abierta.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import jwt
from fastapi import APIRouter, BackgroundTasks, Request
from fastapi.responses import RedirectResponse

from agente.servicio.entrada.correo import enviar_enlace
from agente.web.entrada.auth import Credencial, emitir_sesion, renovar_sesion
from agente.web.entrada.oidc import ClienteOidc, ErrorOidc, Intento
from agente.web.entrada.paginas import rechazo
from agente.web.esquemas import comun as esquemas
from agente.web.esquemas import entrada as esquemas_entrada
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from nucleo.ajustes import Ajustes
from nucleo.errores import HiloNoEncontrado, Prohibido

__all__ = ["COOKIE", "RESPUESTA_ENLACE", "clientes_oidc", "router"]

router = APIRouter(tags=["entrada"])

COOKIE = "agente_entrada"
RUTA_COOKIE = "/entrada/oidc"
VIDA_INTENTO = timedelta(minutes=10)
AUDIENCIA_INTENTO = "agente-entrada-oidc"
ENTRADA_CORREO = "correo"
RESPUESTA_ENLACE = (
    "Si esa dirección es de un encargado, le hemos enviado un enlace para entrar. "
    "Vale 15 minutos y una sola vez."
)
_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "De baja, de otro rol o sesión que no se renueva."},
}


def clientes_oidc(ajustes: Ajustes) -> dict[str, ClienteOidc]:
    """Un cliente por proveedor configurado (los crea ``crear_app``, uno por proceso)."""
    return {p.nombre: ClienteOidc(p, base_url=ajustes.avisos_base_url) for p in ajustes.oidc_proveedores}


def _cliente(request: Request, nombre: str) -> ClienteOidc | None:
    return request.app.state.oidc.get(nombre)


def _cookie_intento(ajustes: Ajustes, intento: Intento) -> str:
    datos = {"aud": AUDIENCIA_INTENTO, "prov": intento.proveedor, "state": intento.state,
             "nonce": intento.nonce, "ver": intento.verificador,
             "exp": datetime.now(UTC) + VIDA_INTENTO}
    return jwt.encode(datos, ajustes.secreto.get_secret_value(), algorithm="HS256")


def _leer_intento(ajustes: Ajustes, valor: str | None) -> Intento | None:
    if not valor:
        return None
    try:
        d = jwt.decode(valor, ajustes.secreto.get_secret_value(), algorithms=["HS256"],
                       audience=AUDIENCIA_INTENTO, options={"require": ["exp", "aud"]})
        return Intento(d["prov"], d["state"], d["nonce"], d["ver"])
    except (jwt.InvalidTokenError, KeyError):
        return None


@router.get("/api/entrada/proveedores", summary="Cómo puede entrar el personal",
            response_model=esquemas_entrada.Entradas)
def entradas(request: Request, ajustes: AjustesWeb):
    """Los proveedores OpenID Connect configurados y si hay enlace por correo."""
    return {
        "proveedores": [
            {"nombre": c.proveedor.nombre, "titulo": c.proveedor.etiqueta(),
             "url": f"/entrada/oidc/{c.proveedor.nombre}"}
            for c in request.app.state.oidc.values()
        ],
        "correo": bool(ajustes.smtp_url),
    }


@router.get("/entrada/oidc/{nombre}", include_in_schema=False)
def ida(nombre: str, request: Request, ajustes: AjustesWeb):
    cliente = _cliente(request, nombre)
    if cliente is None:
        return rechazo("No hay ningún proveedor de identidad con ese nombre.", estado=404)
    intento = Intento.nuevo(nombre)
    try:
        url = cliente.url_ida(intento)
    except ErrorOidc as exc:
        return rechazo(exc.mensaje, estado=502)
    respuesta = RedirectResponse(url, status_code=303)
    respuesta.set_cookie(
        COOKIE, _cookie_intento(ajustes, intento), max_age=int(VIDA_INTENTO.total_seconds()),
        path=RUTA_COOKIE, httponly=True, samesite="lax",
        secure=ajustes.avisos_base_url.startswith("https://"),
    )
    return respuesta


@router.get("/entrada/oidc/{nombre}/vuelta", include_in_schema=False)
def vuelta(
    nombre: str, request: Request, ajustes: AjustesWeb, servicio: ServicioWeb,
    code: str | None = None, state: str | None = None, error: str | None = None,
):
    respuesta = _vuelta(nombre, request, ajustes, servicio, code, state, error)
    respuesta.delete_cookie(COOKIE, path=RUTA_COOKIE)  # cada intento vale una vez
    return respuesta


def _vuelta(nombre, request, ajustes, servicio, code, state, error):
    cliente = _cliente(request, nombre)
    if cliente is None:
        return rechazo("No hay ningún proveedor de identidad con ese nombre.", estado=404)
    intento = _leer_intento(ajustes, request.cookies.get(COOKIE))
    if intento is None or intento.proveedor != nombre:
        return rechazo("Este intento de entrada ha caducado o empezó en otro navegador. Vuelve a intentarlo.",
                       estado=400)
    if not state or not secrets.compare_digest(state.encode(), intento.state.encode()):
        return rechazo("La respuesta del proveedor no corresponde a tu intento de entrada (state). "
                       "Vuelve a intentarlo.", estado=400)
    if error or not code:
        return rechazo("El proveedor de identidad no ha dado permiso para entrar.", estado=403)
    try:
        claims = cliente.canjear(code, intento)
        email = cliente.email_verificado(claims)
    except ErrorOidc as exc:
        return rechazo(exc.mensaje, estado=400)
    try:
        encargado = servicio.encargado_por_email(email)
    except Prohibido as exc:
        return rechazo(exc.mensaje, estado=403)
    token = emitir_sesion(ajustes, encargado, nombre)
    # En el fragmento: el navegador no lo envía, así que no queda en ningún log.
    return RedirectResponse(f"/encargado#token={token}", status_code=303,
                            headers={"Cache-Control": "no-store"})


@router.get("/entrada/salir/{nombre}", include_in_schema=False)
def salir(nombre: str, request: Request, ajustes: AjustesWeb):
    """Después de borrar su token, la página viene aquí: se cierra también en el proveedor."""
    cliente = _cliente(request, nombre)
    destino = None
    if cliente is not None:
        destino = cliente.url_salida(f"{ajustes.avisos_base_url.rstrip('/')}/encargado")
    return RedirectResponse(destino or "/encargado", status_code=303)


@router.post("/api/sesion/renovar", summary="Renovar la sesión del personal",
             response_model=esquemas.Token, responses=_ERRORES)
def renovar(ajustes: AjustesWeb, servicio: ServicioWeb, credencial: Credencial):
    """Un token nuevo de vida corta para una sesión abierta por OIDC o por enlace, si quien
    la tiene sigue activo; hasta ``AGENTE_TOKEN_HORAS`` desde que entró."""
    token = renovar_sesion(ajustes, servicio, credencial.credentials if credencial else None)
    return {"token": token, "destino": "/encargado"}


@router.post("/api/entrada/correo", summary="Pedir un enlace de entrada por correo", status_code=202,
             response_model=esquemas_entrada.Aviso,
             responses={404: {"model": esquemas.Error, "description": "Sin correo configurado."},
                        429: {"model": esquemas.Error, "description": "Demasiados enlaces pedidos."}})
def pedir_enlace(cuerpo: esquemas_entrada.PedirEnlace, request: Request, ajustes: AjustesWeb,
                 servicio: ServicioWeb, tareas: BackgroundTasks):
    """Siempre la misma respuesta, exista o no la dirección; el correo sale después."""
    if not ajustes.smtp_url:
        raise HiloNoEncontrado("no hay entrada por correo en esta tienda")
    ip = request.client.host if request.client else "desconocida"
    enlace = servicio.pedir_enlace_entrada(cuerpo.email, ip)
    if enlace is not None:
        tareas.add_task(enviar_enlace, ajustes, enlace)
    return {"detalle": RESPUESTA_ENLACE}


@router.post("/api/entrada/correo/canjear", summary="Entrar con un enlace de correo",
             response_model=esquemas.Token, responses=_ERRORES)
def canjear_enlace(cuerpo: esquemas_entrada.CanjearEnlace, ajustes: AjustesWeb, servicio: ServicioWeb):
    """El token de sesión a cambio del enlace (una vez, 15 minutos, la misma dirección)."""
    encargado = servicio.canjear_enlace_entrada(cuerpo.token, cuerpo.email)
    token = emitir_sesion(ajustes, encargado, ENTRADA_CORREO, canal=cuerpo.canal)
    return {"token": token, "destino": "/encargado"}

