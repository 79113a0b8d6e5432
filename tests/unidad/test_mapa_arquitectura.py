"""El mapa de ``docs/arquitectura.md`` y el árbol dicen lo mismo.

Cada sala del producto (cada paquete de ``[tool.importlinter] root_packages`` salvo
``agente``, y cada hijo directo de ``agente/``) tiene su fila en la tabla «Las salas»; y
cada fila nombra algo que existe. Una carpeta nueva sin fila, o una fila de una carpeta
borrada, hace fallar esta prueba.
"""

from __future__ import annotations

import re
import tomllib

from tests.apoyo.rutas import RAIZ

MAPA = RAIZ / "docs" / "arquitectura.md"
OTRAS = ("sql/", "tests/", "bench/", "docs/", ".ci/")


def _filas() -> list[str]:
    texto = MAPA.read_text(encoding="utf-8")
    seccion = texto.split("## Las salas", 1)[1].split("\n## ", 1)[0]
    return [linea for linea in seccion.splitlines() if linea.startswith("| `")]


def _nombradas() -> set[str]:
    return {ruta for fila in _filas() for ruta in re.findall(r"`([^`]+)`", fila.split("|")[1])}


def _salas() -> set[str]:
    raices = tomllib.loads((RAIZ / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
    salas = {f"{r}/" for r in raices if r != "agente"} | set(OTRAS)
    for hijo in (RAIZ / "agente").iterdir():
        if hijo.name.startswith(("_", ".")):
            continue
        if hijo.is_dir() and (hijo / "__init__.py").exists():
            salas.add(f"agente/{hijo.name}/")
        elif hijo.suffix == ".py":
            salas.add(f"agente/{hijo.name}")
    return salas


def test_cada_sala_del_arbol_tiene_su_fila_en_el_mapa():
    faltan = sorted(_salas() - _nombradas())
    assert not faltan, f"docs/arquitectura.md, «Las salas», no nombra: {faltan}"


def test_cada_fila_del_mapa_nombra_algo_que_existe():
    nombradas = _nombradas()
    assert len(nombradas) >= 15
    assert not [r for r in sorted(nombradas) if not (RAIZ / r).exists()]
