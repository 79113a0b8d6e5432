"""Cuándo llega el dinero de un reembolso: el plazo típico de cada medio de pago.

El dinero vuelve al medio con el que se pagó el pedido (``pedidos.metodo_pago``,
sql/041_plazos_abono.sql). Cuánto tarda en verse en la cuenta del cliente no lo decide la
tienda sino el banco o la pasarela; cada tienda declara el plazo típico por medio en su
política (``politicas_tienda.plazo_abono_<medio>_dias``, con su dominio en
``politicas.valores``) y es lo que se le dice al cliente: «suele tardar hasta 10 días
hábiles». Aquí viven los medios, sus defectos (los mismos que los ``DEFAULT`` en SQL) y el
texto; ``herramientas/pedidos.py`` lo devuelve con el pedido y el modelo offline lo
contesta (``agente/modelo_offline/abono.py``).

Defectos (lo habitual en España): tarjeta, hasta 10 días hábiles (el banco emisor tarda
de 5 a 10); Bizum, hasta 2; transferencia, hasta 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["MEDIOS_PAGO", "PLAZO_ABONO_DEFECTO", "columna_plazo", "texto_plazo"]

# Medio de pago -> cómo lo nombra el cliente («vuelve a ...»).
MEDIOS_PAGO: Mapping[str, str] = MappingProxyType({
    "tarjeta": "la tarjeta con la que pagaste",
    "bizum": "tu Bizum",
    "transferencia": "la cuenta desde la que hiciste la transferencia",
})

# Días hábiles que suele tardar en verse el dinero, por medio (el DEFAULT de su columna).
PLAZO_ABONO_DEFECTO: Mapping[str, int] = MappingProxyType({"tarjeta": 10, "bizum": 2, "transferencia": 3})


def columna_plazo(medio: str) -> str:
    """La columna de ``politicas_tienda`` con el plazo de ``medio``."""
    if medio not in MEDIOS_PAGO:
        raise ValueError(f"medio de pago desconocido: {medio!r}")
    return f"plazo_abono_{medio}_dias"


def texto_plazo(dias: int) -> str:
    """«hasta 10 días hábiles», «1 día hábil»."""
    return "1 día hábil" if int(dias) == 1 else f"hasta {int(dias)} días hábiles"
