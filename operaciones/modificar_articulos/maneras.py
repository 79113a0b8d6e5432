"""Otras maneras de pedir otra talla o color de un artículo y de renunciar, para el modelo offline.

Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

# «lo quiero en talla L», «mejor una talla más», «en otro color», «la L en vez de la M».
TAMBIEN = (r"\b(?:en|una|otra)\s+talla\b|\btalla\s+(?:mas|menos)\b|\b(?:en|otro)\s+color\b"
           r"|\bla\s+(?:xxs|xs|s|m|l|xl|xxl)\s+en\s+(?:vez|lugar)\s+de\b")
# «Bueno, mejor dejadlo en la M», «al final me quedo con la talla que pedí».
RENUNCIA = (r"\b(?:mejor|al final|bueno)\W{0,3}(?:dejad|deja|dejalo|dejadlo|me quedo con)\s+"
            r"(?:(?:en|con)\s+)?(?:la|esa)\s+(?:misma\s+)?(?:talla|color|que (?:pedi|tengo))\b")
