"""Las reglas de aprobación, una por módulo, por el nombre que usa el registro.

``REGLAS["reembolso"]`` decide ``reembolsar``, etc.: la política elige la regla por el
``regla`` de cada herramienta del registro, nunca por el nombre de la herramienta.

Añadir una regla: un módulo aquí con su ``Regla`` (hechos que lee y ``decidir``), una
entrada en ``REGLAS``, y ``regla="<nombre>"`` en la herramienta del registro.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from politicas.reglas.base import MOTIVO_PEDIDO_NO_ENCONTRADO, Dictamen, Regla
from politicas.reglas.cancelacion import CANCELACION
from politicas.reglas.consulta import CONSULTA, MOTIVO_CONSULTA
from politicas.reglas.direccion import DIRECCION
from politicas.reglas.reembolso import MOTIVO_IMPORTE_NO_VALIDO, REEMBOLSO
from politicas.reglas.reenvio import REENVIO
from politicas.reglas.sustitucion import SUSTITUCION
from politicas.reglas.vale import VALE

__all__ = [
    "MOTIVO_CONSULTA",
    "MOTIVO_IMPORTE_NO_VALIDO",
    "MOTIVO_PEDIDO_NO_ENCONTRADO",
    "REGLAS",
    "Dictamen",
    "Regla",
]

REGLAS: Mapping[str, Regla] = MappingProxyType({r.nombre: r for r in (REEMBOLSO, SUSTITUCION, CONSULTA, CANCELACION, REENVIO, VALE, DIRECCION)})
