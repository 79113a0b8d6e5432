"""Schemathesis dentro de la prueba: las comprobaciones, los ajustes de Hypothesis y el bucle
«cada operación, con datos válidos y no válidos» que comparten las pruebas de contrato.

La trampa que evita ``operaciones``: con una sección ``[[operations]]`` en
``schemathesis.toml``, ``esquema.include(path_regex=...)`` *suma* esa operación a lo incluido
(el filtro del archivo y el de la prueba se unen), así que la prueba acababa llamando a rutas
que no quería, entre ellas un flujo SSE sin fin. Aquí se filtra excluyendo lo que no casa.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import schemathesis.specs.openapi.checks  # noqa: F401  (registra las comprobaciones de OpenAPI)
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS

__all__ = ["AJUSTES_HYPOTHESIS", "COMPROBACIONES", "SIN_ACEPTACION", "operaciones", "probar_operaciones", "solo"]

# Todas, como ``--checks all``, menos ``ignored_auth``: la prueba pone la cabecera después de
# generar el caso y Schemathesis cree que reenvía una credencial inventada (la comprueba de
# verdad ``schemathesis run`` en test_contrato_api.py).
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
