"""La vista ``efectos``, la CHECK de ``compensaciones_unidad`` y las filas por defecto de la
matriz de autoridad salen de las declaraciones.

Ninguna migración las copia: ``agente.bd.derivados`` las rehace al migrar cuando cambian.
"""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

import psycopg
import pytest

from agente.bd.derivados import FILAS_POR_DEFECTO, aplicar_derivados, derivados
from agente.bd.migraciones import migraciones_disponibles, migrar
from agente.bd.pool import KWARGS_CONEXION
from nucleo.operaciones import CAMBIO, OPERACIONES
from operaciones.reembolso.declaracion import REEMBOLSO

DEFINICION_CHECK_SQL = """
SELECT pg_get_constraintdef(oid) AS definicion FROM pg_constraint
WHERE conrelid = 'compensaciones_unidad'::regclass AND contype = 'c'
  AND pg_get_constraintdef(oid) LIKE '%%num_nonnulls(%%'
"""
RAMAS_VISTA_SQL = "SELECT DISTINCT tipo FROM efectos"


@pytest.fixture
def conexion_vacia(bd_vacia_url):
    with psycopg.connect(bd_vacia_url, **KWARGS_CONEXION) as conexion:
        yield conexion


def test_ninguna_migracion_copia_la_vista_efectos_ni_la_check_de_compensaciones():
    rutas = [m.ruta for m in migraciones_disponibles()]  # también las de operaciones/*/sql/
    copias = [ruta.name for ruta in rutas
              if re.search(r"VIEW\s+efectos\b", ruta.read_text(encoding="utf-8"))]
    assert copias == []
    # La de la tabla original (007) es la única que escribe la CHECK a mano.
    con_check = [ruta.name for ruta in rutas
                 if "num_nonnulls(" in ruta.read_text(encoding="utf-8")]
    assert con_check == ["007_libro.sql"]


def test_ninguna_migracion_nueva_escribe_a_mano_las_filas_por_defecto_de_una_regla():
    # 008 siembra la matriz; 017-019 son de antes de que las escribiera migrar y ya están
    # aplicadas en bases de tiendas (no se reescribe la historia).
    rutas = [m.ruta for m in migraciones_disponibles()]
    a_mano = [ruta.name for ruta in rutas
              if re.search(r"INSERT\s+INTO\s+matrices_autoridad", ruta.read_text(encoding="utf-8"))]
    assert a_mano == ["008_autoridad.sql", "017_reenvio.sql", "018_vale.sql", "019_direccion.sql"]


def test_la_base_migrada_tiene_la_vista_y_la_check_de_todas_las_operaciones(conexion_vacia):
    (fila,) = conexion_vacia.execute(DEFINICION_CHECK_SQL).fetchall()
    for op in OPERACIONES:
        if op.libro.compensa:
            assert op.libro.compensa in fila["definicion"]
    # Cada rama de la vista lee su tabla: un efecto de cada operación aparece con su tipo.
    vista = conexion_vacia.execute("SELECT pg_get_viewdef('efectos'::regclass) AS d").fetchone()["d"]
    for op in OPERACIONES:
        assert f"'{op.nombre}'::text" in vista and op.libro.tabla in vista


def test_migrar_otra_vez_no_rehace_nada_y_un_cambio_de_declaracion_si(conexion_vacia, bd_vacia_url):
    assert aplicar_derivados(conexion_vacia) == []
    migrar(bd_vacia_url)
    assert aplicar_derivados(conexion_vacia) == []
    # Una operación nueva que compensa unidades con su columna: la CHECK la suma.
    conexion_vacia.execute("ALTER TABLE compensaciones_unidad ADD COLUMN arreglo_id bigint")
    nueva = dataclasses.replace(
        REEMBOLSO, nombre="arreglo", regla="arreglo", herramientas=("arreglar",),
        libro=dataclasses.replace(REEMBOLSO.libro, compensa="arreglo_id"))
    assert aplicar_derivados(conexion_vacia, (*OPERACIONES, nueva)) == [
        "vista_efectos", "compensaciones_una_operacion", FILAS_POR_DEFECTO]
    (fila,) = conexion_vacia.execute(DEFINICION_CHECK_SQL).fetchall()
    assert "arreglo_id" in fila["definicion"]
    tipos = conexion_vacia.execute(
        "SELECT count(*) AS n FROM efectos WHERE tipo = 'arreglo'").fetchone()["n"]
    assert tipos == conexion_vacia.execute("SELECT count(*) AS n FROM reembolsos").fetchone()["n"]


def test_una_vista_tocada_a_mano_vuelve_al_migrar_si_se_olvida_su_huella(conexion_vacia, bd_vacia_url):
    # Alguien deja la vista sin la rama de los cambios: la auditoría dejaría de verlos.
    sin_cambio = [op for op in OPERACIONES if op is not CAMBIO]
    conexion_vacia.execute("DROP VIEW efectos")
    conexion_vacia.execute(derivados(sin_cambio)["vista_efectos"])
    assert "'sustitucion'::text" not in conexion_vacia.execute(
        "SELECT pg_get_viewdef('efectos'::regclass) AS d").fetchone()["d"]
    conexion_vacia.execute("DELETE FROM esquema_derivados WHERE nombre = 'vista_efectos'")
    migrar(bd_vacia_url)
    assert "'sustitucion'::text" in conexion_vacia.execute(
        "SELECT pg_get_viewdef('efectos'::regclass) AS d").fetchone()["d"]


MATRICES_SQL = """
SELECT m.tienda, m.version, m.creada_por, m.motivo,
       (SELECT jsonb_object_agg(l.rol, l.limite) FROM limites_autoridad l
        WHERE l.matriz_id = m.id AND l.regla = %(regla)s) AS limites,
       (SELECT count(*) FROM reglas_autoridad r WHERE r.matriz_id = m.id) AS reglas
FROM matrices_autoridad m
WHERE m.version = (SELECT max(x.version) FROM matrices_autoridad x WHERE x.tienda IS NOT DISTINCT FROM m.tienda)
ORDER BY m.tienda NULLS FIRST
"""


def test_una_operacion_nueva_recibe_sus_filas_en_cada_matriz_vigente_una_sola_vez(bd_url):
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as conexion:
        antes = conexion.execute(MATRICES_SQL, {"regla": "arreglo"}).fetchall()
        assert antes and all(f["limites"] is None for f in antes)
        nueva = dataclasses.replace(REEMBOLSO, nombre="arreglo", regla="arreglo", herramientas=("arreglar",))
        assert FILAS_POR_DEFECTO in aplicar_derivados(conexion, (*OPERACIONES, nueva))
        despues = conexion.execute(MATRICES_SQL, {"regla": "arreglo"}).fetchall()
        # Una versión nueva por ámbito (la por defecto y cada tienda con la suya), con todo lo de
        # antes más las filas declaradas.
        assert [(f["tienda"], f["version"]) for f in despues] == [(f["tienda"], f["version"] + 1) for f in antes]
        for f, a in zip(despues, antes, strict=True):
            assert f["creada_por"] == "sistema" and "arreglo" in f["motivo"]
            assert f["reglas"] == a["reglas"] + 1
            assert {r: (None if v is None else Decimal(str(v))) for r, v in f["limites"].items()} == dict(
                REEMBOLSO.matriz.limites)
        # Otra vez, nada: ni versión nueva ni huella.
        assert aplicar_derivados(conexion, (*OPERACIONES, nueva)) == []
        assert conexion.execute(MATRICES_SQL, {"regla": "arreglo"}).fetchall() == despues
