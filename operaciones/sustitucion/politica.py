"""La política del cambio de producto: sus valores por tienda (con dominio y defecto) y su frase.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["VALORES", "texto_cliente"]

VALORES = (
    dict(
        nombre="diferencia_max_sustitucion", etiqueta="Diferencia máxima de un cambio sin firma", tipo="dinero",
        unidad="EUR", minimo=Decimal("0.00"), defecto=Decimal("0.00"), endurece="bajar", regla="sustitucion",
        descripcion="Un cambio que cuesta más que esto por encima del original pide firma."),
    dict(
        nombre="diferencia_minima_liquidable", etiqueta="Diferencia mínima que se liquida", tipo="dinero",
        unidad="EUR", minimo=Decimal("0.00"), defecto=Decimal("0.00"), endurece="bajar", regla="sustitucion",
        descripcion="Una diferencia de un cambio menor que esto no se cobra ni se devuelve."),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    diferencia = dinero.cuantizar(valores["diferencia_max_sustitucion"])
    if diferencia > 0:
        regla_cambio = (
            f"si el nuevo cuesta más de {dinero.eur(diferencia)} por encima del original, "
            "el cambio necesita la aprobación de un encargado"
        )
    else:
        regla_cambio = "si el nuevo es más caro que el original, el cambio necesita la aprobación de un encargado"
    return ("- Cambios: un producto del pedido se puede cambiar por otro de la misma categoría "
            f"con stock en la tienda; {regla_cambio}.")
