"""Puertos: lo que una capa necesita de otra a la que no puede importar.

``herramientas/`` no importa ``politicas/`` (contratos de import-linter), pero la
herramienta ``consultar_politica`` debe devolver el texto de la política que vive allí.
El puerto es el contrato; ``politicas.PoliticaTienda`` lo cumple y el ensamblaje
(``agente.construir``) la pasa en ``herramientas.Dependencias(politica=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from nucleo.contexto import ContextoCliente

if TYPE_CHECKING:
    import psycopg

__all__ = ["CLAVE_EN_REVISION", "CLAVE_IMPOSIBLE", "FuentePolitica", "Revalidador", "texto_en_revision"]

# Entre la política y las herramientas: una llamada que la herramienta rechazará sea quien
# sea quien firme (unidades ya compensadas, pedido cancelado o sin entregar) no pide firma
# (nadie aprueba lo imposible) y su veredicto lo dice en ``umbrales[CLAVE_IMPOSIBLE]``, con
# la razón. La herramienta lo relee en su transacción: si al ejecutar ya fuera posible, no
# sale sin firma (``caja.libro.exigir_no_evaluada_imposible``).
CLAVE_IMPOSIBLE = "imposible"

# Otra solicitud del mismo cliente por las mismas unidades espera ya a un encargado (en
# cualquier conversación): esta no abre otra tarjeta; la herramienta dice que ya se revisa.
CLAVE_EN_REVISION = "en_revision"


def texto_en_revision(pedido: object) -> str:
    """Lo que lee el modelo (y cuenta al cliente) si ya hay una petición igual esperando."""
    return (
        f"ya hay una solicitud igual por estos productos del pedido {pedido} esperando la revisión "
        "de un encargado (la abriste en otra conversación); no se ha hecho nada ni se ha abierto "
        "otra, y te avisaremos por aquí en cuanto se decida. Dile al cliente que ya se está "
        "revisando; no la propongas otra vez"
    )


@runtime_checkable
class Revalidador(Protocol):
    """Vuelve a decidir la regla de una llamada dentro de la transacción de su efecto.

    ``herramientas/`` no importa ``politicas/``: ``politicas.PoliticaAprobacion`` lo cumple
    y el ensamblaje lo pasa en ``herramientas.Dependencias(revalidador=...)``.
    """

    def revalidar(
        self, conexion: psycopg.Connection, *, thread_id: str, tool_call_id: str, cliente_id: str
    ) -> None:
        """Toma el candado del cliente y, si la llamada salió sin firma, decide otra vez.

        Se llama con el pedido ya bloqueado, justo antes de escribir el efecto. Si con los
        hechos de ahora la regla pide firma, lanza ``NecesitaFirma`` (la transacción se
        deshace); si otra solicitud igual espera ya a un encargado, ``ErrorDominio`` con el
        texto para el cliente. Una llamada firmada (su veredicto pedía firma) no se revalida.
        """
        ...


@runtime_checkable
class FuentePolitica(Protocol):
    """La política de la tienda tal como la lee un cliente."""

    def texto_para_cliente(self, contexto: ContextoCliente) -> str:
        """La política de la tienda de ``contexto`` en texto llano, en español.

        Una tienda sin fila de política usa los valores por defecto; un error de base de
        datos se propaga (la herramienta no inventa condiciones).
        """
        ...
