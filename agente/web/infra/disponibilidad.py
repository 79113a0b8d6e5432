"""Liveness y readiness, y el 503 de «no disponible» (base caída o servidor parándose).

- ``GET /healthz`` (liveness): el proceso está vivo y atiende. No toca la base: si la base
  cae, reiniciar el proceso no arregla nada, así que un orquestador no debe matarlo.
- ``GET /readyz`` (readiness): la base responde (en ``AGENTE_POOL_ESPERA`` segundos como
  mucho) y el servidor no se está parando. Con 503 un balanceador deja de mandarle tráfico.

Con la base caída, cualquier ruta que la necesite responde 503 con ``Retry-After`` en
cuanto el pool se rinde (``AGENTE_POOL_ESPERA``): la traducción de ``OperationalError``
(``PoolTimeout`` incluido) está en ``agente.web.infra.errores_http``, en un solo sitio.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from agente.web.infra.parada import DETALLE_PARANDO, Parada

__all__ = ["DETALLE_BD_CAIDA", "REINTENTAR_SEGUNDOS", "no_disponible", "router"]

logger = logging.getLogger(__name__)

REINTENTAR_SEGUNDOS = 5
DETALLE_BD_CAIDA = "la base de datos no responde: vuelve a intentarlo en unos segundos"

router = APIRouter(tags=["operación"])


def _parada(request: Request) -> Parada:
    return request.app.state.parada


ParadaWeb = Annotated[Parada, Depends(_parada)]

_NO_DISPONIBLE = {
    "model": esquemas.Error,
    "description": "No disponible: la base de datos no responde o el servidor se está parando.",
    "headers": {"Retry-After": {"description": "Segundos tras los que reintentar.", "schema": {"type": "integer"}}},
}


def no_disponible(detalle: str) -> JSONResponse:
    return JSONResponse({"detalle": detalle}, status_code=503,
                        headers={"Retry-After": str(REINTENTAR_SEGUNDOS)})


@router.get("/healthz", summary="Liveness: el proceso atiende", response_model=esquemas.Salud)
def salud():
    """El proceso está vivo. No comprueba la base de datos (para eso, ``/readyz``)."""
    return {"estado": "ok"}


@router.get("/readyz", summary="Readiness: listo para recibir tráfico", response_model=esquemas.Salud,
            responses={503: _NO_DISPONIBLE})
def listo(servicio: ServicioWeb, ajustes: AjustesWeb, parada: ParadaWeb):
    """La base de datos responde y el servidor no se está parando."""
    if parada.parando:
        return no_disponible(DETALLE_PARANDO)
    if not servicio.base_responde(espera=ajustes.pool_espera):
        return no_disponible(DETALLE_BD_CAIDA)
    return {"estado": "ok"}
