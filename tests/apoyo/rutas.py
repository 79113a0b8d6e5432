"""Rutas del repositorio para las pruebas: la raíz, calculada en un solo sitio.

Las pruebas viven a distintas profundidades (``tests/<tipo>/``); ninguna calcula la raíz con
``Path(__file__).parent...`` por su cuenta, así que moverlas de carpeta no rompe nada.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RAIZ"]

RAIZ = Path(__file__).resolve().parents[2]
