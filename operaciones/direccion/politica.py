"""La política del cambio de dirección: su valor por tienda (con dominio y defecto) y su frase.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política. El defecto
es el ``DEFAULT`` de ``sql/019_direccion.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["VALORES", "texto_cliente"]

VALORES = (
    dict(
        nombre="limite_cambio_direccion", etiqueta="Límite de cambio de dirección sin firma", tipo="dinero", unidad="EUR", minimo=Decimal("0.00"),
        defecto=Decimal("150.00"), endurece="bajar", regla="direccion",
        descripcion="Cambiar la dirección de envío de un pedido de más importe pide firma."),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return (
        "- Cambio de dirección: la dirección de envío de un pedido que aún no ha salido se puede "
        "cambiar; si la nueva está en otra provincia o el pedido pasa de "
        f"{dinero.eur(valores['limite_cambio_direccion'])}, necesita la aprobación de un encargado. "
        "Un pedido ya enviado no cambia de dirección: se puede rechazar la entrega."
    )
