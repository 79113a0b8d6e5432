"""Otras maneras de pedir un reenvío y de renunciar a él, para el modelo offline.

Expresiones sobre el texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura``
las junta con el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

# «Aún no he recibido el pedido»: como «no me ha llegado». No «no he recibido el reembolso».
TAMBIEN = (r"\bno (?:he|hemos) recibido (?:todavia |aun )?(?:nada del?|(?:el|mi|nuestro) (?:pedido|paquete|envio))\b"
           r"|\bsin (?:aparecer|llegar)\b|\bni rastro\b|\bno (?:ha |han )?(?:aparecido|aparece|venido nadie)\b"
           r"|\bno ha venido\b|\b(?:todavia|aun) no (?:l[oa]s? )?(?:tengo|tenemos|he recibido)\b"
           r"(?!\s+(?:el|mi|ningun) (?:reembolso|dinero|vale|abono))"
           r"|\bquiero (?:otr[oa]s?|un[oa]) (?:igual|nuev[oa])\w*\b")
# «Mejor espero», «ya me ha llegado»: ya no quiere el reenvío.
RENUNCIA = r"\b(?:prefiero|mejor) esperar\b|\bya (?:me |nos )?(?:ha|han) llegado\b|\bacaba de llegar\b"
