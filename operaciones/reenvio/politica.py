"""La política del reenvío: sus valores por tienda (con dominio y defecto) y su frase para el cliente.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política. Los
defectos son los ``DEFAULT`` de ``sql/017_reenvio.sql``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["VALORES", "texto_cliente"]

# El valor de cada unidad que sale sin firma, y desde cuándo un pedido enviado cuenta como
# perdido (menos días = se reenvía antes: endurece al subir).
VALORES = (
    dict(
        nombre="limite_reenvio", etiqueta="Límite de reenvío sin firma", tipo="dinero", unidad="EUR",
        minimo=Decimal("0.00"), defecto=Decimal("50.00"), endurece="bajar", regla="reenvio",
        descripcion="Un reenvío de una unidad que vale más pide firma."),
    dict(
        nombre="dias_reparto_maximos", etiqueta="Días de reparto antes de dar un envío por perdido", tipo="entero",
        unidad="días", minimo=1, maximo=60, defecto=3, endurece="subir",
        descripcion="Días de reparto tras el envío; pasados, un pedido sin entregar cuenta como perdido."),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return (
        "- Reenvíos: si pasados "
        f"{valores['dias_reparto_maximos']} días desde que salió un pedido aún no lo has recibido, o te "
        "llega roto, se te vuelve a enviar sin ningún cargo desde la tienda; si cada unidad vale más de "
        f"{dinero.eur(valores['limite_reenvio'])} o ese producto ya se reenvió, necesita la "
        "aprobación de un encargado."
    )
