"""La política de la tienda tal como la lee el cliente (la herramienta ``consultar_politica``).

``PoliticaTienda(pool=...)`` cumple el puerto ``nucleo.puertos.FuentePolitica``:
``herramientas/`` no importa ``politicas/``, así que el ensamblaje (``agente.construir``)
se la pasa a las herramientas en ``Dependencias(politica=...)``. Los valores salen de
``politicas_tienda`` con los defectos de ``politicas.defectos``; el texto, de aquí.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from psycopg import sql
from psycopg.rows import dict_row

from nucleo.contexto import ContextoCliente
from operaciones import carpetas
from politicas.defectos import DEFECTOS, columnas_con_defecto, parametros_defecto

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["SELECT_POLITICA_SQL", "PoliticaTienda", "texto_politica"]

SELECT_POLITICA_SQL = (
    sql.SQL(
        """SELECT t.nombre,
       {umbrales}
FROM tiendas t
LEFT JOIN politicas_tienda pt ON pt.tienda = t.id
WHERE t.id = %(tienda)s"""
    )
    .format(umbrales=columnas_con_defecto("pt"))
    .as_string()
)


def texto_politica(nombre_tienda: str, valores: Mapping[str, Any]) -> str:
    """El texto para el cliente con los ``valores`` de ``politicas_tienda`` (o ``DEFECTOS``)."""
    return "\n".join(
        [
            f"Política de devoluciones y cambios de la tienda {nombre_tienda}:",
            *(modulo.texto_cliente(valores) for modulo in carpetas.piezas("politica")),
            "- Aprobaciones: una operación que espera a un encargado caduca a las "
            f"{valores['horas_caducidad']} horas. Si mientras tanto cambian el stock o el precio, "
            "hay que volver a proponerla.",
        ]
    )


class PoliticaTienda:
    """La política de cada tienda para el cliente (``FuentePolitica``); una sentencia."""

    def __init__(self, *, pool: ConnectionPool) -> None:
        self._pool = pool

    def texto_para_cliente(self, contexto: ContextoCliente) -> str:
        """La política de la tienda de ``contexto``; los defectos si no tiene fila."""
        with self._pool.connection() as conexion, conexion.cursor(row_factory=dict_row) as cur:
            fila = cur.execute(
                SELECT_POLITICA_SQL, {**parametros_defecto(), "tienda": contexto.tienda}
            ).fetchone()
        if fila is None:
            return texto_politica(contexto.tienda, DEFECTOS)
        return texto_politica(fila["nombre"], fila)
