"""Las herramientas del agente: qué son (``registro``), lo que lee el modelo
(``envoltorios``) y las funciones de dominio que hacen el trabajo (``pedidos``,
``reembolsos``, ``sustituciones``) sobre la pasarela de pagos (``pasarela``).

Solo importa del núcleo (``agente.nucleo``); lo comprueban los contratos de import-linter.
"""

from __future__ import annotations

from langchain.tools import BaseTool
from psycopg_pool import ConnectionPool

# El puerto del núcleo, por envoltorios: el paquete raíz no importa de agente/ (contrato).
from herramientas.envoltorios import FuentePolitica
from herramientas.pasarela import (
    MovimientoPasarela,
    Pasarela,
    PasarelaSimulada,
    pasarela_desde_ajustes,
)
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


def crear_herramientas(
    *,
    pool: ConnectionPool,
    pasarela: Pasarela,
    registro: Registro = REGISTRO,
    politica: FuentePolitica | None = None,
) -> list[BaseTool]:
    """Las herramientas de ``registro`` atadas a ``pool`` y ``pasarela``, en su orden.

    ``politica`` (``politicas.PoliticaTienda``, la pasa ``agente.construir``) es lo que
    devuelve ``consultar_politica``; sin ella esa herramienta falla al llamarla.
    """
    return registro.construir(Dependencias(pool=pool, pasarela=pasarela, politica=politica))
