"""Las reglas del texto que lee una persona (cliente o personal de la tienda).

``defectos(texto, para=..., frase=...)`` devuelve lo que falla (una lista vacía: nada). Las
reglas son las de la issue de los textos: sin claves internas, SKUs ni valores de enum, sin
importes negativos, sin máscaras de formato, sin tercera persona para el cliente (solo en lo
que lee el cliente), con punto final (las frases; una etiqueta no lo lleva), con el plural
que toca y sin inglés. Las usa el barrido ``tests/unidad/test_textos_persona.py``.
"""

from __future__ import annotations

import re

__all__ = ["CLIENTE", "IDENTIFICADORES_INTERNOS", "PERSONAL", "defectos", "negativa_sin_salida"]

CLIENTE = "cliente"
PERSONAL = "personal"

_URL = re.compile(r"https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_SNAKE = re.compile(r"(?<![\w/.-])[a-z]+(?:_[a-z0-9]+)+(?![\w/])")
_SKU = re.compile(r"\b[A-Z]{3}-\d{3}\b")
_NEGATIVO = re.compile(r"(?<![\w])[-−]\s?\d[\d.]*(?:,\d+)?\s?(?:EUR|€)")
_MASCARA = re.compile(r"AAAA|NNNN|\bDD/MM\b|\bMM/AA\b|\bXXX+\b|\bP-\w*A{4}")
_TERCERA = re.compile(r"\b(?:el|al|del|los|al propio|un|una|la) client[ea]s?\b", re.IGNORECASE)
_CIERRE = (".", "?", "!", "…", ".»", "?»", "!»", ".)")
_PLURAL_CON_UNO = re.compile(r"(?<![\d.,])\b1 ([a-záéíóúñ]+s)\b")
_SINGULAR_CON_VARIOS = re.compile(
    r"(?<![\d.,])\b(?:[02-9]|\d{2,}) (día|vale|pedido|hora|unidad|devolución|reembolso|cambio|mensaje|"
    r"operación|producto|línea|semana|mes)\b(?!\s+de\s)")
# Palabras en -s que van en singular con «1».
_NO_PLURALES = frozenset({"mes", "más", "tras", "vez", "es", "pues", "antes", "después", "menos",
                          "bis", "gas", "país", "lunes", "martes", "miércoles", "jueves", "viernes"})
# Inglés frecuente que no es español (y lo que Python escribe al formatear un vacío).
_INGLES = frozenset({
    "the", "and", "of", "to", "is", "are", "with", "for", "not", "failed", "order", "refund",
    "please", "invalid", "missing", "required", "field", "user", "request", "none", "null",
    "true", "false", "unknown", "approve", "reject", "edit", "respond", "pending",
    "approved", "rejected", "status", "amount", "customer", "manager", "store", "your", "you",
    "this", "that", "cannot", "must", "should", "value",
})
# Identificadores del producto que, sin guion bajo, parecen palabras (valores de enum, reglas).
IDENTIFICADORES_INTERNOS = frozenset({
    "sustitucion", "cancelacion", "direccion", "reenvio", "devolucion", "consulta_encargado",
    "no_llego", "llego_roto", "emitido_pendiente", "renunciada", "approve", "reject", "respond",
})


def _sin_urls(texto: str) -> str:
    return _URL.sub(" ", texto)


def defectos(texto: str, *, para: str = CLIENTE, frase: bool = True) -> list[str]:
    """Lo que incumple ``texto`` (vacía si nada). ``para``: ``CLIENTE`` o ``PERSONAL``;
    ``frase``: es una frase (lleva punto final), no una etiqueta."""
    fallos: list[str] = []
    if not isinstance(texto, str) or not texto.strip():
        return ["texto vacío"]
    limpio = _sin_urls(texto)
    for clave in _SNAKE.findall(limpio):
        fallos.append(f"clave interna «{clave}»")
    for sku in _SKU.findall(limpio):
        fallos.append(f"SKU «{sku}»")
    palabras = re.findall(r"[A-Za-záéíóúñÁÉÍÓÚÑü_:]+", limpio)
    for palabra in palabras:
        if palabra.lower().strip(":") in IDENTIFICADORES_INTERNOS:
            fallos.append(f"valor interno «{palabra}»")
    for negativo in _NEGATIVO.findall(limpio):
        fallos.append(f"importe negativo «{negativo}»")
    for mascara in _MASCARA.findall(limpio):
        fallos.append(f"máscara de formato «{mascara}»")
    if para == CLIENTE:
        for tercera in _TERCERA.findall(limpio):
            fallos.append(f"tercera persona para el cliente «{tercera}»")
    if frase and not texto.rstrip().endswith(_CIERRE):
        fallos.append(f"sin punto final: «…{texto.rstrip()[-30:]}»")
    for plural in _PLURAL_CON_UNO.findall(limpio):
        if plural.lower() not in _NO_PLURALES:
            fallos.append(f"plural con uno: «1 {plural}»")
    for singular in _SINGULAR_CON_VARIOS.finditer(limpio):
        fallos.append(f"singular con varios: «{singular.group(0)}»")
    for palabra in palabras:
        if palabra.lower() in _INGLES:
            fallos.append(f"inglés «{palabra}»")
    return fallos


# Una negativa al cliente: la política no deja, la tienda no aprueba, no se encuentra o no se puede.
_NEGATIVA = re.compile(
    r"\bno (?:se )?(?:puedo|puede|pueden|se puede|he podido|hemos podido|es posible|encuentro|"
    r"he encontrado|ha aprobado|se cancela|tiene importe)\b|\bno hay ninguna alternativa\b|"
    r"\bno he tramitado\b|\bno se ha podido\b", re.IGNORECASE)
# Lo que le dice qué puede hacer después (una pregunta también lo hace).
_SALIDA = re.compile(
    r"¿|\b(?:puedes|podemos|puedo|podrás|dime|dímelo|escr[ií]b\w*|te avis\w*|avisaremos|prueba|"
    r"vuelve a|vuelvas a|si quieres|si lo prefieres|si necesitas|revisa|responde|contacta|"
    r"te propongo|cuando te llegue|cuando llegue|se completará|ponte en contacto|pide|pídele|"
    r"rechazar la entrega|devolverlo|más tarde|otra vez|de nuevo|lo vemos|lo revisamos|te responderá|pregúntamelo)\b",
    re.IGNORECASE)


def negativa_sin_salida(texto: str) -> bool:
    """¿``texto`` niega algo al cliente sin decirle qué puede hacer después?"""
    if not _NEGATIVA.search(texto):
        return False
    return not _SALIDA.search(_NEGATIVA.sub(" ", texto))
