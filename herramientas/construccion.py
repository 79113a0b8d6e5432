"""Las herramientas del registro atadas a la base, la pasarela y la política de la tienda."""

from __future__ import annotations

from langchain.tools import BaseTool
from psycopg_pool import ConnectionPool

from caja.pasarela import Pasarela

# El puerto del núcleo, por envoltorios: el paquete raíz no importa de agente/ (contrato).
from herramientas.envoltorios import FuentePolitica, Revalidador
from herramientas.registro import REGISTRO, Dependencias, Registro

__all__ = ["crear_herramientas"]


def crear_herramientas(
    *,
    pool: ConnectionPool,
    pasarela: Pasarela,
    registro: Registro = REGISTRO,
    politica: FuentePolitica | None = None,
    revalidador: Revalidador | None = None,
) -> list[BaseTool]:
    """Las herramientas de ``registro`` atadas a ``pool`` y ``pasarela``, en su orden.

    ``politica`` (``politicas.PoliticaTienda``, la pasa ``agente.construir``) es lo que
    devuelve ``consultar_politica``; sin ella esa herramienta falla al llamarla.
    ``revalidador`` (``politicas.PoliticaAprobacion``) vuelve a decidir cada efecto en su
    transacción (``caja.libro.exigir_veredicto_vigente``).
    """
    return registro.construir(
        Dependencias(pool=pool, pasarela=pasarela, politica=politica, revalidador=revalidador)
    )
