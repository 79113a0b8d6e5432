"""Otras maneras de pedir un cambio de dirección y de renunciar a él, para el modelo offline.

Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

_VIAS = r"(?:calle|c/|avenida|avda|plaza|paseo|camino|carretera|ronda|travesia|glorieta|carrer|rua)\b"
# «Mejor que me llegue a Barcelona: Calle..., 08001 Barcelona», «enviádmelo a ...»: una corrección
# del destino es un cambio de dirección si después viene un código postal.
TAMBIEN = (r"\b(?:me|nos|lo|la|los|las)\s+(?:llegue\w*|envie\w*|mande\w*|lleve\w*)\s+a\b(?=[^.!?]*?\b\d{5}\b)"
           r"|\b(?:envia|manda|lleva)d?(?:me|nos)?(?:lo|la|los|las)\s+a\b(?=[^.!?]*?\b\d{5}\b)"
           r"|\b(?:mand|envi|llev|pon|remit)\w*(?:\s+[\w-]+){0,6}?\s+(?:(?:a|en)\s+)?(?:la\s+)?" + _VIAS +
           r"|\bvaya\w*\s+a\s+(?:la\s+)?" + _VIAS + r"|\brecibir\w*\s+en\b(?=[^.!?]*?\b\d{5}\b)"
           r"|\bcambi\w*\s+(?:\w+\s+){0,2}?donde\s+(?:me\s+|nos\s+)?(?:lo\s+|la\s+)?(?:entreg|llev|mand|envi)\w*")
RENUNCIA = r"\b(?:mejor|al final|bueno)\W{0,3}(?:dejad|deja|dejalo|dejadlo) (?:la|esa) (?:misma )?direccion\b"
