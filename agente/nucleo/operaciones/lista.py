"""La lista de operaciones con efecto y lo que se deriva de recorrerla."""

from __future__ import annotations

from collections.abc import Iterable

from agente.nucleo.operacion import OperacionConEfecto
from agente.nucleo.operaciones.cambio import CAMBIO
from agente.nucleo.operaciones.cancelacion import CANCELACION
from agente.nucleo.operaciones.direccion import DIRECCION
from agente.nucleo.operaciones.reembolso import REEMBOLSO
from agente.nucleo.operaciones.reenvio import REENVIO
from agente.nucleo.operaciones.vale import VALE

__all__ = ["COLUMNAS_EFECTOS", "OPERACIONES", "por_herramienta", "por_regla", "vista_efectos_sql"]


OPERACIONES: tuple[OperacionConEfecto, ...] = (REEMBOLSO, CAMBIO, CANCELACION, REENVIO, VALE, DIRECCION)


def por_regla(regla: str | None, operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> OperacionConEfecto | None:
    return next((op for op in operaciones if op.regla == regla), None)


def por_herramienta(
    herramienta: str | None, operaciones: Iterable[OperacionConEfecto] = OPERACIONES
) -> OperacionConEfecto | None:
    return next((op for op in operaciones if herramienta in op.herramientas), None)


# La forma de la vista ``efectos``: una fila por efecto, venga de la tabla que venga.
COLUMNAS_EFECTOS = ("tipo", "id", "numero", "thread_id", "tool_call_id", "pedido_id", "cliente_id",
                    "tienda", "importe", "aprobado_por", "creado")


def vista_efectos_sql(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> str:
    """La sentencia que (re)crea la vista ``efectos`` con todas las ``operaciones``.

    Su salida para ``OPERACIONES`` es ``sql/015_efectos.sql`` (lo comprueba una prueba):
    una operación nueva la copia en su migración. Los nombres vienen validados de la
    declaración (identificadores), nunca de un usuario.
    """
    ramas = [
        f"SELECT '{op.nombre}'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,\n"
        f"       pedido_id::text, cliente_id::text, tienda::text, {op.libro.importe}::numeric(12,2) AS importe,\n"
        f"       aprobado_por::text, {op.libro.creado}::timestamptz AS creado\nFROM {op.libro.tabla}"
        for op in operaciones
    ]
    if not ramas:
        raise ValueError("la vista efectos necesita al menos una operación")
    # Cada columna con su tipo: CREATE OR REPLACE la amplía con una tabla nueva sin borrarla.
    return "CREATE OR REPLACE VIEW efectos AS\n" + "\nUNION ALL\n".join(ramas) + ";\n"
