"""Las filas de la matriz por defecto de sql/008 que comparten las operaciones de dinero."""

from __future__ import annotations

from decimal import Decimal

__all__ = ["DOS_FIRMAS_POR_DEFECTO", "LIMITES_POR_DEFECTO"]

# Las filas de la matriz por defecto de sql/008 (las dos reglas, iguales).
LIMITES_POR_DEFECTO = {"encargado": Decimal("300.00"), "gerente": Decimal("1000.00"), "regional": None}
DOS_FIRMAS_POR_DEFECTO = Decimal("500.00")
