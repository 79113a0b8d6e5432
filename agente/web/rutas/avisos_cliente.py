"""La baja de los avisos por correo al cliente (el enlace de cada aviso) y su página.

El enlace lleva el token en el fragmento (``/avisos#baja=...``): no llega al servidor
al abrirlo ni queda en ningún log; la página lo envía en el cuerpo de un POST al pulsar
el botón (un escáner de correo que abre enlaces no da de baja a nadie).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from nucleo.enlaces import leer_token_de_baja
from nucleo.errores import NoAutorizado

__all__ = ["router"]

router = APIRouter(tags=["cliente"])
PAGINA = Path(__file__).resolve().parent.parent / "estaticos" / "avisos.html"


@router.get("/avisos", include_in_schema=False)
def pagina_baja():
    return FileResponse(PAGINA, media_type="text/html; charset=utf-8")


@router.post(
    "/api/avisos-cliente/baja",
    summary="Darse de baja de los avisos por correo",
    response_model=esquemas.BajaAvisos,
    responses={401: {"model": esquemas.Error, "description": "Enlace de baja no válido o caducado."}},
)
def baja(cuerpo: esquemas.BajaAvisosEntrada, servicio: ServicioWeb, ajustes: AjustesWeb):
    """Con el token del enlace de baja de un aviso: ese cliente no recibe más avisos por
    correo (ni los que ya estaban por salir). Repetirla no cambia nada."""
    cliente_id = leer_token_de_baja(ajustes.secreto.get_secret_value(), cuerpo.token)
    if cliente_id is None or not servicio.baja_avisos_cliente(cliente_id):
        raise NoAutorizado("el enlace de baja no es válido o ha caducado")
    return {"baja": True, "detalle": "Hecho: no te enviaremos más avisos por correo de tus conversaciones."}
