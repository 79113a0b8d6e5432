"""El dinero del producto: un único sitio para leer, redondear, comparar y escribir euros.

Todo importe es un ``Decimal`` de céntimos que cabe en ``numeric(12,2)``. Contrato:

- ``importe(valor)`` lee lo que escriben un modelo, un encargado o un cliente de la API
  (``Decimal``, ``int``, ``float`` o texto con punto decimal y cifras ASCII, ``"120.00"``;
  no ``"120,00"`` ni ``"1_000"``) y **nunca redondea**: más de dos decimales, no finito,
  cero, negativo o fuera de ``numeric(12,2)`` es ``ImporteNoValido`` (422). Trampa: ``Decimal("10.009")
  .quantize(...)`` daría 10,01 sin avisar; por eso aquí no hay ``quantize`` de entrada.
- ``importe_escrito(texto)`` es lo que teclea una persona (CLI, campo de la bandeja): coma
  o punto decimal (``"300,50"``, ``"300.50"``, ``"1.234,50"``). Solo para personas: el
  modelo y la API siguen con ``importe`` (un «1,000» de un modelo no puede leerse como 1).
- ``importe_o_none`` es lo mismo sin excepción (la política cierra hacia el lado seguro).
- ``diferencia(valor)`` lee un importe con signo (diferencias de precio): admite cero y
  negativos, el resto de reglas igual.
- ``texto(d)`` es el formato de JSON y de la base (``"1234.50"``); ``eur(d)`` el que lee
  una persona (``"1.234,50 EUR"``, ``"-90,10 EUR"``; ``signo=True`` añade ``+``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from nucleo.errores import ImporteNoValido

__all__ = [
    "CENTIMO",
    "CERO",
    "MAXIMO",
    "cuantizar",
    "diferencia",
    "eur",
    "importe",
    "importe_escrito",
    "importe_o_none",
    "sumar",
    "texto",
]

CENTIMO = Decimal("0.01")
CERO = Decimal("0.00")
MAXIMO = Decimal("9999999999.99")  # el mayor valor de numeric(12,2)
# Un número escrito «normal»: cifras ASCII, punto decimal, signo y exponente opcionales.
# Decimal() aceptaría además "1_000" y cifras de otras escrituras ("١٢"): aquí no.
_NUMERO = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)


def _leer(valor: Any) -> Decimal:
    """El número tal cual, sin redondear; ``ImporteNoValido`` si no es un número finito."""
    if isinstance(valor, bool) or valor is None:
        raise ImporteNoValido(f"el importe «{valor}» no es un número válido")
    if isinstance(valor, Decimal):
        numero = valor
    else:
        # float por su repr más corta: 10.009 -> "10.009" (y se rechaza), nunca 10.0089999...
        crudo = repr(valor) if isinstance(valor, float) else str(valor).strip()
        if not _NUMERO.fullmatch(crudo):
            raise ImporteNoValido(f"el importe «{valor}» no es un número válido")
        try:
            numero = Decimal(crudo)
        except (InvalidOperation, ValueError):
            raise ImporteNoValido(f"el importe «{valor}» no es un número válido") from None
    if not numero.is_finite():
        raise ImporteNoValido(f"el importe «{valor}» no es un número válido")
    if _decimales(numero) > 2:
        raise ImporteNoValido(f"el importe {valor} tiene más de dos decimales")
    if abs(numero) > MAXIMO:
        raise ImporteNoValido(f"el importe {valor} es demasiado grande")
    return cuantizar(numero)


def _decimales(numero: Decimal) -> int:
    exponente = numero.normalize().as_tuple().exponent
    return -exponente if isinstance(exponente, int) and exponente < 0 else 0


def importe(valor: Any) -> Decimal:
    """Un importe a pagar o cobrar: > 0, como mucho dos decimales, dentro de numeric(12,2)."""
    numero = _leer(valor)
    if numero <= 0:
        raise ImporteNoValido(f"el importe {eur(numero)} no es válido: debe ser mayor que cero")
    return numero


# «1.234,50»: puntos de miles (grupos de tres) y coma decimal.
_MILES_Y_COMA = re.compile(r"[+-]?\d{1,3}(\.\d{3})+,\d+", re.ASCII)


def importe_escrito(valor: Any) -> Decimal:
    """Un importe que escribe una persona, con coma o punto decimal; las reglas de ``importe``.

    «300,50» y «300.50» son 300,50; «1.234,50» es 1.234,50; «1,234.50» (coma de miles) y
    «1.234» (¿mil o uno?) no se adivinan: ``ImporteNoValido``.
    """
    if not isinstance(valor, str):
        return importe(valor)
    crudo = valor.strip().removesuffix("EUR").removesuffix("€").strip()
    if "," in crudo:
        if "." in crudo and not _MILES_Y_COMA.fullmatch(crudo):
            raise ImporteNoValido(f"el importe «{valor}» no es un número válido (usa 300,50 o 300.50)")
        if crudo.count(",") > 1:
            raise ImporteNoValido(f"el importe «{valor}» no es un número válido (usa 300,50 o 300.50)")
        crudo = crudo.replace(".", "").replace(",", ".")
    return importe(crudo)


def importe_o_none(valor: Any) -> Decimal | None:
    """Como ``importe``, pero ``None`` en lugar de la excepción."""
    try:
        return importe(valor)
    except ImporteNoValido:
        return None


def diferencia(valor: Any) -> Decimal:
    """Un importe con signo (una diferencia de precio): cero y negativos valen."""
    return _leer(valor)


def cuantizar(valor: Decimal | int | str) -> Decimal:
    """Un valor que ya es dinero (de la base o de una suma) con sus dos decimales.

    El cero negativo (``-0.00``, p. ej. de ``-Decimal("0")``) sale como ``0.00``.
    """
    numero = Decimal(valor).quantize(CENTIMO)
    return numero if numero else CERO


def sumar(valores: Iterable[Decimal]) -> Decimal:
    return cuantizar(sum(valores, CERO))


def texto(valor: Decimal | int | str) -> str:
    """Dinero en JSON y en la base: dos decimales con punto, sin miles (``"1234.50"``)."""
    return f"{cuantizar(valor):.2f}"


def eur(valor: Decimal | int | str, *, signo: bool = False) -> str:
    """Dinero para una persona, en español: ``"1.234,50 EUR"``; ``signo`` pone ``+``."""
    numero = cuantizar(valor)
    cifras = f"{abs(numero):,.2f}".translate(str.maketrans(",.", ".,"))
    prefijo = "-" if numero < 0 else ("+" if signo and numero > 0 else "")
    return f"{prefijo}{cifras} EUR"
