"""La política de la tienda: el único sitio de sus reglas, valores, textos y plazos.

- ``PoliticaAprobacion(pool=..., reglas=REGISTRO.reglas()).necesita_encargado``
  -> ``InterruptOnConfig.when``: ¿esta llamada espera la firma del encargado?
- ``DescripcionEncargado(pool=..., politica=...)`` -> ``InterruptOnConfig.description``
- ``PoliticaTienda(pool=...)``: el texto que lee el cliente (``consultar_politica``),
  vía el puerto ``nucleo.puertos.FuentePolitica``.
- ``DEFECTOS``: los valores de una tienda sin fila en ``politicas_tienda`` (los mismos
  que sus DEFAULT), incluido ``horas_caducidad``, el plazo de caducidad de una espera.
- ``REGLAS``: las reglas por nombre (``politicas/reglas/``); ``Veredicto``/``Autoridad``.
- ``leer_veredicto`` / ``veredictos_de_hilo``: los motivos guardados para la bandeja.

Trampa que condiciona todo: el ``when`` se vuelve a evaluar al reanudar y un ``False``
(o ``None``) entonces ejecuta la herramienta saltándose al encargado; por eso el primer
veredicto de cada ``(thread_id, tool_call_id)`` se guarda y es el que se devuelve siempre.
"""

from politicas.aprobacion import PoliticaAprobacion, hilo_de
from politicas.autoridad import Autoridad
from politicas.defectos import DEFECTOS
from politicas.descripcion import DescripcionEncargado
from politicas.reglas import REGLAS, Dictamen, Regla
from politicas.texto_cliente import PoliticaTienda, texto_politica
from politicas.veredicto import Veredicto, leer_veredicto, veredictos_de_hilo

__all__ = [
    "DEFECTOS",
    "REGLAS",
    "Autoridad",
    "DescripcionEncargado",
    "Dictamen",
    "PoliticaAprobacion",
    "PoliticaTienda",
    "Regla",
    "Veredicto",
    "hilo_de",
    "leer_veredicto",
    "texto_politica",
    "veredictos_de_hilo",
]
