"""El recolector de ciclos de Python en un servidor (``AGENTE_GC_UMBRAL``).

Por qué: con un proveedor real cada turno vive segundos y hay decenas a la vez, así que
los objetos jóvenes (mensajes, trozos del streaming, estados del grafo) sobreviven a las
recolecciones de la generación 0, que salta cada 700 asignaciones netas; pasan a las
generaciones viejas y cada recolección completa recorre también todo lo que se cargó al
arrancar (módulos, esquemas de pydantic, el grafo compilado). Medido con 100 clientes y
la latencia del proveedor de bench: ≈ 185 ms de CPU por turno con el de serie y ≈ 115-130
con el umbral de 50 000 y lo del arranque congelado (``docs/rendimiento.md``); la memoria
máxima apenas cambia (≈ 180 MiB).

El contrato: :func:`preparar` se llama una vez por proceso servidor, cuando ya arrancó
(el servicio y su pool creados), porque ``gc.freeze`` deja fuera de toda recolección lo
que existe en ese momento. Por eso no lo llama ``crear_app`` en las pruebas: congelaría
la basura de cada una.
"""

from __future__ import annotations

import gc
import logging

from nucleo.registro_log import evento

__all__ = ["preparar"]

logger = logging.getLogger(__name__)


def preparar(umbral: int) -> None:
    """Umbral de la generación 0 a ``umbral`` y lo vivo ahora, congelado (``0``: no toca nada)."""
    if umbral <= 0:
        return
    _, segunda, tercera = gc.get_threshold()
    gc.collect()  # que no se congele basura del arranque
    gc.freeze()
    gc.set_threshold(umbral, segunda, tercera)
    evento(logger, "recolector", mensaje=f"recolector: umbral {umbral}, {gc.get_freeze_count()} objetos congelados",
           umbral=umbral, congelados=gc.get_freeze_count())
