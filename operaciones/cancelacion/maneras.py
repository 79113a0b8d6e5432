"""Otras maneras de pedir una cancelación y de renunciar a ella, para el modelo offline.

Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

TAMBIEN = (r"\bda(?:d|r)?(?:lo|la|me)?(?:lo|la)?\s+de\s+baja\b|\bno\s+(?:me|nos)\s+(?:lo\s+|la\s+)?(?:mandeis|envieis|mandes|envies)\b"
           r"|\bpaso del pedido\b")
# «Que siga adelante», «mejor lo mantengo»: ya no quiere cancelar («no lo canceles» lo lee matices).
RENUNCIA = r"\bque siga (?:en marcha|adelante)\b|\bmejor (?:lo |la )?mantengo\b|\bmejor (?:que )?(?:me )?llegue\b"
