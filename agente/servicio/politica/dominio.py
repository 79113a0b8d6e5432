"""El dominio de la política, para quien dibuja o valida sus formularios (la web, la CLI)
sin importar ``politicas`` (el servicio es su única puerta, contrato ``solo-el-servicio``
de ``pyproject.toml``): cada valor con su tipo y sus límites (``VALORES``), el patrón de
un importe (``PATRON_DINERO``) y el nombre de cada regla de la matriz (``NOMBRE_REGLA``).
"""

from __future__ import annotations

from politicas.gobierno import NOMBRE_REGLA
from politicas.valores import PATRON_DINERO, VALORES

__all__ = ["NOMBRE_REGLA", "PATRON_DINERO", "VALORES"]
