"""La política de la cancelación: su valor por tienda (con dominio y defecto) y su frase.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política. El defecto
es el ``DEFAULT`` de ``sql/016_cancelacion.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["VALORES", "texto_cliente"]

VALORES = (
    dict(
        nombre="limite_cancelacion", etiqueta="Límite de cancelación sin firma", tipo="dinero", unidad="EUR",
        minimo=Decimal("0.00"), defecto=Decimal("200.00"), endurece="bajar", regla="cancelacion",
        descripcion="Cancelar un pedido sin enviar de más importe pide firma."),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return (
        "- Cancelaciones: un pedido que aún no ha salido se cancela entero (no solo una parte) "
        "y se devuelve lo pagado; si pasa de "
        f"{dinero.eur(valores['limite_cancelacion'])}, necesita la aprobación de un encargado. "
        "Un pedido ya enviado o entregado no se cancela: se puede rechazar la entrega o "
        "devolverlo al recibirlo."
    )
