"""Las carpetas de ``operaciones/``: se descubren solas y una pieza que falta se nombra."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

from operaciones import carpetas
from tests.apoyo.rutas import RAIZ


def test_las_carpetas_son_los_paquetes_de_operaciones(tmp_path):
    for nombre in ("zeta", "alfa"):
        (tmp_path / nombre).mkdir()
        (tmp_path / nombre / "__init__.py").write_text('"""Doc."""\n', encoding="utf-8")
    (tmp_path / "suelta").mkdir()  # sin __init__.py: no es una operación
    (tmp_path / "carpetas.py").write_text("", encoding="utf-8")
    assert carpetas.nombres(tmp_path) == ("alfa", "zeta")


def test_una_pieza_que_falta_se_nombra_al_importarla():
    (nombre, *_) = carpetas.nombres()
    with pytest.raises(ModuleNotFoundError, match=f"le falta la pieza operaciones/{nombre}/inexistente.py"):
        carpetas.pieza(nombre, "inexistente")


def test_cada_pieza_de_python_de_cada_carpeta_se_importa_y_define_lo_suyo():
    for nombre in carpetas.nombres():
        assert carpetas.faltan(carpetas.CARPETA / nombre) == [], nombre
        for archivo, definidos in carpetas.PIEZAS.items():
            if archivo.endswith(".py"):
                modulo = carpetas.pieza(nombre, archivo.removesuffix(".py"))
                assert all(hasattr(modulo, d) for d in definidos or ()), (nombre, archivo)


# Un solo intérprete: antes de cada pieza olvida todos los módulos del producto (las
# bibliotecas siguen cargadas, que no cambian el orden de los nuestros), así cada pieza se
# importa la primera. Un proceso por pieza daba lo mismo en 30 s.
IMPORTAR_CADA_UNA_LA_PRIMERA = """
import importlib, json, sys
PROPIOS = ("agente", "politicas", "herramientas", "operaciones", "caja", "nucleo")
fallos = {}
for modulo in json.loads(sys.argv[1]):
    for nombre in [n for n in sys.modules if n.split(".")[0] in PROPIOS]:
        del sys.modules[nombre]
    try:
        importlib.import_module(modulo)
    except Exception as exc:
        fallos[modulo] = f"{type(exc).__name__}: {exc}"
print(json.dumps(fallos))
"""


def test_cada_pieza_se_puede_importar_la_primera():
    """Importar una pieza antes que nada carga su capa, que junta las de todas las carpetas:
    nada de lo que se junta al importar puede leer la pieza que está a medias."""
    modulos = [f"operaciones.{nombre}.{archivo.removesuffix('.py')}" for nombre in carpetas.nombres()
               for archivo in carpetas.PIEZAS if archivo.endswith(".py")]
    resultado = subprocess.run([sys.executable, "-c", IMPORTAR_CADA_UNA_LA_PRIMERA, json.dumps(modulos)],
                               capture_output=True, text=True, timeout=300, cwd=RAIZ,
                               env={**os.environ, "PYTHONPATH": str(RAIZ)})
    assert resultado.returncode == 0, resultado.stderr[-2000:]
    assert json.loads(resultado.stdout.strip().splitlines()[-1]) == {}


def test_una_herramienta_solo_usa_ayudantes_publicos():
    """Una sola manera de escribir una herramienta: con lo público de ``herramientas/``
    (``Dependencias``, ``datos_de_ejecucion``, ``sin_sangria``, ``json_resultado``...)."""
    privados = []
    for ruta in sorted([*(RAIZ / "herramientas").glob("*.py"), *(RAIZ / "operaciones").rglob("*.py")]):
        for nodo in ast.walk(ast.parse(ruta.read_text(encoding="utf-8"))):
            if isinstance(nodo, ast.ImportFrom) and (nodo.module or "").split(".")[0] in {
                    "agente", "herramientas", "politicas", "operaciones", "caja", "nucleo"}:
                privados += [f"{ruta.relative_to(RAIZ)}: {a.name}" for a in nodo.names if a.name.startswith("_")]
    assert privados == []


def test_las_migraciones_de_una_carpeta_van_en_el_orden_global_y_un_numero_repetido_falla(tmp_path):
    from agente.bd.migraciones import migraciones_disponibles
    from nucleo.errores import ErrorConfiguracion

    sql = tmp_path / "sql"
    sql.mkdir()
    for nombre in ("001_base.sql", "003_mas.sql"):
        (sql / nombre).write_text("SELECT 1;", encoding="utf-8")
    propia = tmp_path / "operaciones" / "nueva" / "sql"
    propia.mkdir(parents=True)
    (propia / "002_nueva.sql").write_text("SELECT 2;", encoding="utf-8")
    orden = migraciones_disponibles(sql, operaciones=tmp_path / "operaciones")
    assert [m.version for m in orden] == ["001_base", "002_nueva", "003_mas"]
    assert orden[1].ruta == propia / "002_nueva.sql"
    (propia / "003_choca.sql").write_text("SELECT 3;", encoding="utf-8")
    with pytest.raises(ErrorConfiguracion, match=r"mismo número: \['003'\]"):
        migraciones_disponibles(sql, operaciones=tmp_path / "operaciones")


def test_los_hechos_de_una_carpeta_entran_en_el_catalogo():
    from politicas.hechos import CATALOGO

    propios = {h["nombre"] for modulo in carpetas.piezas("politica") for h in getattr(modulo, "HECHOS", ())}
    assert propios <= set(CATALOGO)
