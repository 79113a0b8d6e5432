"""Otras maneras de pedir un cambio de producto sin decir «cambiar», para el modelo offline.

«¿Me la podéis dar por algo más económico?», «prefiero una que salga más barata», «otra
cafetera en lugar de esta», «que sea la CAF-004»: quiere otro producto en su lugar. La
preferencia de precio o el SKU los lee ``operaciones.sustitucion.frases.leer_deseo``.
Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

_PRECIO = r"(?:mas\s+)?(?:barat\w*|economic\w*|car[ao]s?|menos|igual\w*|lo mismo)"
TAMBIEN = (r"\b(?:dar|dais|deis|dad|das|dariais)(?:me|nos)?(?:l[oa]s?)?\s+(?:[\w-]+\s+){0,3}?por\s+(?:algo|otr[oa]|un[oa]|el|la)\b"
           rf"|\b(?:otr[oa]|un[oa]|algo)\s+(?:[\w-]+\s+){{0,2}}?que\s+(?:salga|cueste|valga|sea)\s+{_PRECIO}"
           r"|\botr[oa]\s+[a-z]+\s+en\s+(?:lugar|vez)\s+de\b"
           r"|\bque\s+(?:[\w-]+\s+){0,5}?sea\s+(?:la|el)\s+[a-z]{3}-\d{3}\b")
# Sin renuncia propia: «no, déjalo» a una propuesta la lee ``paso.respuesta``.
RENUNCIA = ""
