"""Las pruebas están ordenadas por tipo y ninguna depende de otra prueba ni del bench.

- Cada ``test_*.py`` vive en la carpeta de su tipo (``tests/unidad``, ``integracion``, ``api``,
  ``navegador``, ``procesos``, ``trampas``), nunca suelto en ``tests/`` ni en ``tests/apoyo``;
  cada carpeta es un paquete y ningún nombre de módulo se repite entre carpetas.
- Ningún fichero de ``tests/`` importa un módulo de prueba (``test_*``), un ``conftest`` ni
  ``bench``: lo compartido está en ``tests/apoyo/`` o en las fixtures de un ``conftest.py``.
  También el código que una prueba lanza en un subproceso (``python -c "..."``): se mira el
  texto entero, no solo las sentencias ``import``.
- ``bench/`` puede importar ``tests/apoyo``; al revés, no (el sentido es uno solo).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.apoyo.rutas import RAIZ

TESTS = RAIZ / "tests"
TIPOS = ("unidad", "integracion", "api", "navegador", "procesos", "trampas")
SUELTOS_PERMITIDOS = {"__init__.py", "conftest.py"}

# Una importación en el texto, también dentro de una cadena con código para un subproceso:
# a principio de línea, tras «;» o tras unas comillas (``python -c "import x; from y import z"``).
IMPORTACION_EN_TEXTO = re.compile(
    r"(?:^|[;\"'])[ \t]*(?:from\s+(?P<desde>[\w.]+)\s+import\s+(?P<nombres>[\w \t,()]+)"
    r"|import\s+(?P<modulo>[\w.]+))",
    re.MULTILINE,
)


def _ficheros() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _modulo_de(ruta: Path) -> str:
    return ".".join(ruta.relative_to(RAIZ).with_suffix("").parts)


def _absoluto(modulo: str | None, nivel: int, paquete: str) -> str:
    if nivel == 0:
        return modulo or ""
    base = paquete.split(".")[: len(paquete.split(".")) - nivel + 1]
    return ".".join([*base, *([modulo] if modulo else [])])


def _prohibido(modulo: str) -> str | None:
    partes = modulo.split(".")
    if partes[0] == "bench":
        return "importa bench/"
    if any(p.startswith("test_") for p in partes):
        return "importa un módulo de prueba"
    if partes[-1] == "conftest":
        return "importa un conftest"
    return None


def importaciones_prohibidas(texto: str, paquete: str, *, en_cadenas: bool = True) -> list[str]:
    """Lo que ``texto`` (un fichero de ``paquete``) importa y no debe: ``['línea: motivo (módulo)']``.

    ``en_cadenas``: mirar también el código escrito en cadenas (el de los subprocesos).
    """
    hallazgos = []
    for nodo in ast.walk(ast.parse(texto)):
        if isinstance(nodo, ast.Import):
            modulos = [a.name for a in nodo.names]
        elif isinstance(nodo, ast.ImportFrom):
            desde = _absoluto(nodo.module, nodo.level, paquete)
            modulos = [desde, *(f"{desde}.{a.name}" for a in nodo.names)]
        else:
            continue
        for modulo in modulos:
            if motivo := _prohibido(modulo):
                hallazgos.append(f"{nodo.lineno}: {motivo} ({modulo})")
                break
    # El código que se pasa a un subproceso va en cadenas: ast no lo ve como importación.
    for m in IMPORTACION_EN_TEXTO.finditer(texto) if en_cadenas else ():
        if m["modulo"]:
            modulos = [m["modulo"]]
        else:
            nombres = [n.strip().split(" as ")[0] for n in m["nombres"].strip("() ").split(",") if n.strip()]
            modulos = [m["desde"], *(f"{m['desde']}.{n}" for n in nombres)]
        for modulo in modulos:
            if not modulo.startswith(".") and (motivo := _prohibido(modulo)):
                linea = texto.count("\n", 0, m.start()) + 1
                hallazgos.append(f"{linea}: {motivo} ({modulo})")
                break
    return sorted(set(hallazgos))


def test_cada_prueba_esta_en_la_carpeta_de_su_tipo():
    sueltos = [p.name for p in TESTS.glob("*.py") if p.name not in SUELTOS_PERMITIDOS]
    assert sueltos == [], f"en tests/ solo van conftest.py y __init__.py; a su carpeta: {sueltos}"
    pruebas = sorted(TESTS.rglob("test_*.py"))
    fuera = [str(p.relative_to(TESTS)) for p in pruebas if p.parent.parent != TESTS or p.parent.name not in TIPOS]
    assert fuera == [], f"cada test_*.py va en tests/<{'|'.join(TIPOS)}>/: {fuera}"
    carpetas = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert carpetas == {*TIPOS, "apoyo"}, "una carpeta nueva en tests/ va en TIPOS y en docs/arquitectura.md"
    assert all((TESTS / c / "__init__.py").exists() for c in carpetas)
    repetidos = [n for n, k in Counter(p.name for p in pruebas).items() if k > 1]
    assert repetidos == [], f"el nombre de un módulo de prueba no se repite entre carpetas: {repetidos}"
    assert len(pruebas) > 50  # la búsqueda encuentra las pruebas


def test_ninguna_prueba_importa_otra_prueba_un_conftest_ni_bench():
    malos = {}
    for ruta in _ficheros():
        paquete = _modulo_de(ruta if ruta.name == "__init__.py" else ruta.parent / "__init__.py")
        paquete = paquete.removesuffix(".__init__")
        # Las cadenas de este fichero son, a propósito, ejemplos de lo prohibido.
        en_cadenas = ruta != Path(__file__).resolve()
        if hallazgos := importaciones_prohibidas(ruta.read_text(encoding="utf-8"), paquete, en_cadenas=en_cadenas):
            malos[str(ruta.relative_to(RAIZ))] = hallazgos
    assert malos == {}, "lo compartido va en tests/apoyo/ o en un conftest.py (fixtures)"


@pytest.mark.parametrize("codigo", [
    "from .test_web_api import http, tok",
    "from ..integracion.test_politicas import ANA",
    "from tests.api.test_firmas import PEDIDO_350",
    "from tests.integracion import test_trazas as tt",
    "from . import test_firmas as firmas",
    "import tests.api.test_web_api",
    "from .conftest import RAIZ",
    "from tests.conftest import url_de",
    "from bench.politica import trazar_pool",
    "import bench",
    "from bench import turnos",
    'CODIGO = """\nimport json\nfrom tests.integracion import test_trazas as tt\n"""',
    'HIJO = "from bench.proveedor_latencia import Latencia"',
    'subprocess.run([sys.executable, "-c", "import os; from tests.api.test_firmas import como"])',
])
def test_la_comprobacion_detecta_cada_forma_de_importar_lo_prohibido(codigo):
    assert importaciones_prohibidas(codigo, "tests.api") != []


@pytest.mark.parametrize("codigo", [
    "from tests.apoyo.web_util import cab",
    "from ..apoyo import fabricas",
    "from agente.servicio.fachada import Servicio",
    'subprocess.run([sys.executable, "-m", "bench.humo", "explain", url])',
    '"""Como en ``tests/api/test_web_api.py``: ``from bench`` no se importa."""',
])
def test_la_comprobacion_deja_pasar_lo_permitido(codigo):
    assert importaciones_prohibidas(codigo, "tests.api") == []


def test_bench_importa_tests_apoyo_y_no_pruebas():
    for ruta in sorted((RAIZ / "bench").glob("*.py")):
        for nodo in ast.walk(ast.parse(ruta.read_text(encoding="utf-8"))):
            if isinstance(nodo, ast.ImportFrom) and (nodo.module or "").startswith("tests"):
                assert nodo.module.startswith("tests.apoyo."), f"{ruta.name}:{nodo.lineno} {nodo.module}"
            if isinstance(nodo, ast.Import):
                for alias in nodo.names:
                    assert not alias.name.startswith("tests") or alias.name.startswith("tests.apoyo."), (
                        f"{ruta.name}:{nodo.lineno} {alias.name}")
