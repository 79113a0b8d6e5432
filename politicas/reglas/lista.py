"""La tabla de reglas por nombre: la única lista de reglas de aprobación."""

from __future__ import annotations

from collections.abc import Mapping

from operaciones import carpetas
from politicas.reglas.base import Regla
from politicas.reglas.consulta import CONSULTA

__all__ = ["REGLAS"]

# La de las consultas y la ``REGLA`` de cada carpeta de ``operaciones/``.
# Perezosa: una regla de carpeta importa este paquete (``operaciones/carpetas.py``).
REGLAS: Mapping[str, Regla] = carpetas.Perezosa(lambda: {
    r.nombre: r for r in (CONSULTA,
                          *(modulo.REGLA for modulo in carpetas.piezas("regla")))
})
