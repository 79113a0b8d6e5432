"""Las rutas que nombran los documentos existen: un mapa que apunta a un fichero borrado miente.

Se leen el README, ``docs/arquitectura.md`` y el resto de ``docs/`` (también
``docs/operaciones/``). Cuenta como ruta del repositorio lo que va entre comillas
invertidas y empieza por una de sus carpetas (``agente/``, ``politicas/``, ``sql/``,
``tests/``...) o es uno de sus ficheros de la raíz (``Makefile``, ``pyproject.toml``...):

- una ruta con comodines o marcadores (``sql/NNN_*.sql``, ``docs/operaciones/<operacion>.md``)
  tiene que casar con algún fichero;
- ``sql/029`` es la migración que empieza por ese número;
- ``fichero.py::test_algo`` (también ``::Clase::test_algo`` o con ``[parametros]``) exige
  además esa prueba en el fichero, y ``fichero.py:nombre``, ese nombre definido en él;
- los enlaces de Markdown relativos (``[texto](libro.md)``) apuntan a un fichero que existe.

Y en el código (docstrings y comentarios de ``agente/``, ``politicas/``, ``herramientas/``,
``tests/`` y ``bench/``), cada ``tests/...py`` que se nombra existe.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.apoyo.rutas import RAIZ

CARPETAS = ("agente/", "politicas/", "herramientas/", "operaciones/", "caja/", "nucleo/", "sql/", "tests/", "docs/", "bench/", ".ci/")
FICHEROS_RAIZ = frozenset({"Makefile", "pyproject.toml", "requirements.lock", "schemathesis.toml", "README.md"})
CODIGO = ("agente", "politicas", "herramientas", "operaciones", "caja", "nucleo", "tests", "bench")

_ENTRE_COMILLAS = re.compile(r"`([^`\n]+)`")
_ENLACE = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
_RUTA_DE_PRUEBA = re.compile(r"tests/[\w/]+\.py(?:::[\w:\[\]-]+)?")


def _documentos(raiz: Path = RAIZ) -> list[Path]:
    return [raiz / "README.md", *sorted((raiz / "docs").rglob("*.md")), *sorted((raiz / "operaciones").glob("*/README.md"))]


def _define(fichero: Path, nombre: str) -> bool:
    texto = fichero.read_text(encoding="utf-8")
    return re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(nombre)}\b|^{re.escape(nombre)}\s*[:=]",
                     texto, re.M) is not None


def falta(ref: str, raiz: Path = RAIZ) -> str | None:
    """Por qué ``ref`` no existe en ``raiz`` (None si existe o si no es una ruta del repositorio)."""
    ref = ref.strip()
    if any(c.isspace() for c in ref):
        return None
    ruta, _, prueba = ref.partition("::")
    ruta, _, nombre = ruta.partition(":")
    if not (ruta.startswith(CARPETAS) or ruta in FICHEROS_RAIZ):
        return None
    patron = re.sub(r"<[^>]+>", "*", ruta)
    patron = re.sub(r"\bN{2,}(?=[_.])", "*", patron)
    if re.fullmatch(r"sql/\d{3}", patron):
        patron += "_*.sql"
    if any(c in patron for c in "*?["):
        return None if any(raiz.glob(patron)) else f"{ref}: ningún fichero casa"
    fichero = raiz / ruta.rstrip("/")
    if not fichero.exists():
        return f"{ref}: no existe"
    if prueba:
        funcion = prueba.split("[", 1)[0].split("::")[-1]
        if not fichero.is_file() or not _define(fichero, funcion):
            return f"{ref}: {ruta} no tiene la prueba {funcion}"
    elif nombre and re.fullmatch(r"\w+", nombre) and fichero.is_file() and not _define(fichero, nombre):
        return f"{ref}: {ruta} no define {nombre}"
    return None


def faltas_en_documento(documento: Path, raiz: Path = RAIZ) -> Iterator[str]:
    texto = documento.read_text(encoding="utf-8")
    nombre = documento.relative_to(raiz)
    for m in _ENTRE_COMILLAS.finditer(texto):
        if (motivo := falta(m.group(1), raiz)) is not None:
            yield f"{nombre}: {motivo}"
    for m in _ENLACE.finditer(texto):
        destino = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", destino):  # http:, mailto:...
            continue
        if not (documento.parent / destino).exists():
            yield f"{nombre}: el enlace {destino} no lleva a ningún fichero"


def faltas_en_codigo(raiz: Path = RAIZ) -> Iterator[str]:
    for carpeta in CODIGO:
        for fichero in sorted((raiz / carpeta).rglob("*.py")):
            texto = fichero.read_text(encoding="utf-8")
            for m in _RUTA_DE_PRUEBA.finditer(texto):
                if (motivo := falta(m.group(0), raiz)) is not None:
                    yield f"{fichero.relative_to(raiz)}: {motivo}"


@pytest.mark.parametrize("documento", _documentos(), ids=lambda d: str(d.relative_to(RAIZ)))
def test_cada_ruta_que_nombra_un_documento_existe(documento):
    assert list(faltas_en_documento(documento)) == []


def test_cada_prueba_que_nombra_el_codigo_existe():
    assert list(faltas_en_codigo()) == []


def test_el_mapa_de_la_arquitectura_nombra_rutas():
    """La prueba de arriba no pasa por no encontrar nada que comprobar."""
    texto = (RAIZ / "docs" / "arquitectura.md").read_text(encoding="utf-8")
    rutas = {m.group(1) for m in _ENTRE_COMILLAS.finditer(texto) if m.group(1).startswith(CARPETAS)}
    assert {"agente/servicio/", "operaciones/carpetas.py", "sql/"} <= rutas


def test_una_ruta_que_no_existe_se_nombra(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "sql").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "sql" / "001_negocio.sql").write_text("", encoding="utf-8")
    (tmp_path / "bench" / "a.py").write_text("def test_uno():\n    pass\n", encoding="utf-8")
    documento = tmp_path / "docs" / "mapa.md"
    documento.write_text(
        "Bien: `sql/001_negocio.sql`, `sql/001`, `sql/NNN_*.sql`, `bench/a.py::test_uno`,"
        " `agente evaluar`, `/api/tienda/v1`, [api](../sql/001_negocio.sql).\n"
        "Mal: `agente/servicio/`, `sql/002`, `bench/a.py::test_dos`, `docs/operaciones/<tema>.md`,"
        " `bench/a.py:sin_definir`, [libro](libro.md).\n",
        encoding="utf-8",
    )
    assert list(faltas_en_documento(documento, tmp_path)) == [
        "docs/mapa.md: agente/servicio/: no existe",
        "docs/mapa.md: sql/002: ningún fichero casa",
        "docs/mapa.md: bench/a.py::test_dos: bench/a.py no tiene la prueba test_dos",
        "docs/mapa.md: docs/operaciones/<tema>.md: ningún fichero casa",
        "docs/mapa.md: bench/a.py:sin_definir: bench/a.py no define sin_definir",
        "docs/mapa.md: el enlace libro.md no lleva a ningún fichero",
    ]
