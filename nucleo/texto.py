"""Textos que entran al producto: el carácter nulo (U+0000) no cabe en PostgreSQL.

``text`` y ``jsonb`` de PostgreSQL rechazan U+0000 (``DataError``): un texto así llegaría a
la base y daría un 500. Se rechaza en la puerta (la web: ``agente.web.infra.texto_seguro``; quien
reciba texto por otra vía puede usar ``rechazar_nulos``) con un error del dominio, 422.
"""

from __future__ import annotations

from typing import Any

from nucleo.errores import TextoNoValido

__all__ = ["NULO", "contiene_nulo", "rechazar_nulos"]

NULO = "\x00"


def contiene_nulo(valor: Any) -> bool:
    """``True`` si algún texto de ``valor`` (claves y valores, a cualquier profundidad) lo lleva."""
    pendientes = [valor]
    while pendientes:
        actual = pendientes.pop()
        if isinstance(actual, str):
            if NULO in actual:
                return True
        elif isinstance(actual, dict):
            pendientes.extend(actual.keys())
            pendientes.extend(actual.values())
        elif isinstance(actual, list | tuple):
            pendientes.extend(actual)
    return False


def rechazar_nulos(valor: Any, *, campo: str = "texto") -> None:
    """``TextoNoValido`` (422) si ``valor`` contiene el carácter nulo."""
    if contiene_nulo(valor):
        raise TextoNoValido(f"{campo}: no puede contener el carácter nulo (\\u0000)", campo=campo)
