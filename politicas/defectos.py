"""Los valores por defecto de la política de una tienda: una sola fuente en Python.

Cada valor (con su dominio) se declara en ``politicas.valores``; aquí, sus defectos y las
columnas con ``coalesce`` para leerlos.

``DEFECTOS`` tiene una entrada por cada columna de ``politicas_tienda`` (salvo la clave
``tienda``) con el mismo valor que su ``DEFAULT`` en SQL (lo comprueba
tests/integracion/test_politicas.py). Una tienda sin fila usa estos valores; quien lea esa tabla con
``coalesce`` toma de aquí el segundo argumento, nunca un número escrito a mano:

- ``limite_reembolso``: un reembolso mayor pide firma.
- ``devoluciones_max_30d`` / ``ventana_devoluciones_dias``: con tantas devoluciones o más
  en la ventana, una nueva pide firma.
- ``dias_desde_entrega``: más días desde la entrega pide firma.
- ``diferencia_max_sustitucion``: un cambio que cuesta más que esto por encima del
  original pide firma.
- ``diferencia_minima_liquidable``: una diferencia de precio de un cambio menor que esto
  (en valor absoluto) no se cobra ni se devuelve (sql/007); 0 = siempre se liquida.
- ``limite_cambio_direccion``: cambiar la dirección de envío de un pedido de más importe
  pide firma (sql/019); a otra provincia la pide siempre.
- ``horas_caducidad``: **el plazo de caducidad** de una operación que espera a un
  encargado (la tarea periódica del servicio la caduca pasado este plazo).
- ``version``: versión de la política de la tienda; sube sola al cambiar un umbral
  (sql/006) y cada veredicto guarda la que lo decidió.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from psycopg import sql

from politicas.valores import VALORES

__all__ = ["DEFECTOS", "columnas_con_defecto", "instantanea", "parametros_defecto"]

# Sale de la declaración de cada valor (``politicas.valores``), más la versión.
DEFECTOS: Mapping[str, Any] = MappingProxyType(
    {**{nombre: valor.defecto for nombre, valor in VALORES.items()}, "version": 1}
)


def _tipo_sql(valor: Any) -> sql.SQL:
    if isinstance(valor, Decimal):
        return sql.SQL("numeric(12,2)")
    if isinstance(valor, int) and not isinstance(valor, bool):
        return sql.SQL("integer")
    raise TypeError(f"valor por defecto sin tipo SQL conocido: {valor!r}")


def columnas_con_defecto(alias: str) -> sql.Composable:
    """``coalesce(<alias>.col, %(defecto_col)s::tipo) AS col, ...`` para cada columna.

    Para un ``LEFT JOIN politicas_tienda <alias>``: sin fila, cada columna vale su
    defecto. Los parámetros salen de ``parametros_defecto()``.
    """
    if not alias.isidentifier():
        raise ValueError(f"alias no válido: {alias!r}")
    # Nombres sin comillas: son constantes de este módulo y se leen mejor en un EXPLAIN.
    return sql.SQL(",\n       ").join(
        sql.SQL("coalesce({alias}.{nombre}, {defecto}::{tipo}) AS {nombre}").format(
            alias=sql.SQL(alias),
            nombre=sql.SQL(nombre),
            defecto=sql.Placeholder(f"defecto_{nombre}"),
            tipo=_tipo_sql(valor),
        )
        for nombre, valor in DEFECTOS.items()
    )


def parametros_defecto() -> dict[str, Any]:
    """Los parámetros ``defecto_<columna>`` que usa ``columnas_con_defecto``."""
    return {f"defecto_{nombre}": valor for nombre, valor in DEFECTOS.items()}


def instantanea(fila: Mapping[str, Any]) -> dict[str, Any]:
    """Los valores de la política (y ``version``) de una fila leída con
    ``columnas_con_defecto``, como JSON: el dinero como texto ("60.00")."""
    return {n: (str(fila[n]) if isinstance(fila[n], Decimal) else fila[n]) for n in DEFECTOS}
