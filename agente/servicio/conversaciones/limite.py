"""Cuántas ejecuciones del agente a la vez en un proceso: el límite lo pone el servicio.

Lo comparten todas las entradas (web, CLI, tareas periódicas, conciliador): cada turno,
decisión, caducidad o reparación de un hilo toma un sitio antes del candado del hilo.
Por encima del máximo se espera como mucho ``espera`` segundos y después
:class:`Saturado` (503 con ``Retry-After`` en la web): nunca un ``PoolTimeout`` ni un 500.
Es el único límite de ejecuciones: la web no vuelve a contar, solo reparte hilos
(``agente.web.infra.hebras``).

Una ejecución ya no retiene ninguna conexión del pool mientras el modelo piensa (ver
``candados``): el máximo lo marcan la CPU y la memoria del proceso, no el pool.
Reentrante por hilo: una entrada que llama a otra (decidir → aplicar) ocupa un solo sitio.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from nucleo.errores import Saturado

__all__ = ["LimiteEjecuciones"]


class LimiteEjecuciones:
    """Semáforo con espera acotada. ``maximo`` >= 1; ``espera`` >= 0 segundos."""

    def __init__(self, *, maximo: int, espera: float) -> None:
        if maximo < 1:
            raise ValueError("el máximo de ejecuciones a la vez debe ser al menos 1")
        if espera < 0:
            raise ValueError("la espera no puede ser negativa")
        self.maximo = maximo
        self.espera = espera
        self._semaforo = threading.BoundedSemaphore(maximo)
        self._local = threading.local()
        self._cerrojo = threading.Lock()
        self._en_curso = 0
        self._rechazadas = 0

    @contextmanager
    def ejecucion(self) -> Iterator[None]:
        profundidad = getattr(self._local, "profundidad", 0)
        if profundidad:  # ya dentro de una ejecución de este hilo
            self._local.profundidad = profundidad + 1
            try:
                yield
            finally:
                self._local.profundidad = profundidad
            return
        if not self._semaforo.acquire(timeout=self.espera):
            with self._cerrojo:
                self._rechazadas += 1
            raise Saturado(
                "hay demasiadas conversaciones en curso; inténtalo en unos segundos",
                reintentar_en=max(1, math.ceil(self.espera / 2)),
            )
        with self._cerrojo:
            self._en_curso += 1
        self._local.profundidad = 1
        try:
            yield
        finally:
            self._local.profundidad = 0
            with self._cerrojo:
                self._en_curso -= 1
            self._semaforo.release()

    @property
    def en_curso(self) -> int:
        return self._en_curso

    @property
    def rechazadas(self) -> int:
        return self._rechazadas
