"""API de ingesta del back office de la tienda (``/api/tienda/v1``): upsert por el id propio
de la tienda, idempotente, con una clave de API (``X-Clave-API``) y sus alcances.

Rutas finas: la forma de cada registro y lo que se hace con él están en el servicio
(``agente.servicio.tienda``); la guía con ejemplos, en ``docs/conectar-tienda.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.security import APIKeyHeader
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from agente.servicio.tienda.aplicar import Aplicado
from agente.servicio.tienda.claves import ClaveApi
from agente.servicio.tienda.lotes import InformeLote
from agente.servicio.tienda.registros import (
    CambioEstado,
    DatosCliente,
    DatosPedido,
    DatosProducto,
    DatosStock,
)
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import ServicioWeb

__all__ = ["PREFIJO", "RUTA_LOTES", "router"]

PREFIJO = "/api/tienda/v1"
RUTA_LOTES = f"{PREFIJO}/lotes"
RE_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
RE_PEDIDO = r"^P-[0-9]{8}-[0-9]{4}$"

router = APIRouter(prefix=PREFIJO, tags=["tienda"])
_cabecera = APIKeyHeader(name="X-Clave-API", auto_error=False, scheme_name="ClaveTienda",
                         description="Clave de API del back office (`agente claves crear`).")


def _con_alcance(alcance: str | None) -> Callable[..., ClaveApi]:
    def dependencia(servicio: ServicioWeb, valor: Annotated[str | None, Depends(_cabecera)]) -> ClaveApi:
        return servicio.autenticar_clave_tienda(valor, alcance)

    return dependencia


def _clave(alcance: str | None):
    return Annotated[ClaveApi, Depends(_con_alcance(alcance))]


IdTienda = Annotated[str, Path(pattern=RE_ID, description="Id propio de la tienda.")]
IdPedido = Annotated[str, Path(pattern=RE_PEDIDO, description="Id del pedido: P-AAAAMMDD-NNNN.")]


class Resultado(BaseModel):
    tipo: Literal["cliente", "producto", "stock", "pedido", "estado"]
    id: str
    resultado: Literal["creado", "actualizado", "sin_cambios"]
    version: int


class FalloLote(BaseModel):
    linea: int
    estado: int
    campo: str
    detalle: str


class InformeLoteWeb(BaseModel):
    lineas: int
    creados: int
    actualizados: int
    sin_cambios: int
    invalidos: int
    fallos: list[FalloLote]


_409 = {409: {"model": esquemas.Error, "description": (
    "No cuadra o rompería los libros: otra tienda, un cliente o producto que no existe, fechas "
    "y estado incoherentes, una línea con compensaciones que se quita o cambia de precio, un "
    "pedido entregado y reembolsado que vuelve atrás.")}}
_403 = {403: {"model": esquemas.Error, "description": "La clave no tiene el alcance de esta ruta."}}


def _resultado(hecho: Aplicado) -> Resultado:
    return Resultado(**hecho.como_dict())


@router.put("/clientes/{cliente_id}", summary="Crear o actualizar un cliente", response_model=Resultado,
            responses={**_403, **_409})
def poner_cliente(cliente_id: IdTienda, cuerpo: DatosCliente, servicio: ServicioWeb,
                  clave: _clave("clientes")):
    """Idempotente: el mismo cuerpo otra vez es ``sin_cambios``; uno distinto, versión nueva."""
    return _resultado(servicio.ingerir("cliente", clave, cliente_id, cuerpo))


@router.put("/productos/{sku}", summary="Crear o actualizar un producto y su precio en la tienda",
            response_model=Resultado, responses={**_403, **_409})
def poner_producto(sku: IdTienda, cuerpo: DatosProducto, servicio: ServicioWeb, clave: _clave("productos")):
    """El nombre y la categoría son del catálogo común; el ``pvp`` es el precio de venta en la
    tienda de la clave y no cambia el de ninguna otra. Tampoco cambia las líneas ya vendidas."""
    return _resultado(servicio.ingerir("producto", clave, sku, cuerpo))


@router.put("/stock/{sku}", summary="Fijar el stock de un producto en la tienda", response_model=Resultado,
            responses={**_403, **_409})
def poner_stock(sku: IdTienda, cuerpo: DatosStock, servicio: ServicioWeb, clave: _clave("stock")):
    """Unidades en la tienda de la clave; el producto tiene que existir antes (409 si no)."""
    return _resultado(servicio.ingerir("stock", clave, sku, cuerpo))


@router.put("/pedidos/{pedido_id}", summary="Crear o actualizar un pedido con sus líneas",
            response_model=Resultado, responses={**_403, **_409})
def poner_pedido(pedido_id: IdPedido, cuerpo: DatosPedido, servicio: ServicioWeb, clave: _clave("pedidos")):
    """El pedido entero (líneas, precios, estado, fechas, dirección de envío y referencia de
    pago). Las líneas que no vienen se quitan, salvo que el libro ya las haya compensado (409)."""
    return _resultado(servicio.ingerir("pedido", clave, pedido_id, cuerpo))


@router.post("/pedidos/{pedido_id}/estado", summary="Cambiar el estado de un pedido (enviado, entregado…)",
             response_model=Resultado, responses={**_403, **_409})
def cambiar_estado(pedido_id: IdPedido, cuerpo: CambioEstado, servicio: ServicioWeb,
                   clave: _clave("estados")):
    """El caso común y barato: ``enviado`` o ``entregado`` con su fecha (por defecto, ahora)."""
    return _resultado(servicio.ingerir("estado", clave, pedido_id, cuerpo))


# JSON lines; también como text/plain (los mismos bytes), que entienden más clientes y Schemathesis.
_TEXTO_LOTE = {"schema": {"type": "string", "description": "Un registro JSON por línea, cada uno con su "
                                                           "«tipo»: cliente, producto, stock, pedido o estado."}}
_CUERPO_LOTE = {"requestBody": {"required": True, "content": {"application/x-ndjson": _TEXTO_LOTE,
                                                              "text/plain": _TEXTO_LOTE}}}


@router.post("/lotes", summary="Aplicar un lote de registros (JSON lines)", response_model=InformeLoteWeb,
             responses={**_403, 413: {"model": esquemas.Error, "description": "Lote de más de 8 MiB."}},
             openapi_extra=_CUERPO_LOTE)
async def aplicar_lote(request: Request, servicio: ServicioWeb, clave: _clave(None)):
    """Aplica los registros válidos y devuelve cada inválido con su línea, su estado (422,
    403, 404, 409) y el campo culpable; un registro nunca se aplica a medias. Cada registro
    necesita el alcance de su tipo (si no, esa línea es un 403)."""
    cuerpo = await request.body()
    informe: InformeLote = await run_in_threadpool(servicio.ingerir_lote, clave, cuerpo.splitlines())
    return informe.como_dict()
