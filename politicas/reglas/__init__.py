"""Las reglas de aprobación, una por módulo, por el nombre que usa el registro.

``REGLAS["reembolso"]`` decide ``reembolsar``, etc.: la política elige la regla por el
``regla`` de cada herramienta del registro, nunca por el nombre de la herramienta.

Añadir una regla: un módulo aquí con su ``Regla`` (hechos que lee y ``decidir``), una
entrada en ``REGLAS`` (``lista.py``), y ``regla="<nombre>"`` en la herramienta del registro.
"""

from __future__ import annotations

from politicas.reglas.base import MOTIVO_PEDIDO_NO_ENCONTRADO, Dictamen, Regla
from politicas.reglas.consulta import MOTIVO_CONSULTA
from politicas.reglas.lista import REGLAS

__all__ = [
    "MOTIVO_CONSULTA",
    "MOTIVO_PEDIDO_NO_ENCONTRADO",
    "REGLAS",
    "Dictamen",
    "Regla",
]
