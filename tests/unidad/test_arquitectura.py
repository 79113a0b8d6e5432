"""Las dependencias van en un solo sentido y el registro es la única lista de herramientas."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.apoyo.rutas import RAIZ

PAQUETES = ("agente", "politicas", "herramientas", "operaciones", "caja", "nucleo")


def _lint_imports(raiz: Path) -> subprocess.CompletedProcess:
    binario = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(binario), "--config", str(raiz / "pyproject.toml"), "--no-cache"],
        cwd=raiz, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(raiz), "PATH": "/usr/bin:/bin"},
    )


def _copia(tmp_path: Path) -> Path:
    for paquete in PAQUETES:
        shutil.copytree(RAIZ / paquete, tmp_path / paquete, ignore=shutil.ignore_patterns("__pycache__", "estaticos"))
    shutil.copy(RAIZ / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_los_contratos_de_capas_se_cumplen():
    resultado = _lint_imports(RAIZ)
    assert resultado.returncode == 0, resultado.stdout + resultado.stderr
    assert "0 broken" in resultado.stdout


@pytest.mark.parametrize(
    ("modulo", "importacion"),
    [
        ("herramientas/_malo.py", "import agente.servicio\n"),
        ("politicas/_malo.py", "from agente.construir import construir_agente\n"),
        ("nucleo/_malo.py", "import herramientas.registro\n"),
        ("agente/servicio/_malo.py", "from agente.web import app\n"),
    ],
)
def test_una_importacion_en_sentido_contrario_rompe_los_contratos(tmp_path, modulo, importacion):
    raiz = _copia(tmp_path)
    (raiz / modulo).write_text(importacion, encoding="utf-8")
    resultado = _lint_imports(raiz)
    assert resultado.returncode != 0
    assert "BROKEN" in resultado.stdout or "broken" in resultado.stdout
    assert "_malo" in resultado.stdout


@pytest.mark.parametrize(
    ("modulo", "importacion", "contrato"),
    [
        # Un ciclo entre hermanos de la misma capa («:»): las capas lo dejarían pasar.
        ("agente/retencion.py", "from agente.servicio.conversaciones import candados\n",
         "Sin ciclos entre hermanos"),
        # Dentro de la CLI: lo compartido no puede depender de la aplicación.
        ("agente/cli/comun.py", "from agente.cli import principal\n", "agente.cli.comun -> agente.cli.principal"),
        # Dentro del servicio: una aprobación pendiente no sabe de quien la decide.
        ("agente/servicio/aprobaciones/cola.py", "from agente.servicio.decisiones import decidir\n",
         "agente.servicio.aprobaciones.cola -> agente.servicio.decisiones.decidir"),
        # La web no se salta el servicio: nada de debajo, ni la base ni la política.
        ("agente/web/rutas/historial.py", "from agente.bd import pool\n", "agente.web.rutas.historial -> agente.bd.pool"),
        ("agente/cli/politica.py", "import politicas.valores\n", "agente.cli.politica -> politicas.valores"),
        # Dentro de la web: las formas de la API no saben de las rutas.
        ("agente/web/esquemas/comun.py", "from agente.web.rutas import cliente\n",
         "agente.web.esquemas.comun -> agente.web.rutas.cliente"),
        # Dentro de la base: el pool no sabe de migraciones.
        ("agente/bd/pool.py", "from agente.bd import migraciones\n", "agente.bd.pool -> agente.bd.migraciones"),
    ],
)
def test_un_ciclo_rompe_los_contratos(tmp_path, modulo, importacion, contrato):
    raiz = _copia(tmp_path)
    with (raiz / modulo).open("a", encoding="utf-8") as fichero:
        fichero.write(importacion)
    resultado = _lint_imports(raiz)
    assert resultado.returncode != 0
    assert contrato in " ".join(resultado.stdout.split()), resultado.stdout


def test_cada_modulo_de_agente_esta_en_una_capa():
    config = tomllib.loads((RAIZ / "pyproject.toml").read_text(encoding="utf-8"))
    capas = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "capas")
    en_capas = {
        nombre.strip() for capa in capas["layers"] for nombre in capa.replace(":", "|").split("|")
    }
    hijos = {
        f"agente.{p.stem}" for p in (RAIZ / "agente").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert hijos - en_capas == set()


def _sentencias_con_logica(fichero: Path, raiz: Path = RAIZ) -> list[str]:
    """Lo que en un ``__init__.py`` no es docstring, import ni ``__all__``."""
    arbol = ast.parse(fichero.read_text(encoding="utf-8"))
    fuera = []
    for n, nodo in enumerate(arbol.body):
        if n == 0 and isinstance(nodo, ast.Expr) and isinstance(nodo.value, ast.Constant):
            continue
        if isinstance(nodo, ast.Import | ast.ImportFrom):
            continue
        if isinstance(nodo, ast.Assign) and [getattr(t, "id", None) for t in nodo.targets] == ["__all__"]:
            continue
        fuera.append(f"{fichero.relative_to(raiz)}:{nodo.lineno} {type(nodo).__name__}")
    return fuera


def test_ningun_init_tiene_logica():
    fuera = [
        s for paquete in PAQUETES for init in sorted((RAIZ / paquete).rglob("__init__.py"))
        for s in _sentencias_con_logica(init)
    ]
    assert fuera == []


def test_un_init_con_logica_se_detecta(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text('"""Doc."""\n\nfrom a import b\n\n__all__ = ["b"]\n\n\ndef c():\n    return b\n', encoding="utf-8")
    assert _sentencias_con_logica(init, tmp_path) == ["__init__.py:8 FunctionDef"]


LIMITE_LINEAS = 400  # un módulo más largo se parte por conceptos


def test_ningun_modulo_del_producto_pasa_de_400_lineas():
    largos = {
        str(f.relative_to(RAIZ)): n
        for paquete in PAQUETES for f in sorted((RAIZ / paquete).rglob("*.py"))
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > LIMITE_LINEAS
    }
    assert largos == {}
