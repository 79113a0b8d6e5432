"""Métricas de la evaluación: pass^k (estimador insesgado de τ²) y precisión/recall del escalado."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import comb

__all__ = ["aclaraciones", "pass_k", "precision_recall", "tasa"]


def pass_k(resultados: Sequence[tuple[int, int]], k: int) -> float:
    """pass^k = media sobre tareas de C(c, k) / C(n, k), con c éxitos en n intentos.

    Es la probabilidad de que k intentos independientes de la misma tarea salgan TODOS
    bien (no «alguno», como pass@k). Exige n >= k en cada tarea.
    """
    if k < 1:
        raise ValueError("k debe ser al menos 1")
    if not resultados:
        return 0.0
    total = 0.0
    for exitos, intentos in resultados:
        if intentos < k:
            raise ValueError(f"pass^{k} necesita al menos {k} intentos por tarea (hay {intentos})")
        total += comb(exitos, k) / comb(intentos, k)
    return total / len(resultados)


def precision_recall(pares: Iterable[tuple[Sequence[str], Sequence[str]]]) -> dict[str, float]:
    """(esperadas, reales) por intento -> micro precisión y recall del escalado.

    Multiconjuntos: dos pausas de la misma operación cuentan dos. Sin escalados reales la
    precisión es 1,0 (no hubo falsos positivos); sin esperados, el recall es 1,0.
    """
    verdaderos = reales_total = esperados_total = 0
    for esperadas, reales in pares:
        restantes = list(esperadas)
        for real in reales:
            if real in restantes:
                restantes.remove(real)
                verdaderos += 1
        reales_total += len(reales)
        esperados_total += len(esperadas)
    return {
        "precision": verdaderos / reales_total if reales_total else 1.0,
        "recall": verdaderos / esperados_total if esperados_total else 1.0,
    }


def tasa(marcas: Iterable[bool]) -> float:
    """La fracción de ``True`` (0,0 si no hay ninguna marca)."""
    lista = list(marcas)
    return sum(lista) / len(lista) if lista else 0.0


def aclaraciones(pares: Iterable[tuple[bool | None, bool]]) -> dict[str, float]:
    """(debía preguntar, preguntó) por intento -> tasas de preguntas aclaratorias.

    ``debía``: True = petición ambigua (debe preguntar antes de actuar); False = petición
    clara con algo que hacer (preguntar sobra); None = ni lo uno ni lo otro (no cuenta).
    ``ambiguas``: de las ambiguas, en cuántas preguntó (debe ser 1,0); ``innecesarias``:
    de las claras, en cuántas preguntó sin hacer nada (debe ser 0,0).
    """
    lista = list(pares)
    return {
        "ambiguas": tasa(pregunto for debia, pregunto in lista if debia is True),
        "innecesarias": tasa(pregunto for debia, pregunto in lista if debia is False),
    }
