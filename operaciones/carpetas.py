"""Las carpetas de ``operaciones/`` y sus piezas: la única lista de operaciones con efecto.

Cada carpeta es una operación y tiene estas piezas (un módulo por capa, para que las
capas de ``pyproject.toml`` sigan valiendo módulo a módulo):

- ``declaracion.py``: ``OPERACION`` (``OperacionConEfecto``); solo importa ``nucleo``.
- ``regla.py``: ``REGLA`` (``politicas.reglas.base.Regla``); solo ``politicas`` y el núcleo.
- ``politica.py``: ``VALORES`` (los argumentos de cada ``politicas.valores.ValorPolitica``,
  con su defecto; no importa ``politicas``) y
  ``texto_cliente(valores)``, su línea en la política que lee el cliente; capa de ``politicas``.
- ``herramienta.py``: ``crear(dependencias) -> BaseTool`` y ``MAX_POR_TURNO``; solo
  ``herramientas`` y el núcleo. Se registra con ``Herramienta.de_operacion``.
- ``maneras.py``: ``TAMBIEN`` y ``RENUNCIA``, otras maneras de pedirla y de renunciar a
  ella (expresiones para el modelo offline; sin imports).
- ``frases.py``: lo que lee el cliente de su resultado (``redactar``) en el modelo offline.
- ``paso.py``: ``paso(tarea, ctx)``, el paso del plan del modelo offline. Opcionales, que
  ``agente.modelo_offline.lectura`` usa si están: ``respuesta(texto, anteriores)``, las
  tareas del «sí» o el «no» a lo que propuso la última respuesta (un cambio, un reenvío) o
  ``None``; y ``partir(fragmento)``, ``(origen, deseo)``: lo que el cliente tiene y lo que
  quiere a cambio (el cambio de producto).
- ``prompt.md``: lo que el modelo debe saber de ella, en el prompt de sistema (sin llaves:
  el prompt es una plantilla).
- ``tareas.yaml``: sus tareas de evaluación (``agente evaluar``).
- ``README.md``: su página de documentación.

Piezas opcionales (sin ellas la carpeta está completa):

- ``sql/NNN_<op>.sql``: sus migraciones (tabla, valores por tienda); las filas de la
  matriz las escribe ``migrar`` de su declaración;
  ``agente/bd/migraciones.py`` las aplica con las de ``sql/`` en un solo orden por número.
- ``HECHOS`` en ``politica.py``: los hechos propios de su regla, como datos (los
  argumentos de ``politicas.hechos.Hecho``); ``politicas/hechos.py`` los junta.
- ``demo.sql``: sus datos de demo (productos, stock, pedidos), idempotentes;
  ``agente/demo/carga.py`` los carga detrás de los demás.
- ``describir(args, datos, cliente)`` en ``regla.py``: lo que lee quien firma, si sus
  campos con sus etiquetas no bastan (``politicas.descripcion``; las piezas de texto, en
  ``politicas.redaccion``).

Quien necesita una pieza de todas las operaciones llama a ``piezas("regla")``; el
import es dinámico, así que esta lista no crea dependencias entre capas.

Trampa: importar una pieza primero (``import operaciones.vale.regla``) carga antes el
paquete de su capa (``politicas/__init__.py``), que junta las piezas de todas las
carpetas; la que se está importando aún está a medias. Por eso lo que se junta al
importar solo lee piezas que no importan su propia capa (``declaracion``, ``politica``,
``maneras``), y lo que junta piezas que sí la importan (``REGLAS``, ``REGISTRO``,
``PASOS``) es ``Perezosa``: se construye la primera vez que se usa. ``faltan``
nombra lo que le falta a una carpeta (la prueba de completitud y el arranque lo usan).
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

__all__ = ["CARPETA", "PIEZAS", "Perezosa", "faltan", "nombres", "pieza", "piezas", "ruta"]

CARPETA = Path(__file__).resolve().parent

# Pieza -> lo que debe definir (módulos) o ``None`` (un archivo que no es Python).
PIEZAS: dict[str, tuple[str, ...] | None] = {
    "declaracion.py": ("OPERACION",),
    "regla.py": ("REGLA",),
    "politica.py": ("VALORES", "texto_cliente"),
    "herramienta.py": ("crear", "MAX_POR_TURNO"),
    "maneras.py": ("TAMBIEN", "RENUNCIA"),
    "frases.py": ("redactar",),
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
    """El módulo ``modulo`` de la carpeta de ``operacion``; si falta, un error que lo nombra."""
    nombre = f"{__package__}.{operacion}.{modulo}"
    try:
        return importlib.import_module(nombre)
    except ModuleNotFoundError as exc:
        if exc.name != nombre:
            raise
        raise ModuleNotFoundError(f"a la operación {operacion} le falta la pieza operaciones/{operacion}/{modulo}.py "
                                  "(operaciones/carpetas.py, PIEZAS)", name=nombre) from exc


def piezas(modulo: str) -> tuple[ModuleType, ...]:
    """El módulo ``modulo`` (p. ej. ``"regla"``) de cada operación, en el orden de ``nombres``."""
    return tuple(pieza(operacion, modulo) for operacion in nombres())


class Perezosa(Mapping):
    """Un ``Mapping`` que se construye con ``fabrica()`` la primera vez que se lee."""

    def __init__(self, fabrica: Callable[[], Mapping[str, Any]]) -> None:
        self._fabrica = fabrica
        self._datos: Mapping[str, Any] | None = None

    def _leer(self) -> Mapping[str, Any]:
        if self._datos is None:
            self._datos = MappingProxyType(dict(self._fabrica()))
        return self._datos

    def __getitem__(self, clave: str) -> Any:
        return self._leer()[clave]

    def __iter__(self) -> Iterator[str]:
        return iter(self._leer())

    def __len__(self) -> int:
        return len(self._leer())

    def __repr__(self) -> str:
        return f"Perezosa({dict(self._leer())!r})"


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
