"""Peticiones a la vez de verdad: cada una en su hilo, soltadas juntas por una barrera."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["a_la_vez"]


def a_la_vez(funciones: list[Callable[[], Any]], *, limite: float = 120.0) -> list[Any]:
    """El resultado de cada función (o su excepción), en orden; todas salen a la vez."""
    barrera = threading.Barrier(len(funciones), timeout=limite)
    resultados: list[Any] = [None] * len(funciones)

    def correr(i: int, funcion: Callable[[], Any]) -> None:
        barrera.wait()
        try:
            resultados[i] = funcion()
        except Exception as exc:  # noqa: BLE001 - se comprueba en la prueba
            resultados[i] = exc

    hilos = [threading.Thread(target=correr, args=(i, f)) for i, f in enumerate(funciones)]
    for hilo in hilos:
        hilo.start()
    for hilo in hilos:
        hilo.join(timeout=limite)
    assert not any(h.is_alive() for h in hilos), "alguna petición no terminó a tiempo"
    return resultados
