"""La política del vale: sus valores por tienda (con dominio y defecto) y su frase para el cliente.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política. Los
defectos son los ``DEFAULT`` de ``sql/018_vale.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero
from operaciones.vale.declaracion import (
    VALE_DIAS_CADUCIDAD_DEFECTO,
    VALE_IMPORTE_MAX_DEFECTO,
    VALE_PORCENTAJE_MAX_DEFECTO,
    VALE_VENTANA_DIAS,
)

__all__ = ["VALORES", "texto_cliente"]

# Vale de compensación (sql/018_vale.sql): sin firma hasta el menor de los dos.
VALORES = (
    dict(
        nombre="vale_porcentaje_max", etiqueta="Porcentaje máximo de un vale sin firma", tipo="entero", unidad="%", minimo=0, maximo=100,
        defecto=VALE_PORCENTAJE_MAX_DEFECTO, endurece="bajar",
        descripcion="Un vale de más de este porcentaje de la línea que compensa pide firma."),
    dict(
        nombre="vale_importe_max", etiqueta="Importe máximo de un vale sin firma", tipo="dinero", unidad="EUR", minimo=Decimal("0.00"),
        defecto=VALE_IMPORTE_MAX_DEFECTO, endurece="bajar", regla="vale",
        descripcion="Un vale de más de este importe pide firma."),
    dict(
        nombre="vale_dias_caducidad", etiqueta="Caducidad de un vale", tipo="entero", unidad="días", minimo=30, maximo=1095,
        defecto=VALE_DIAS_CADUCIDAD_DEFECTO, endurece="bajar",
        descripcion="Días que vale un vale de compensación desde que se emite."),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return (
        "- Vales de compensación: si te quedas un producto con una molestia (un "
        "arañazo, un defecto menor), la tienda puede darte un vale para la tienda. Sin "
        f"aprobación, hasta el {valores['vale_porcentaje_max']} % de lo pagado por ese producto "
        f"y como mucho {dinero.eur(valores['vale_importe_max'])}, y un vale por persona cada "
        f"{VALE_VENTANA_DIAS} días; el vale caduca a los {valores['vale_dias_caducidad']} días."
    )
