"""Un artículo que el cliente nombra y el pedido no tiene: se pregunta por cuál, sin mover nada.

Público para los pasos de las operaciones (``operaciones/<operacion>/paso.py``) y del plan.
"""

from __future__ import annotations

from agente.modelo_offline import matices
from agente.modelo_offline.lectura import PATRONES, Tarea
from agente.modelo_offline.pasos import Paso, fin

__all__ = ["PATRON", "otro_articulo"]

PATRON = dict(PATRONES)  # intención -> lo que la reconoce (dónde empieza lo que nombra el cliente)


def otro_articulo(tarea: Tarea, todas: list[dict]) -> Paso | None:
    """Si el cliente nombra un artículo que el pedido no tiene, la pregunta por cuál (sin mover nada)."""
    palabra = matices.articulo_nombrado(tarea.texto, PATRON[tarea.tipo])
    if palabra and not matices.esta_en(palabra, todas):
        return fin(matices.no_esta_en_el_pedido(tarea.pedido, palabra, todas))
    return None
