"""Las carpetas de ``operaciones/`` y sus piezas: la única lista de operaciones con efecto.

Cada carpeta es una operación y tiene estas piezas (un módulo por capa, para que las
capas de ``pyproject.toml`` sigan valiendo módulo a módulo):

- ``declaracion.py``: ``OPERACION`` (``OperacionConEfecto``); solo importa ``agente.nucleo``.
- ``regla.py``: ``REGLA`` (``politicas.reglas.base.Regla``); solo ``politicas`` y el núcleo.
- ``politica.py``: ``VALORES`` (``politicas.valores.ValorPolitica``, con su defecto) y
  ``texto_cliente(valores)``, su línea en la política que lee el cliente; capa de ``politicas``.
- ``herramienta.py``: ``crear(dependencias) -> BaseTool`` y ``MAX_POR_TURNO``; solo
  ``herramientas`` y el núcleo. Se registra con ``Herramienta.de_operacion``.
- ``frases.py``: ``FRASES`` del modelo offline y lo que lee el cliente de su resultado.
- ``paso.py``: ``paso(tarea, ctx)``, el paso del plan del modelo offline.
- ``prompt.md``: lo que el modelo debe saber de ella, en el prompt de sistema (sin llaves:
  el prompt es una plantilla).
- ``tareas.yaml``: sus tareas de evaluación (``agente evaluar``).
- ``README.md``: su página de documentación.

Quien necesita una pieza de todas las operaciones llama a ``piezas("regla")``; el
import es dinámico, así que esta lista no crea dependencias entre capas. ``faltan``
nombra lo que le falta a una carpeta (la prueba de completitud y el arranque lo usan).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

__all__ = ["CARPETA", "PIEZAS", "faltan", "nombres", "pieza", "piezas", "ruta"]

CARPETA = Path(__file__).resolve().parent

# Pieza -> lo que debe definir (módulos) o ``None`` (un archivo que no es Python).
PIEZAS: dict[str, tuple[str, ...] | None] = {
    "declaracion.py": ("OPERACION",),
    "regla.py": ("REGLA",),
    "politica.py": ("VALORES", "texto_cliente"),
    "herramienta.py": ("crear", "MAX_POR_TURNO"),
    "frases.py": ("FRASES", "redactar"),
    "paso.py": ("paso",),
    "prompt.md": None,
    "tareas.yaml": None,
    "README.md": None,
}


def nombres(carpeta: Path = CARPETA) -> tuple[str, ...]:
    """Las operaciones: las subcarpetas que son paquetes, en orden alfabético."""
    return tuple(sorted(m.name for m in pkgutil.iter_modules([str(carpeta)]) if m.ispkg))


def ruta(operacion: str, archivo: str) -> Path:
    return CARPETA / operacion / archivo


def pieza(operacion: str, modulo: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{operacion}.{modulo}")


def piezas(modulo: str) -> tuple[ModuleType, ...]:
    """El módulo ``modulo`` (p. ej. ``"regla"``) de cada operación, en el orden de ``nombres``."""
    return tuple(pieza(operacion, modulo) for operacion in nombres())


def faltan(carpeta: Path) -> list[str]:
    """Lo que le falta a la carpeta de una operación, nombrado: archivos y nombres sin definir.

    Lee el código sin importarlo (una carpeta incompleta puede no importar siquiera).
    """
    faltas = []
    for archivo, definidos in PIEZAS.items():
        camino = carpeta / archivo
        if not camino.is_file():
            faltas.append(f"{carpeta.name}/{archivo}")
            continue
        if not definidos:
            continue
        arbol = ast.parse(camino.read_text(encoding="utf-8"))
        presentes = set()
        for nodo in arbol.body:
            if isinstance(nodo, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                presentes.add(nodo.name)
            elif isinstance(nodo, (ast.Assign, ast.AnnAssign)):
                objetivos = nodo.targets if isinstance(nodo, ast.Assign) else [nodo.target]
                presentes |= {t.id for t in objetivos if isinstance(t, ast.Name)}
            elif isinstance(nodo, ast.ImportFrom):
                presentes |= {a.asname or a.name for a in nodo.names}
        faltas += [f"{carpeta.name}/{archivo}: {nombre}" for nombre in definidos if nombre not in presentes]
    return faltas
