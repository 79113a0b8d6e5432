"""Los ejemplos del README y de ``docs/*.md`` casan con el producto: cada orden ``agente …``
existe y acepta las opciones que usa (se lee con Click, sin ejecutar nada), cada ``make X`` es
un objetivo del Makefile y cada ejemplo HTTP (``GET /api/…``) es una ruta del OpenAPI de la app
con ese método. Recorre los documentos que haya: uno nuevo entra solo."""

from __future__ import annotations

import re
import shlex

import pytest
from typer.main import get_command

from agente.cli import app
from tests.apoyo.rutas import RAIZ

DOCUMENTOS = [RAIZ / "README.md", *sorted((RAIZ / "docs").glob("**/*.md"))]
_BLOQUE = re.compile(r"```(?:bash|sh|shell|console)?\n(.*?)```", re.S)
_HTTP = re.compile(r"(?<![\w/])(GET|POST|PUT|PATCH|DELETE) (/[\w{}\-./]+)")


def _lineas_de_orden(texto: str):
    for bloque in _BLOQUE.findall(texto):
        continuada = ""
        for linea in bloque.splitlines():
            linea = continuada + linea.strip().removeprefix("$ ")
            if linea.endswith("\\"):
                continuada = linea[:-1] + " "
                continue
            continuada = ""
            yield linea


_EN_LINEA = re.compile(r"(?<!`)`((?:\.venv/bin/)?agente [^`]+)`(?!`)")


def _ordenes():
    for doc in DOCUMENTOS:
        texto = doc.read_text(encoding="utf-8")
        # Las de un bloque se leen enteras; las citadas en el texto, solo la orden y sus opciones.
        for linea, entera in [*((x, True) for x in _lineas_de_orden(texto)),
                              *((x, False) for x in _EN_LINEA.findall(_BLOQUE.sub("", texto)))]:
            linea = linea.replace("[", " ").replace("]", " ")
            for trozo in re.split(r"\s*(?:&&|\|\||;|\|)\s*", linea.split(" #", 1)[0]):
                try:
                    palabras = shlex.split(trozo)
                except ValueError:
                    continue
                while palabras and re.match(r"^[A-Z_]+=", palabras[0]):
                    palabras = palabras[1:]  # variables de entorno delante
                if palabras and (palabras[0] == "agente" or palabras[0].endswith("/bin/agente")):
                    yield doc.relative_to(RAIZ).as_posix(), palabras[1:], entera
                elif palabras[:3] == ["python", "-m", "agente"] or palabras[:3] == [".venv/bin/python", "-m", "agente"]:
                    yield doc.relative_to(RAIZ).as_posix(), palabras[3:], entera
                elif palabras and palabras[0] == "make":
                    yield doc.relative_to(RAIZ).as_posix(), ["@make", *palabras[1:]], entera


ORDENES = list(_ordenes())
OBJETIVOS = set(re.findall(r"^([\w.-]+):", (RAIZ / "Makefile").read_text(encoding="utf-8"), re.M))


def _comprobar_orden(args: list[str], entera: bool) -> None:
    from typer._click.exceptions import ClickException

    comando = get_command(app)
    ruta = []
    while args and getattr(comando, "commands", None) and args[0] in comando.commands:
        ruta.append(args[0])
        comando = comando.commands[args.pop(0)]
    assert not getattr(comando, "commands", None) or not args or args[0].startswith("-") or args[0] in "…...", \
        f"agente {' '.join(ruta)}: no tiene la orden {args[0]!r}"
    if getattr(comando, "commands", None):
        return
    conocidas = {o for p in comando.params for o in (*p.opts, *p.secondary_opts)}
    usadas = {a.split("=", 1)[0] for a in args if a.startswith("--")}
    assert usadas <= conocidas | {"--help"}, f"agente {' '.join(ruta)}: opciones que no existen {usadas - conocidas}"
    # Los valores de ejemplo en mayúsculas (ID, N, TEXTO) o entre <> son marcadores: no se leen.
    if not entera or "--help" in args or any(
            re.search(r"[<>$]|\.\.\.|…|\bTU-", a) or re.fullmatch(r"[A-Z]{1,6}(\.\w+)?", a) for a in args):
        return
    try:
        comando.make_context("agente", list(args))
    except ClickException as exc:
        if "Missing" not in type(exc).__name__:
            raise AssertionError(f"agente {' '.join(ruta)} {' '.join(args)}: {exc.format_message()}") from None


@pytest.mark.parametrize(("doc", "args", "entera"), ORDENES, ids=[f"{d}: {' '.join(a)}"[:80] for d, a, _ in ORDENES])
def test_cada_orden_de_los_documentos_existe(doc, args, entera):
    if args[:1] == ["@make"]:
        objetivos = [a for a in args[1:] if "=" not in a and not a.startswith("-")]
        assert set(objetivos) <= OBJETIVOS, (doc, objetivos)
        return
    _comprobar_orden(list(args), entera)


def test_los_documentos_traen_ordenes_que_comprobar():
    assert len([a for _, a, _ in ORDENES if a[:1] != ["@make"]]) > 20


def _rutas_de_la_app() -> dict[str, set[str]]:
    import os

    os.environ.setdefault("AGENTE_DEMO", "1")
    from agente.web.app import crear_app
    from nucleo.ajustes import Ajustes

    aplicacion = crear_app(Ajustes(demo=True))
    rutas: dict[str, set[str]] = {}
    for ruta, operaciones in aplicacion.openapi()["paths"].items():
        rutas.setdefault(ruta, set()).update(m.upper() for m in operaciones)
    import importlib

    # Las rutas fuera del OpenAPI (el webhook de pagos, las páginas), de cada router de la web.
    for modulo in sorted((RAIZ / "agente/web/rutas").glob("*.py")):
        router = getattr(importlib.import_module(f"agente.web.rutas.{modulo.stem}"), "router", None)
        for r in getattr(router, "routes", []):
            rutas.setdefault(getattr(r, "path", ""), set()).update(getattr(r, "methods", None) or {"GET"})
    return rutas


def _casa(ruta: str, plantilla: str) -> bool:
    patron = re.sub(r"\\\{[^}]+\\\}", r"[^/]+", re.escape(plantilla))
    return re.fullmatch(patron, ruta) is not None


def test_cada_ejemplo_http_de_los_documentos_es_una_ruta_de_la_app():
    rutas = _rutas_de_la_app()
    fallos = []
    for doc in DOCUMENTOS:
        for metodo, ruta in _HTTP.findall(doc.read_text(encoding="utf-8")):
            ruta = ruta.split("?", 1)[0].rstrip(".")
            if ruta.startswith("/api/public/"):  # la API de Langfuse, no la nuestra
                continue
            if not (ruta.startswith("/api/") or ruta.startswith("/langgraph/")):
                continue
            if not any(_casa(ruta, p) and metodo in m for p, m in rutas.items()):
                fallos.append(f"{doc.relative_to(RAIZ)}: {metodo} {ruta}")
    assert not fallos, fallos
