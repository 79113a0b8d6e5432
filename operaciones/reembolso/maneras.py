"""Cómo pide (o deja de pedir) el cliente un reembolso, además del patrón de la operación.

«Mejor me lo quedo», «al final me la quedo»: quien iba a devolver algo y se lo queda ya
no quiere el reembolso. «Sin devolverlo» o «no quiero el reembolso» los lee ``matices``
(un negador delante de la palabra), igual para cualquier operación. Expresiones sobre el
texto normalizado (minúsculas, sin tildes); ``agente.modelo_offline.lectura`` las junta con
el patrón de la declaración. Sin imports: se leen al cargar el modelo offline.
"""

__all__ = ["RENUNCIA", "TAMBIEN"]

# «Quiero mi dinero», «me abonáis el importe», «recuperar lo que pagué», «me dais el dinero».
TAMBIEN = (r"\b(?:abon\w*|reintegr\w*)\b(?!\s+(?:de|el)\s+transporte)"
           r"|\brecuper\w*\s+(?:lo que (?:pague|pagamos|me cost\w*|cost\w*)|el dinero|mi dinero|el importe)"
           r"|\b(?:mi|el|nuestro)\s+dinero\b(?!\s+(?:del?\s+)?(?:transporte|envio))"
           r"|\b(?:la|mi)\s+pasta\b")
RENUNCIA = (r"\b(?:mejor|al final|bueno|pues|no|total)\W{0,3}(?:me l[oa]s? quedo|me quedo con (?:el|ella|ello|ellos|ellas)\b"
            r"|me l[oa]s? voy a quedar)")
