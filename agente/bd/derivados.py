"""Lo que el esquema deriva de las declaraciones de las operaciones, rehecho al migrar.

La vista ``efectos`` (una rama por operación), la CHECK «una operación por unidad» de
``compensaciones_unidad``, la de los conceptos de ``reembolsos``, la lista de herramientas
de la vista ``reservas_pendientes`` y las filas por defecto de la regla de cada operación en
las matrices de autoridad vigentes salen de ``nucleo.operaciones``: ninguna migración las
copia. ``migrar`` llama a ``aplicar_derivados`` al final, bajo su candado; cada objeto se
rehace solo si su texto cambió desde la última vez (su huella en ``esquema_derivados``).

Las filas por defecto son datos, no esquema: una versión nueva de cada matriz vigente (la
por defecto y la de cada tienda con matriz propia) a la que le falte la regla de alguna
operación, con todo lo que tenía más esas filas (las versiones no se modifican, sql/008).
La auditoría de la política reconoce esas filas como alta, no como ampliación. Se escriben
cuando cambian las declaraciones (una operación nueva), no en cada arranque: quien borre
a mano una regla lo encuentra en la comprobación del arranque, no tapado.

Trampa: una base a medio migrar (una prueba que aplica solo parte de ``sql/``) no tiene
todas las tablas y columnas; ``migrar`` solo aplica los derivados con la carpeta completa.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import psycopg

from nucleo.claves_candado import CANDADO_MATRIZ_SQL
from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import (
    OPERACIONES,
    comprobacion_compensaciones_sql,
    vista_efectos_sql,
)

__all__ = ["CONCEPTOS_SQL", "FILAS_POR_DEFECTO", "INSERT_LIMITE_SQL", "INSERT_REGLA_SQL", "RESERVAN_SQL", "aplicar_derivados", "completar_filas_por_defecto",
           "conceptos_reembolso_sql", "derivados", "reservas_pendientes_sql"]

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


# Las versiones vigentes (DISTINCT ON agrupa los NULL: la por defecto es una más).
SELECT_MATRICES_VIGENTES_SQL = """
SELECT DISTINCT ON (tienda) id, tienda, version,
       array(SELECT r.regla FROM reglas_autoridad r WHERE r.matriz_id = m.id) AS reglas
FROM matrices_autoridad m ORDER BY tienda, version DESC
"""
INSERT_VERSION_MATRIZ_SQL = """
INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo)
VALUES (%(tienda)s, %(version)s, 'sistema', %(motivo)s)
RETURNING id
"""
COPIAR_REGLAS_SQL = """
INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
SELECT %(nueva)s, regla, dos_firmas_por_encima FROM reglas_autoridad WHERE matriz_id = %(anterior)s
"""
COPIAR_LIMITES_SQL = """
INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
SELECT %(nueva)s, regla, rol, limite FROM limites_autoridad WHERE matriz_id = %(anterior)s
"""
INSERT_REGLA_SQL = """
INSERT INTO reglas_autoridad (matriz_id, regla, dos_firmas_por_encima)
VALUES (%(matriz_id)s, %(regla)s, %(umbral)s)
"""
INSERT_LIMITE_SQL = """
INSERT INTO limites_autoridad (matriz_id, regla, rol, limite)
VALUES (%(matriz_id)s, %(regla)s, %(rol)s, %(limite)s)
"""
# Nombre del paso de datos en ``esquema_derivados``.
FILAS_POR_DEFECTO = "matrices_filas_por_defecto"


def _huella_filas(operaciones: Iterable[OperacionConEfecto]) -> str:
    filas = sorted((op.regla, [(r, str(v)) for r, v in op.matriz.limites.items()],
                    str(op.matriz.dos_firmas_por_encima)) for op in operaciones)
    return "filas por defecto " + repr(filas)


def completar_filas_por_defecto(conexion: psycopg.Connection,
                                operaciones: Iterable[OperacionConEfecto] = OPERACIONES) -> list[int]:
    """Una versión nueva de cada matriz vigente a la que le falte la regla de alguna
    operación, con sus filas de ``EnMatriz``; devuelve los ids de las versiones nuevas.

    Trampa: toma el candado de la matriz de cada ámbito (el mismo que ``fijar_matriz``) y
    relee la vigente después, para no escribir encima de una versión que alguien guardó
    mientras se esperaba.
    """
    operaciones = tuple(operaciones)
    nuevas = []
    for vigente in conexion.execute(SELECT_MATRICES_VIGENTES_SQL).fetchall():
        with conexion.transaction():
            conexion.execute(CANDADO_MATRIZ_SQL, {"ambito": vigente["tienda"] or "*"})
            actual = next(f for f in conexion.execute(SELECT_MATRICES_VIGENTES_SQL).fetchall()
                          if f["tienda"] == vigente["tienda"])
            faltan = [op for op in operaciones if op.regla not in actual["reglas"]]
            if not faltan:
                continue
            nueva = conexion.execute(INSERT_VERSION_MATRIZ_SQL, {
                "tienda": actual["tienda"], "version": actual["version"] + 1,
                "motivo": "filas por defecto de " + ", ".join(op.nombre for op in faltan)
                          + " (su declaración, agente/bd/derivados.py)",
            }).fetchone()["id"]
            conexion.execute(COPIAR_REGLAS_SQL, {"nueva": nueva, "anterior": actual["id"]})
            conexion.execute(COPIAR_LIMITES_SQL, {"nueva": nueva, "anterior": actual["id"]})
            with conexion.cursor() as cur:
                cur.executemany(INSERT_REGLA_SQL, [
                    {"matriz_id": nueva, "regla": op.regla, "umbral": op.matriz.dos_firmas_por_encima}
                    for op in faltan])
                cur.executemany(INSERT_LIMITE_SQL, [
                    {"matriz_id": nueva, "regla": op.regla, "rol": rol, "limite": limite}
                    for op in faltan for rol, limite in op.matriz.limites.items()])
            nuevas.append(nueva)
    return nuevas


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
    operaciones = tuple(operaciones)
    conexion.execute(CREAR_TABLA_DERIVADOS_SQL)
    huellas = {fila["nombre"]: fila["huella"] for fila in conexion.execute(SELECT_HUELLAS_SQL)}
    rehechos = []
    pasos = {**derivados(operaciones), FILAS_POR_DEFECTO: _huella_filas(operaciones)}
    for nombre, sentencia in pasos.items():
        huella = hashlib.sha256(sentencia.encode("utf-8")).hexdigest()
        if huellas.get(nombre) == huella:
            continue
        with conexion.transaction():
            if nombre == FILAS_POR_DEFECTO:
                completar_filas_por_defecto(conexion, operaciones)
            else:
                conexion.execute(sentencia, prepare=False)
            conexion.execute(GUARDAR_HUELLA_SQL, {"nombre": nombre, "huella": huella})
        rehechos.append(nombre)
    return rehechos
