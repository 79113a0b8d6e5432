"""``Alta``: lo que llaman la web (y, por la API, la CLI) del alta, con una conexión del
pool por llamada. ``quien`` es siempre la persona del token, nunca un dato del cuerpo."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg_pool import ConnectionPool

from agente.servicio.alta import personal, tiendas

__all__ = ["Alta"]


class Alta:
    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def _con(self, funcion, *args: Any) -> Any:
        with self.pool.connection() as conexion:
            return funcion(conexion, *args)

    def tiendas(self, quien: str) -> list[dict[str, Any]]:
        return self._con(tiendas.listar_tiendas, quien)

    def crear_tienda(self, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(tiendas.crear_tienda, quien, canal, datos)

    def editar_tienda(self, quien: str, canal: str, tienda: str, cambios: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(tiendas.editar_tienda, quien, canal, tienda, cambios)

    def desactivar_tienda(self, quien: str, canal: str, tienda: str) -> dict[str, Any]:
        return self._con(tiendas.desactivar_tienda, quien, canal, tienda)

    def regiones(self, quien: str) -> list[dict[str, Any]]:
        return self._con(tiendas.listar_regiones, quien)

    def crear_region(self, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(tiendas.crear_region, quien, canal, datos)

    def editar_region(self, quien: str, canal: str, region: str, cambios: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(tiendas.editar_region, quien, canal, region, cambios)

    def desactivar_region(self, quien: str, canal: str, region: str) -> dict[str, Any]:
        return self._con(tiendas.desactivar_region, quien, canal, region)

    def personas(self, quien: str) -> list[dict[str, Any]]:
        return self._con(personal.listar_personas, quien)

    def crear_persona(self, quien: str, canal: str, datos: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(personal.crear_persona, quien, canal, datos)

    def editar_persona(self, quien: str, canal: str, persona: str, cambios: Mapping[str, Any]) -> dict[str, Any]:
        return self._con(personal.editar_persona, quien, canal, persona, cambios)

    def desactivar_persona(self, quien: str, canal: str, persona: str) -> dict[str, Any]:
        return self._con(personal.desactivar_persona, quien, canal, persona)
