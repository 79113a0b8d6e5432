"""Las herramientas del agente: qué son (``registro``), lo que lee el modelo
(``envoltorios``) y las funciones de dominio que hacen el trabajo (``pedidos``,
``reembolsos``, ``sustituciones``) sobre la pasarela de pagos (``pasarela``), el libro
de compensaciones por unidad (``libro``), la cola de movimientos de reembolsos y cobros
(``movimientos``) y los avisos al cliente de lo que el sistema completa (``avisos``);
``construccion`` las ata a la base y la pasarela.

Solo importa del núcleo (``nucleo``); lo comprueban los contratos de import-linter.
"""

from caja.pasarela import (
    MovimientoPasarela,
    Pasarela,
    PasarelaSimulada,
)
from caja.pasarelas import pasarela_desde_ajustes
from herramientas.construccion import crear_herramientas
from herramientas.registro import REGISTRO, Dependencias, Herramienta, Registro

__all__ = [
    "REGISTRO",
    "Dependencias",
    "Herramienta",
    "MovimientoPasarela",
    "Pasarela",
    "PasarelaSimulada",
    "Registro",
    "crear_herramientas",
    "pasarela_desde_ajustes",
]
