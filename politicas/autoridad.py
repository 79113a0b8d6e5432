"""Quién puede firmar lo que la política para: la autoridad que exige un veredicto.

Hoy toda firma es la de un encargado (una); ``autoridad_requerida`` es el único sitio
donde eso se decide, con el dictamen de la regla y los hechos (umbrales de la tienda)
a mano para reglas por tramos («más de 500 EUR, dos encargados»).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agente.nucleo import dinero
from politicas.reglas.base import Dictamen

__all__ = ["ROL_ENCARGADO", "Autoridad", "autoridad_requerida"]

ROL_ENCARGADO = "encargado"


@dataclass(frozen=True)
class Autoridad:
    """La firma que exige un veredicto.

    ``importe``: el dinero que autoriza (el reembolso, la diferencia de un cambio), o
    None si no hay importe o no se conoce. ``firmas``: cuántas firmas distintas.
    ``rol_minimo``: el rol mínimo de quien firma.
    """

    importe: Decimal | None
    firmas: int = 1
    rol_minimo: str = ROL_ENCARGADO

    def __post_init__(self) -> None:
        if self.importe is not None and dinero.importe_o_none(self.importe) != self.importe:
            raise ValueError(f"importe de autoridad no válido: {self.importe!r}")
        if isinstance(self.firmas, bool) or not isinstance(self.firmas, int) or self.firmas < 1:
            raise ValueError(f"firmas debe ser un entero >= 1: {self.firmas!r}")
        if not self.rol_minimo:
            raise ValueError("la autoridad necesita un rol mínimo")


def autoridad_requerida(dictamen: Dictamen, hechos: Mapping[str, Any]) -> Autoridad | None:
    """La autoridad que exige ``dictamen``; None si no pide firma."""
    del hechos  # sin tramos todavía: toda firma es una de encargado
    if not dictamen.motivos:
        return None
    return Autoridad(importe=dictamen.importe)
