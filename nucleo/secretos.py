"""Cuándo un ``AGENTE_SECRETO`` es bueno, y uno nuevo que lo es.

Un token HS256 es tan fuerte como su secreto: con uno corto o repetitivo, cualquiera
que lo adivine fabrica tokens de encargado. Fuera del modo demo el servidor no arranca
con uno malo (``Ajustes.comprobar_secreto``). La medida es deliberadamente simple y conservadora:
al menos 32 bytes, sin espacios, con variedad (caracteres distintos) y con al menos 128
bits estimados por la entropía de Shannon de sus caracteres. ``secrets.token_hex(32)``
(64 caracteres hexadecimales, ~250 bits estimados) la pasa siempre; «aaaa...» o «abab...»
no. La trampa: la estimación mide la variedad del texto, no cómo se generó; una frase
larga y conocida puede pasarla. Por eso el mensaje de error sugiere ``agente secreto``.
"""

from __future__ import annotations

import math
import secrets
from collections import Counter

__all__ = ["MIN_BITS", "MIN_BYTES", "MIN_DISTINTOS", "defecto_del_secreto", "secreto_nuevo"]

MIN_BYTES = 32
MIN_DISTINTOS = 10
MIN_BITS = 128


def _bits_estimados(secreto: str) -> float:
    total = len(secreto)
    cuentas = Counter(secreto)
    return -sum(n * math.log2(n / total) for n in cuentas.values())


def _periodico(secreto: str) -> bool:
    """``True`` si es un bloque más corto repetido entero («abcabcabc»)."""
    return (secreto + secreto).find(secreto, 1) < len(secreto)


def defecto_del_secreto(secreto: str | None, *, de_demo: str | None = None) -> str | None:
    """Por qué ``secreto`` no vale (una frase en español), o ``None`` si vale."""
    if not secreto:
        return "está vacío"
    if de_demo is not None and secreto == de_demo:
        return "es el de la demo, que es público"
    if any(c.isspace() for c in secreto):
        return "contiene espacios o saltos de línea (¿se copió mal?)"
    largo = len(secreto.encode("utf-8"))
    if largo < MIN_BYTES:
        return f"es demasiado corto ({largo} bytes; hacen falta al menos {MIN_BYTES})"
    if len(set(secreto)) < MIN_DISTINTOS or _periodico(secreto):
        return "es repetitivo (un carácter o un bloque repetido)"
    bits = _bits_estimados(secreto)
    if bits < MIN_BITS:
        return f"tiene poca variedad (unos {bits:.0f} bits estimados; hacen falta {MIN_BITS})"
    return None


def secreto_nuevo() -> str:
    """Un secreto bueno: 32 bytes aleatorios en hexadecimal (64 caracteres)."""
    return secrets.token_hex(32)
