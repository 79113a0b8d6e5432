"""Al arrancar: cada operación con efecto declarada tiene en la base lo que necesita.

Sin sus filas en la matriz de autoridad, ``autoridad_necesaria`` cierra hacia el lado
seguro y exige el rol más alto para cualquier importe: una operación nueva pediría en
silencio un regional para todo. Por eso el servicio no arranca (``ErrorConfiguracion``,
en español) si a alguna operación de ``nucleo.operaciones`` le faltan:

- sus filas en la matriz por defecto vigente o en la vigente de alguna tienda con matriz
  propia (las versiones antiguas no se tocan: las relee solo quien decidió con ellas);
- su rama en la vista ``efectos`` (la auditoría no la vería).

``faltas_en_base`` da la lista (vacía = todo en orden); ``completar_matrices`` escribe,
para quien lo necesite (una prueba, una operación nueva), una versión nueva de cada
matriz vigente con las filas por defecto que declaran las operaciones que falten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import psycopg

from agente.servicio.politica.gestion_autoridad import fijar_matriz
from nucleo.errores import ErrorConfiguracion
from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import OPERACIONES
from politicas.lectura_matriz import MATRIZ_COMO_JSON, matriz_de_json
from politicas.matriz_autoridad import Matriz

__all__ = ["comprobar_operaciones", "completar_matrices", "faltas_en_base", "matrices_vigentes"]

# La versión vigente de la matriz por defecto y la de cada tienda con matriz propia.
SELECT_MATRICES_VIGENTES_SQL = f"""
SELECT {MATRIZ_COMO_JSON} AS datos
FROM matrices_autoridad m
WHERE m.version = (SELECT max(x.version) FROM matrices_autoridad x
                   WHERE x.tienda IS NOT DISTINCT FROM m.tienda)
ORDER BY m.tienda NULLS FIRST
"""  # noqa: S608 - una constante de politicas.matriz_autoridad
SELECT_VISTA_EFECTOS_SQL = "SELECT pg_get_viewdef(to_regclass('efectos')) AS definicion"


def matrices_vigentes(conexion: psycopg.Connection) -> list[Matriz]:
    """La matriz por defecto vigente y la vigente de cada tienda con matriz propia."""
    return [matriz_de_json(f["datos"]) for f in conexion.execute(SELECT_MATRICES_VIGENTES_SQL)]


def _ambito(matriz: Matriz) -> str:
    return f"la matriz de autoridad de la tienda {matriz.tienda}" if matriz.tienda else (
        "la matriz de autoridad por defecto")


def faltas_en_base(
    conexion: psycopg.Connection, operaciones: Sequence[OperacionConEfecto] = OPERACIONES
) -> list[str]:
    """Lo que le falta en la base a cada operación, en español (vacía = nada)."""
    faltas = []
    for matriz in matrices_vigentes(conexion):
        for op in operaciones:
            if op.regla not in matriz.limites:
                faltas.append(
                    f"{_ambito(matriz)} (versión {matriz.version}) no tiene filas para la regla "
                    f"«{op.regla}» de la operación {op.nombre}: sin ellas pediría un "
                    f"{matriz.roles[-1]} para cualquier importe"
                )
    definicion = conexion.execute(SELECT_VISTA_EFECTOS_SQL).fetchone()["definicion"] or ""
    ramas = definicion.split("UNION ALL")
    for op in operaciones:
        if not any(re.search(rf"'{op.nombre}'::text\b", r) and re.search(rf"\bFROM\s+(?:public\.)?{op.libro.tabla}\b", r)
                   for r in ramas):
            faltas.append(f"la vista efectos no incluye la operación {op.nombre} (tabla {op.libro.tabla}): "
                          "la auditoría no la vería")
    return faltas


def comprobar_operaciones(
    conexion: psycopg.Connection, operaciones: Sequence[OperacionConEfecto] = OPERACIONES
) -> None:
    """``ErrorConfiguracion`` con todo lo que falte; nada si está en orden."""
    faltas = faltas_en_base(conexion, operaciones)
    if faltas:
        raise ErrorConfiguracion(
            "operaciones con efecto sin lo que necesitan en la base de datos: " + "; ".join(faltas)
            + ". Si la operación es nueva, migra (agente db migrate): escribe sus filas por defecto "
            "y la vista efectos desde su declaración (agente/bd/derivados.py)."
        )


def completar_matrices(
    conexion: psycopg.Connection,
    operaciones: Sequence[OperacionConEfecto] = OPERACIONES,
    *,
    autor: str = "sistema",
) -> list[Matriz]:
    """Una versión nueva de cada matriz vigente a la que le falte alguna regla, con las
    filas por defecto declaradas; devuelve las versiones nuevas."""
    nuevas = []
    for matriz in matrices_vigentes(conexion):
        faltan = [op for op in operaciones if op.regla not in matriz.limites]
        if not faltan:
            continue
        limites = {r: dict(v) for r, v in matriz.limites.items()}
        dos_firmas = dict(matriz.dos_firmas_por_encima)
        for op in faltan:
            limites[op.regla] = dict(op.matriz.limites)
            dos_firmas[op.regla] = op.matriz.dos_firmas_por_encima
        nuevas.append(fijar_matriz(
            conexion, tienda=matriz.tienda, limites=limites, dos_firmas_por_encima=dos_firmas,
            autor=autor, motivo="filas por defecto de " + ", ".join(op.nombre for op in faltan),
        ))
    return nuevas
