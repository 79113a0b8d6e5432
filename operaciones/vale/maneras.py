"""Otras maneras de pedir un vale y de renunciar a él, para el modelo offline.

Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

TAMBIEN = (r"\b(?:descuento|rebaja)\b"
           r"|\bme\s+l[oa]s?\s+quedo\b(?=[^.?!]*\b(?:algo|compens\w*|descuento|rebaja|dar|deis|des|tendreis)\b)")
# «Prefiero que me devolváis el dinero», «mejor la devuelvo»: ya no quiere el vale.
RENUNCIA = r"\b(?:prefiero|mejor)\s+(?:devolverl[oa]s?|l[oa]s? devuelvo|que me devolvais el dinero|el reembolso)\b"
