"""Lo que el esquema deriva de las declaraciones de las operaciones, rehecho al migrar.

La vista ``efectos`` (una rama por operación), la CHECK «una operación por unidad» de
``compensaciones_unidad``, la de los conceptos de ``reembolsos`` y la lista de herramientas
de la vista ``reservas_pendientes`` salen de ``nucleo.operaciones``: ninguna
migración las copia. ``migrar`` llama a ``aplicar_derivados`` al final, bajo su candado; cada objeto se
rehace solo si su texto cambió desde la última vez (su huella en ``esquema_derivados``).

Trampa: una base a medio migrar (una prueba que aplica solo parte de ``sql/``) no tiene
todas las tablas y columnas; ``migrar`` solo aplica los derivados con la carpeta completa.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import psycopg

from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import (
    OPERACIONES,
    comprobacion_compensaciones_sql,
    vista_efectos_sql,
)

__all__ = ["CONCEPTOS_SQL", "RESERVAN_SQL", "aplicar_derivados", "conceptos_reembolso_sql", "derivados",
           "reservas_pendientes_sql"]

# Los conceptos de reembolso que escribieron las migraciones de ``sql/`` (007 y 016); los de
# una operación con carpeta los declara ella (``EnLibro.conceptos``).
CONCEPTOS_SQL = ("devolucion", "diferencia", "anulacion", "cancelacion")

CREAR_TABLA_DERIVADOS_SQL = """
CREATE TABLE IF NOT EXISTS esquema_derivados (
    nombre     text PRIMARY KEY,
    huella     text NOT NULL,
    aplicado   timestamptz NOT NULL DEFAULT now()
)
"""
SELECT_HUELLAS_SQL = "SELECT nombre, huella FROM esquema_derivados"
GUARDAR_HUELLA_SQL = """
INSERT INTO esquema_derivados (nombre, huella) VALUES (%(nombre)s, %(huella)s)
ON CONFLICT (nombre) DO UPDATE SET huella = EXCLUDED.huella, aplicado = now()
"""


def conceptos_reembolso_sql(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> str:
    """La CHECK de ``reembolsos.concepto``: los de ``sql/`` y los que declara cada operación.

    Los conceptos son identificadores validados en ``EnLibro``, nunca de un usuario.
    """
    conceptos = list(dict.fromkeys([*CONCEPTOS_SQL, *(c for op in operaciones for c in op.libro.conceptos)]))
    lista = ", ".join(f"'{c}'" for c in conceptos)
    return ("ALTER TABLE reembolsos DROP CONSTRAINT IF EXISTS reembolsos_concepto_check,\n"
            f"    ADD CONSTRAINT reembolsos_concepto_check CHECK (concepto IN ({lista}));\n")


# Las herramientas cuyas pausas reservan unidades que nombraba sql/029; las de una operación
# con carpeta lo declaran (``EnLibro.reserva``).
RESERVAN_SQL = ("reembolsar", "sustituir", "compensar_con_vale", "reenviar", "cancelar_pedido")

# La vista de sql/029 (lo que reserva cada pausa: las aprobaciones en la cola y los veredictos
# que piden firma y aún no llegaron a ella), con la lista de herramientas de las declaraciones.
RESERVAS_PENDIENTES_SQL = """CREATE OR REPLACE VIEW reservas_pendientes AS
SELECT a.thread_id, a.cliente_id, a.tienda, a.creada,
       upper(trim(ar.accion -> 'args' ->> 'pedido')) AS pedido_id,
       ar.accion ->> 'name' AS herramienta,
       lineas_de_accion(upper(trim(ar.accion -> 'args' ->> 'pedido')), ar.accion ->> 'name',
                        ar.accion -> 'args') AS lineas
FROM aprobaciones_pendientes a
CROSS JOIN LATERAL jsonb_array_elements(coalesce(a.peticion -> 'action_requests', '[]'::jsonb))
     AS ar(accion)
WHERE ar.accion ->> 'name' IN ({lista})
UNION ALL
SELECT e.thread_id, e.cliente_id, e.tienda, e.evaluada,
       upper(trim(e.args ->> 'pedido')), e.herramienta,
       lineas_de_accion(upper(trim(e.args ->> 'pedido')), e.herramienta, e.args)
FROM evaluaciones_politica e
WHERE e.requiere_encargado
  AND e.herramienta IN ({lista})
  AND e.evaluada > now() - interval '10 minutes'
  AND NOT EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = e.thread_id)
  AND NOT EXISTS (SELECT 1 FROM decisiones_encargado d
                  WHERE d.thread_id = e.thread_id AND d.decidida >= e.evaluada);
"""


def reservas_pendientes_sql(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> str:
    """La vista ``reservas_pendientes`` con las herramientas que reservan (las de sql/029 y las
    de cada operación con ``EnLibro.reserva``). Los nombres de herramienta vienen validados de
    la declaración, nunca de un usuario. Lo que no nombra ``lineas_de_accion`` reserva el
    pedido entero."""
    herramientas = [*RESERVAN_SQL, *(h for op in operaciones if op.libro.reserva for h in op.herramientas)]
    return RESERVAS_PENDIENTES_SQL.format(lista=", ".join(f"'{h}'" for h in dict.fromkeys(herramientas)))


def derivados(operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> dict[str, str]:
    """Cada objeto derivado con la sentencia que lo (re)crea, en el orden de aplicarlos."""
    operaciones = tuple(operaciones)
    return {
        "vista_efectos": vista_efectos_sql(operaciones),
        "compensaciones_una_operacion": comprobacion_compensaciones_sql(operaciones),
        "reembolsos_conceptos": conceptos_reembolso_sql(operaciones),
        "reservas_pendientes": reservas_pendientes_sql(operaciones),
    }


def aplicar_derivados(conexion: psycopg.Connection,
                      operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> list[str]:
    """Rehace los objetos cuyo texto cambió; devuelve sus nombres. Cada uno en su transacción."""
    conexion.execute(CREAR_TABLA_DERIVADOS_SQL)
    huellas = {fila["nombre"]: fila["huella"] for fila in conexion.execute(SELECT_HUELLAS_SQL)}
    rehechos = []
    for nombre, sentencia in derivados(operaciones).items():
        huella = hashlib.sha256(sentencia.encode("utf-8")).hexdigest()
        if huellas.get(nombre) == huella:
            continue
        with conexion.transaction():
            conexion.execute(sentencia, prepare=False)
            conexion.execute(GUARDAR_HUELLA_SQL, {"nombre": nombre, "huella": huella})
        rehechos.append(nombre)
    return rehechos
