"""Los valores de la política de una tienda: una declaración por valor, con su dominio.

Cada valor de ``politicas_tienda`` se declara aquí una vez: tipo, unidad, mínimo, máximo,
el valor por defecto (el mismo que su ``DEFAULT`` en SQL), hacia dónde **endurece** y, si
es dinero que sale sin firma, la regla de la matriz de autoridad con la que se compara.
De esta declaración salen ``DEFECTOS``, la validación de la API y de la CLI
(``validar``), el esquema OpenAPI y la comprobación de que los ``CHECK`` de
``sql/012_gobierno_politica.sql`` dicen lo mismo (tests/api/test_gobierno_politica.py).

Endurecer (``endurece="bajar"``: bajar el valor es más estricto) se aplica al momento;
ampliar espera la firma de alguien por encima del autor (``politicas.gobierno``).

Los valores de una operación con carpeta los declara su ``operaciones/<operacion>/politica.py``
(van al final de ``VALORES``). ``dias_desde_entrega`` es la ventana de la tienda para
devolver o cambiar (endurece al bajar).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Literal

from nucleo import dinero
from nucleo.abonos import MEDIOS_PAGO, PLAZO_ABONO_DEFECTO, columna_plazo
from nucleo.errores import DecisionNoValida, ImporteNoValido
from operaciones import carpetas

__all__ = [
    "DINERO_MAXIMO",
    "FORMA_DINERO",
    "PATRON_DINERO",
    "VALORES",
    "ValorPolitica",
    "FueraDeDominio",
    "dinero_de_matriz",
    "texto_valor",
    "validar",
]

# El tope de cualquier importe de la política (umbrales y límites de la matriz).
DINERO_MAXIMO = Decimal("1000000.00")
# Cómo se escribe un importe de la política como texto: cifras y, si acaso, un punto con uno
# o dos decimales, de "0" a "1000000.00". Es el ``pattern`` que declara el OpenAPI
# (``agente/web/esquemas/politica.py`` lo toma de aquí) y el que se hace cumplir: ni
# exponentes ("1e1", "5e-1"), ni signo ("+5", "-0"), ni espacios (" 20"), ni un punto
# suelto ("20.", ".5"). Lo que no es texto (un Decimal o un entero de quien llama desde el
# código) se escribe con ``format(..., "f")`` y se comprueba igual (issue 39).
PATRON_DINERO = r"^(1000000(\.0{1,2})?|[0-9]{1,6}(\.[0-9]{1,2})?)$"
FORMA_DINERO = "con dos decimales como mucho, escrito como 20 o 20.50 (solo cifras y, si acaso, un punto decimal)"
_DINERO = re.compile(PATRON_DINERO, re.ASCII)


def _dinero_estricto(dato: Any) -> Decimal:
    """El importe de ``dato`` si se escribe como ``PATRON_DINERO``; si no, ``ValueError``."""
    if isinstance(dato, bool) or not isinstance(dato, str | int | Decimal):
        raise ValueError("no es un importe")
    texto = dato if isinstance(dato, str) else format(Decimal(dato), "f")
    if not _DINERO.fullmatch(texto):
        raise ValueError("no es un importe")
    return dinero.cuantizar(Decimal(texto))


class FueraDeDominio(DecisionNoValida):
    """Un valor de la política fuera de su dominio (422, con el rango en español)."""


@dataclass(frozen=True, kw_only=True)
class ValorPolitica:
    """Un valor de la política de la tienda.

    ``etiqueta``: cómo lo lee el personal («Límite de reembolso sin firma»), nunca el nombre.
    ``tipo``: ``dinero`` (Decimal, 2 decimales) o ``entero``. ``unidad``: lo que se
    escribe tras el número («horas»). ``endurece``: ``bajar`` o ``subir``. ``regla``: la
    regla de la matriz cuyo límite no puede superar quien lo fija (dinero que sale sin
    firma o que se perdona); None si no es dinero.
    """

    nombre: str
    etiqueta: str
    tipo: Literal["dinero", "entero"]
    unidad: str
    minimo: Decimal | int
    maximo: Decimal | int
    defecto: Decimal | int
    endurece: Literal["bajar", "subir"]
    descripcion: str
    regla: str | None = None

    def __post_init__(self) -> None:
        if not self.minimo <= self.defecto <= self.maximo:
            raise ValueError(f"{self.nombre}: el defecto {self.defecto} está fuera de su dominio")

    def rango(self) -> str:
        """«entre 1 y 720 horas», «entre 0,00 y 1.000.000,00 EUR»."""
        if self.tipo == "dinero":
            return f"entre {texto_valor(self, self.minimo)} y {texto_valor(self, self.maximo)}"
        return f"entre {self.minimo:,} y {texto_valor(self, self.maximo)}".replace(",", ".")


def texto_valor(valor: ValorPolitica, dato: Any) -> str:
    """El valor como lo lee una persona: «72 horas», «60,00 EUR»."""
    if valor.tipo == "dinero":
        return dinero.eur(dato)
    numero = int(dato)
    return f"{numero:,}".replace(",", ".") + f" {_SINGULAR.get(valor.unidad, valor.unidad) if numero == 1 else valor.unidad}"


# La unidad de un valor cuando es 1 («1 día», no «1 días»).
_SINGULAR = {"días": "día", "días hábiles": "día hábil", "horas": "hora", "devoluciones": "devolución", "%": "%"}


# Cómo se nombra cada medio en la descripción de su plazo (para el personal).
_MEDIOS = {"tarjeta": "tarjeta", "bizum": "Bizum", "transferencia": "cuenta (pago por transferencia)"}
assert set(_MEDIOS) == set(MEDIOS_PAGO)

VALORES: Mapping[str, ValorPolitica] = MappingProxyType({
    v.nombre: v
    for v in (
        ValorPolitica(
            nombre="dias_desde_entrega", etiqueta="Días desde la entrega sin firma", tipo="entero", unidad="días", minimo=0, maximo=365,
            defecto=30, endurece="bajar",
            descripcion="Más días desde la entrega pide firma (la ventana de la tienda)."),
        ValorPolitica(
            nombre="horas_caducidad", etiqueta="Caducidad de una operación en espera", tipo="entero", unidad="horas", minimo=1, maximo=720,
            defecto=72, endurece="bajar",
            descripcion="Plazo de una operación que espera firma; pasado, se rechaza sola."),
        # Lo que se dice al cliente que tarda en llegarle un reembolso, por medio de pago
        # (nucleo/abonos.py, sql/041): prometer menos días pide firma (endurece al subir).
        *(ValorPolitica(
            nombre=columna_plazo(medio), etiqueta=f"Plazo de un reembolso a {_MEDIOS[medio]}", tipo="entero", unidad="días hábiles", minimo=1, maximo=60,
            defecto=PLAZO_ABONO_DEFECTO[medio], endurece="subir",
            descripcion=f"Días hábiles que se dice al cliente que tarda un reembolso a {nombre}.")
          for medio, nombre in _MEDIOS.items()),
        # Los de cada carpeta de ``operaciones/`` (los argumentos, en su ``politica.py``).
        *(ValorPolitica(**({"maximo": DINERO_MAXIMO} | argumentos))
          for modulo in carpetas.piezas("politica") for argumentos in modulo.VALORES),
    )
})


def validar(nombre: str, dato: Any) -> Decimal | int:
    """``dato`` (texto, número) leído y comprobado contra el dominio de ``nombre``.

    Raises:
        FueraDeDominio: un valor desconocido, que no es del tipo, o fuera de rango (el
            mensaje dice el rango permitido).
    """
    valor = VALORES.get(nombre)
    if valor is None:
        raise FueraDeDominio(f"valor desconocido: {nombre} (válidos: {', '.join(VALORES)})")
    if valor.tipo == "dinero":
        try:
            leido: Decimal | int = _dinero_estricto(dato)
        except (ImporteNoValido, ValueError, TypeError):
            raise FueraDeDominio(
                f"{nombre} debe ser un importe {FORMA_DINERO}, {valor.rango()}: «{dato}» no vale") from None
    else:
        texto = str(dato).strip()
        if isinstance(dato, bool) or not texto.lstrip("-").isdigit() or len(texto) > 12:
            raise FueraDeDominio(f"{nombre} debe ser un número entero, {valor.rango()}")
        leido = int(texto)
    if not valor.minimo <= leido <= valor.maximo:
        raise FueraDeDominio(f"{nombre} debe estar {valor.rango()}: {dato} no vale")
    return leido


def dinero_de_matriz(que: str, dato: Any) -> Decimal:
    """Un límite o un umbral de doble firma de la matriz: entre 0,00 y 1.000.000,00 EUR."""
    try:
        leido = _dinero_estricto(dato)
    except (ImporteNoValido, ValueError, TypeError):
        leido = None
    if leido is None or not Decimal("0.00") <= leido <= DINERO_MAXIMO:
        raise FueraDeDominio(
            f"{que} debe ser un importe entre {dinero.eur(0)} y {dinero.eur(DINERO_MAXIMO)}, "
            f"{FORMA_DINERO} (o «sin» límite): «{dato}» no vale")
    return leido
