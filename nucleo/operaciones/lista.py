"""La lista de operaciones con efecto y lo que se deriva de recorrerla."""

from __future__ import annotations

from collections.abc import Iterable

from nucleo.operacion import OperacionConEfecto
from operaciones import carpetas

__all__ = ["COLUMNAS_EFECTOS", "OPERACIONES", "comprobacion_compensaciones_sql", "por_herramienta", "por_regla",
           "vista_efectos_sql"]


# Una por carpeta de ``operaciones/``, en orden alfabético.
OPERACIONES: tuple[OperacionConEfecto, ...] = (
    *(modulo.OPERACION for modulo in carpetas.piezas("declaracion")),
)


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

    La ejecuta ``agente.bd.derivados`` al migrar cuando cambia: ninguna migración la copia.
    Los nombres vienen validados de la declaración (identificadores), nunca de un usuario.
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


QUITAR_CHECK_COMPENSACIONES_SQL = """DO $$
DECLARE
    nombre text;
BEGIN
    FOR nombre IN SELECT conname FROM pg_constraint
                  WHERE conrelid = 'compensaciones_unidad'::regclass AND contype = 'c'
                    AND pg_get_constraintdef(oid) LIKE '%num_nonnulls(%' LOOP
        EXECUTE format('ALTER TABLE compensaciones_unidad DROP CONSTRAINT %I', nombre);
    END LOOP;
END
$$;
"""


def comprobacion_compensaciones_sql(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> str:
    """La CHECK «cada unidad compensada por una sola operación» de ``compensaciones_unidad``.

    Suma la columna ``libro.compensa`` de cada operación que consume unidades. Quita antes
    la CHECK ``num_nonnulls`` que hubiera (la de ``sql/007_libro.sql`` o una generada).
    Trampa: añadirla valida la tabla entera con un candado exclusivo; por eso
    ``agente.bd.derivados`` solo la rehace cuando cambia su texto.
    """
    columnas = [op.libro.compensa for op in operaciones if op.libro.compensa]
    if not columnas:
        raise ValueError("compensaciones_unidad necesita al menos una operación que compense unidades")
    # Los nombres de columna son identificadores validados en ``EnLibro``, nunca de un usuario.
    return QUITAR_CHECK_COMPENSACIONES_SQL + (
        "ALTER TABLE compensaciones_unidad ADD CONSTRAINT compensaciones_unidad_una_operacion\n"
        f"    CHECK (num_nonnulls({', '.join(columnas)}) = 1);\n"  # noqa: S608
    )
