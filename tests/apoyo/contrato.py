"""Schemathesis dentro de la prueba: las comprobaciones, los ajustes de Hypothesis y el bucle
«cada operación, con datos válidos y no válidos» que comparten las pruebas de contrato.

La trampa que evita ``operaciones``: con una sección ``[[operations]]`` en
``schemathesis.toml``, ``esquema.include(path_regex=...)`` *suma* esa operación a lo incluido
(el filtro del archivo y el de la prueba se unen), así que la prueba acababa llamando a rutas
que no quería, entre ellas un flujo SSE sin fin. Aquí se filtra excluyendo lo que no casa.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import schemathesis.specs.openapi.checks  # noqa: F401  (registra las comprobaciones de OpenAPI)
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS

__all__ = ["AJUSTES_HYPOTHESIS", "COMPROBACIONES", "SIN_ACEPTACION", "SIN_FIN", "operaciones", "probar_operaciones",
           "schemathesis_run", "servidor_contrato", "solo"]

# Ejemplos por operación de ``schemathesis run`` (fuzzing y recorridos con estado; las fases de
# ejemplos y de cobertura no dependen de este número). 10 en ``make test`` y en CI: con la
# semilla fija los casos son siempre los mismos; ``AGENTE_HYPOTHESIS_LARGO=1`` (noche o
# ``make bench``, como test_libro_estados.py) pide los 25 de antes, tres veces más lentos.
EJEMPLOS_RUN = 25 if os.environ.get("AGENTE_HYPOTHESIS_LARGO") == "1" else 10

# Los flujos SSE sin fin: /eventos (los prueban test_web_api y test_web_workers) y el hilo en
# vivo del protocolo de LangGraph (test_protocolo_langgraph).
SIN_FIN = r"(/eventos|/langgraph/threads/[^/]+/stream)$"

# Todas, como ``--checks all``, menos ``ignored_auth``: la prueba pone la cabecera después de
# generar el caso y Schemathesis cree que reenvía una credencial inventada (la comprueba de
# verdad ``schemathesis run`` en test_contrato_api_*.py).
COMPROBACIONES = [c for c in CHECKS.get_all() if c.__name__ != "ignored_auth"]
SIN_ACEPTACION = [c for c in COMPROBACIONES if c.__name__ != "positive_data_acceptance"]
AJUSTES_HYPOTHESIS = dict(deadline=None, database=None, derandomize=True,
                          suppress_health_check=list(HealthCheck))


def solo(esquema, patron: str):
    """El esquema con solo las rutas que empiezan por ``patron`` (una expresión regular)."""
    return esquema.exclude(path_regex=f"^(?!{patron})")


def operaciones(esquema, patron: str) -> Iterator:
    """Las operaciones de ``solo(esquema, patron)``; falla si el patrón no casa con ninguna."""
    encontradas = [r.ok() for r in solo(esquema, patron).get_all_operations()]
    assert encontradas, f"ninguna operación casa con {patron!r}"
    return iter(encontradas)


def probar_operaciones(ops, llamar: Callable, *, ejemplos: int) -> list[str]:
    """Cada operación, con datos válidos y no válidos; ``llamar(case)`` llama y valida. Devuelve
    los fallos como texto (vacía si todo cumple): así una prueba junta todos y no solo el primero."""
    fallos = []
    for operacion in ops:
        for modo in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @given(case=operacion.as_strategy(generation_mode=modo))
            @settings(max_examples=ejemplos, **AJUSTES_HYPOTHESIS)
            def probar(case):
                llamar(case)

            try:
                probar()
            except Unsatisfiable:
                continue
            except Exception as exc:
                fallos.append(f"{operacion.label} ({modo}): {exc}")
    return fallos


@contextmanager
def servidor_contrato(url_admin: str, plantillas: dict):
    """La app de verdad (uvicorn en un hilo) sobre una base nueva de la demo, sin límite de
    mensajes: ``{"base", "url", "ajustes"}``."""
    from agente.web.app import crear_app
    from tests.apoyo.bases import borrar_base, crear_base
    from tests.apoyo.web_util import ajustes_web, servidor_en_hilo

    nombre = f"t_contrato_{uuid.uuid4().hex[:8]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["demo"])
    ajustes = ajustes_web(url, mensajes_por_minuto=1_000_000)
    with servidor_en_hilo(crear_app(ajustes)) as base:
        yield {"base": base, "url": url, "ajustes": ajustes}
    borrar_base(url_admin, nombre)


def schemathesis_run(servidor: dict, sujeto: str) -> None:
    """``schemathesis run --checks all`` tal cual lo correría quien evalúa la API: todas las
    fases (ejemplos, cobertura, fuzzing sin y con datos no válidos, con estado) con el token
    de ``sujeto``. Sin caché de ejemplos (``.schemathesis/``). Cada rol en su fichero de
    prueba (``tests/api/test_contrato_api_*.py``): con ``--dist loadfile`` se reparten entre
    los procesos en vez de ir los tres barridos al mismo."""
    from agente.web.entrada.auth import emitir_token

    rol = "cliente" if sujeto.startswith("C-") else "encargado"
    credencial = emitir_token(servidor["ajustes"], rol=rol, sujeto=sujeto, tienda="talavera")
    orden = [str(Path(sys.executable).with_name("schemathesis")), "run", f"{servidor['base']}/openapi.json",
             "--checks", "all", "--max-examples", str(EJEMPLOS_RUN), "--seed", "20261202", "--generation-database", "none",
             "--exclude-path-regex", SIN_FIN, "--header", f"Authorization: Bearer {credencial}",
             "--workers", "1", "--no-color"]
    hecho = subprocess.run(orden, capture_output=True, text=True, timeout=600)
    salida = hecho.stdout + hecho.stderr
    assert hecho.returncode == 0, salida[-8000:]
    # Y de verdad probó algo: casos generados y pasados, no solo operaciones saltadas.
    assert re.search(r"\b[1-9][0-9]* generated, [1-9][0-9]* passed", salida), salida[-2000:]
