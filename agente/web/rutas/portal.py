"""Lo que el chat del cliente pide al abrirse: quién es, sus pedidos y sus conversaciones."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from agente.web.entrada.auth import ClienteActual
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import ServicioWeb
from nucleo.errores import HiloNoEncontrado

router = APIRouter(tags=["cliente"])

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "Token de otro rol o de otra tienda."},
}


@router.get("/api/pedidos", summary="Mis pedidos", response_model=list[esquemas.PedidoCliente], responses=_ERRORES)
def pedidos(servicio: ServicioWeb, ctx: ClienteActual, limite: Annotated[int, Query(ge=1, le=50)] = 10):
    """Los pedidos del cliente del token, el más reciente primero, con estado, total y productos."""
    return servicio.pedidos_de_cliente(ctx.cliente_id, limite)


@router.get("/api/conversaciones", summary="Mis conversaciones",
            response_model=list[esquemas.ConversacionResumen], responses=_ERRORES)
def conversaciones(servicio: ServicioWeb, ctx: ClienteActual, limite: Annotated[int, Query(ge=1, le=50)] = 20):
    """Las conversaciones del cliente: primero las que esperan a un encargado, después la más
    reciente; cada una con su último mensaje."""
    return servicio.conversaciones_de_cliente(ctx.cliente_id, limite)


@router.get("/api/yo", summary="Quién soy", response_model=esquemas.PerfilCliente, responses=_ERRORES)
def yo(servicio: ServicioWeb, ctx: ClienteActual):
    """El nombre del cliente del token (para el saludo), el nombre visible de su tienda y cuánto
    suele tardar esa tienda en decidir (solo con bastantes decisiones recientes)."""
    perfil = servicio.perfil_de_cliente(ctx.cliente_id)
    if perfil is None:  # pragma: no cover - el token ya exige un cliente existente
        raise HiloNoEncontrado("cliente no encontrado")
    return perfil
