"""Quién es quién: el cliente de una conversación y el encargado que decide.

``encargado_activo`` es la única comprobación de «encargado que existe y sigue activo»:
la usan las decisiones, la web (en cada petición del encargado), el login de demo y
``agente token``. Trampa: dentro de una decisión se llama con la conexión de su
transacción, para que la baja y la decisión se vean en el mismo instante.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from agente.servicio.resultados import Encargado
from nucleo.contexto import ContextoCliente
from nucleo.errores import Prohibido

__all__ = ["contexto_de_cliente", "encargado_activo", "encargado_de_fila"]

SELECT_CLIENTE_SQL = "SELECT id, tienda, nombre FROM clientes WHERE id = %(cliente_id)s"
# Las tiendas donde firma: la suya y, si es regional, las de su región (firmantes_tienda).
SELECT_ENCARGADO_SQL = """
SELECT e.id, e.tienda, e.nombre, e.activo, e.rol, e.administrador,
       array(SELECT f.tienda FROM firmantes_tienda f WHERE f.encargado_id = e.id ORDER BY f.tienda)
           AS tiendas
FROM encargados e WHERE e.id = %(encargado_id)s
"""


def contexto_de_cliente(
    conexion: psycopg.Connection, cliente_id: str, canal: str = "web"
) -> ContextoCliente:
    """El contexto del cliente; ``Prohibido`` si no existe."""
    fila = conexion.execute(SELECT_CLIENTE_SQL, {"cliente_id": cliente_id}).fetchone()
    if fila is None:
        raise Prohibido(f"cliente desconocido: {cliente_id}")
    return ContextoCliente(
        cliente_id=fila["id"], tienda=fila["tienda"], nombre=fila["nombre"], canal=canal
    )


def encargado_activo(conexion: psycopg.Connection, encargado_id: str) -> Encargado:
    """El firmante (encargado, gerente o regional), si existe y está activo; si no,
    ``Prohibido`` (403). Con su rol y las tiendas donde firma."""
    return encargado_de_fila(
        conexion.execute(SELECT_ENCARGADO_SQL, {"encargado_id": encargado_id}).fetchone(), encargado_id
    )


def encargado_de_fila(fila: Mapping[str, Any] | None, encargado_id: str) -> Encargado:
    """``encargado_activo`` desde una fila ya leída (la misma forma que ``SELECT_ENCARGADO_SQL``)."""
    if fila is None:
        raise Prohibido(f"encargado desconocido: {encargado_id}")
    if not fila["activo"]:
        raise Prohibido(f"el encargado {encargado_id} está dado de baja")
    return Encargado(
        encargado_id=fila["id"], tienda=fila["tienda"], nombre=fila["nombre"], rol=fila["rol"],
        tiendas=tuple(fila["tiendas"] or ((fila["tienda"],) if fila["tienda"] else ())),
        administrador=bool(fila.get("administrador", False)),
    )
