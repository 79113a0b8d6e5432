"""Puertos: lo que una capa necesita de otra a la que no puede importar.

``herramientas/`` no importa ``politicas/`` (contratos de import-linter), pero la
herramienta ``consultar_politica`` debe devolver el texto de la política que vive allí.
El puerto es el contrato; ``politicas.PoliticaTienda`` lo cumple y el ensamblaje
(``agente.construir``) la pasa en ``herramientas.Dependencias(politica=...)``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agente.nucleo.contexto import ContextoCliente

__all__ = ["CLAVE_IMPOSIBLE", "FuentePolitica"]

# Entre la política y las herramientas: una llamada que la herramienta rechazará sea quien
# sea quien firme (unidades ya compensadas, pedido cancelado o sin entregar) no pide firma
# (nadie aprueba lo imposible) y su veredicto lo dice en ``umbrales[CLAVE_IMPOSIBLE]``, con
# la razón. La herramienta lo relee en su transacción: si al ejecutar ya fuera posible, no
# sale sin firma (``herramientas.libro.exigir_no_evaluada_imposible``).
CLAVE_IMPOSIBLE = "imposible"


@runtime_checkable
class FuentePolitica(Protocol):
    """La política de la tienda tal como la lee un cliente."""

    def texto_para_cliente(self, contexto: ContextoCliente) -> str:
        """La política de la tienda de ``contexto`` en texto llano, en español.

        Una tienda sin fila de política usa los valores por defecto; un error de base de
        datos se propaga (la herramienta no inventa condiciones).
        """
        ...
