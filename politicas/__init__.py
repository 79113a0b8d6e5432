"""Política de aprobación: cuándo una llamada necesita la firma del encargado y qué lee él.

- ``PoliticaAprobacion(pool=...).necesita_encargado`` -> ``InterruptOnConfig.when``
- ``DescripcionEncargado(pool=...)`` -> ``InterruptOnConfig.description``
- ``leer_veredicto`` / ``veredictos_de_hilo`` -> motivos guardados para la bandeja y la API

Trampa que condiciona todo: el ``when`` se vuelve a evaluar al reanudar y un ``False``
(o ``None``) entonces ejecuta la herramienta saltándose al encargado; por eso el primer
veredicto de cada ``(thread_id, tool_call_id)`` se guarda y es el que se devuelve siempre.
"""

from politicas.aprobacion import (
    HERRAMIENTAS_CON_FIRMA,
    HERRAMIENTAS_LECTURA,
    UMBRALES_POR_DEFECTO,
    PoliticaAprobacion,
    Veredicto,
    hilo_de,
    importe_de,
    leer_veredicto,
    veredictos_de_hilo,
)
from politicas.descripcion import DescripcionEncargado, eur

__all__ = [
    "HERRAMIENTAS_CON_FIRMA",
    "HERRAMIENTAS_LECTURA",
    "UMBRALES_POR_DEFECTO",
    "DescripcionEncargado",
    "PoliticaAprobacion",
    "Veredicto",
    "eur",
    "hilo_de",
    "importe_de",
    "leer_veredicto",
    "veredictos_de_hilo",
]
