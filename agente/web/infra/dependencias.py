"""Las dependencias de FastAPI que reciben las rutas: el servicio, los ajustes, el límite
de ejecuciones y el oyente de avisos, todos del estado de la app (los crea ``app.py`` al
arrancar). Las rutas nunca leen ``request.app.state`` por su cuenta.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from agente.servicio.fachada import Servicio
from agente.web.infra.eventos import Oyente
from agente.web.infra.hebras import HebrasDelAgente
from nucleo.ajustes import Ajustes

__all__ = ["AjustesWeb", "Limitador", "OyenteWeb", "ServicioWeb", "servicio"]


def servicio(request: Request) -> Servicio:
    return request.app.state.servicio


def ajustes(request: Request) -> Ajustes:
    return request.app.state.ajustes


def limitador(request: Request) -> HebrasDelAgente:
    return request.app.state.limitador


def oyente(request: Request) -> Oyente:
    return request.app.state.oyente


ServicioWeb = Annotated[Servicio, Depends(servicio)]
AjustesWeb = Annotated[Ajustes, Depends(ajustes)]
Limitador = Annotated[HebrasDelAgente, Depends(limitador)]
OyenteWeb = Annotated[Oyente, Depends(oyente)]
