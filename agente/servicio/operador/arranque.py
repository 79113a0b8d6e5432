"""Lo que las órdenes de la CLI piden a la base antes de que exista un servicio.

``agente token`` y ``agente demo`` no construyen el agente (ni el modelo ni el pool):
abren una conexión corta, hacen su consulta y la cierran. El encargado se comprueba con
la misma regla que en cada petición de la web (``personas.encargado_activo``).
"""

from __future__ import annotations

from typing import Literal

import psycopg

from agente.bd.pool import KWARGS_CONEXION
from agente.demo.una_vez import cargar_una_vez
from agente.servicio import personas

__all__ = ["cargar_demo_una_vez", "tienda_para_token"]


def tienda_para_token(url: str, *, rol: Literal["cliente", "encargado"], sujeto: str) -> str:
    """La tienda de un cliente, o de un encargado activo; ``Prohibido`` si no lo es."""
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        if rol == "cliente":
            return personas.contexto_de_cliente(conexion, sujeto).tienda
        return personas.encargado_activo(conexion, sujeto).tienda


def cargar_demo_una_vez(url: str) -> dict[str, int] | None:
    """Carga la demo en una base vacía (recuentos); ``None`` si ya estaba: no se toca."""
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        return cargar_una_vez(conexion)
