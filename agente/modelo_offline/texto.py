"""El texto del cliente: normalizarlo, limpiarlo y reconocer pedidos, SKU y productos.

La base de los demás módulos del modelo offline (no importa ninguno): ``lectura`` lo usa
para trocear el mensaje y cada módulo de operación, para sus frases.

Trampa: ``normalizar`` conserva la longitud, así que los índices que da una expresión
sobre el texto normalizado valen en el original.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from langchain_core.messages import BaseMessage

__all__ = [
    "PALABRAS_VACIAS",
    "RE_PEDIDO",
    "RE_SKU",
    "coinciden",
    "limpiar_cola",
    "normalizar",
    "palabras",
    "puntuacion",
    "texto_de",
]

RE_PEDIDO = re.compile(r"\bP-\d{8}-\d{4}\b", re.IGNORECASE)
RE_SKU = re.compile(r"\b[A-Z]{3}-\d{3}\b", re.IGNORECASE)

# Palabras de los nombres de producto que no sirven para distinguir una línea de otra.
PALABRAS_VACIAS = frozenset(
    {"para", "juego", "pack", "tazas", "con", "sin", "unidad", "unidades", "modelo"}
)


def normalizar(texto: str) -> str:
    """Minúsculas y sin tildes, con la MISMA longitud que el original (índices válidos).

    Carácter a carácter: ``"İ".lower()`` da dos caracteres y ``"𝕊"`` solo es «s» tras NFKD.
    """
    if texto.isascii():
        return texto.lower()
    return "".join(map(_caracter_normal, texto))


@functools.lru_cache(maxsize=4096)
def _caracter_normal(caracter: str) -> str:
    descompuesto = unicodedata.normalize("NFKD", caracter.lower())
    base = "".join(c for c in descompuesto if not unicodedata.combining(c)).lower()
    return base[:1] if base else " "


def palabras(texto: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", normalizar(texto))


def coinciden(a: str, b: str) -> bool:
    # Prefijo común para aceptar plurales y variantes ("cafetera"/"cafeteras").
    if a == b:
        return True
    corta, larga = sorted((a, b), key=len)
    return len(corta) >= 5 and larga.startswith(corta)


def puntuacion(nombre: str, texto: str) -> int:
    """Cuántas palabras distintivas del ``nombre`` de un producto aparecen en ``texto``."""
    palabras_texto = set(palabras(texto))
    puntos = 0
    for palabra in set(palabras(nombre)):
        if len(palabra) < 4 or palabra.isdigit() or palabra in PALABRAS_VACIAS:
            continue
        if any(coinciden(palabra, p) for p in palabras_texto):
            puntos += 1
    return puntos


def texto_de(mensaje: BaseMessage) -> str:
    """El texto de un mensaje, también si su contenido es una lista de bloques."""
    contenido = mensaje.content
    if isinstance(contenido, str):
        return contenido
    partes = []
    for bloque in contenido:
        if isinstance(bloque, str):
            partes.append(bloque)
        elif isinstance(bloque, dict) and isinstance(bloque.get("text"), str):
            partes.append(bloque["text"])
    return "".join(partes)


def limpiar_cola(texto: str) -> str:
    """Quita la puntuación final y una conjunción colgando ("... porque gotea y")."""
    anterior = None
    while anterior != texto:
        anterior = texto
        texto = re.sub(r"[\s,.;:!?¡¿]+$", "", texto)
        texto = re.sub(r"\s+(?:y|e|pero)$", "", texto, flags=re.IGNORECASE)
    return texto.strip()
