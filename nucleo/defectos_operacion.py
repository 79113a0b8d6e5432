"""Lo que comparten las declaraciones: las filas de la matriz por defecto de sql/008 (las de
las operaciones de dinero) y cómo se lee un importe en el texto de espera del cliente."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["DOS_FIRMAS_POR_DEFECTO", "LIMITES_POR_DEFECTO", "importe_legible"]


# Las filas de la matriz por defecto de sql/008 (las dos reglas, iguales).
LIMITES_POR_DEFECTO = {"encargado": Decimal("300.00"), "gerente": Decimal("1000.00"), "regional": None}
DOS_FIRMAS_POR_DEFECTO = Decimal("500.00")


def importe_legible(args: Mapping[str, Any]) -> str | None:
    """El ``importe`` de los argumentos en euros («120,00 EUR»), o None si no se lee: un
    importe ilegible no debe romper el aviso al cliente."""
    try:
        return dinero.eur(dinero.importe(args.get("importe")))
    except Exception:
        return None
