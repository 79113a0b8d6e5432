"""Qué es una regla: los hechos que necesita y cómo decide con ellos, en Python.

Una regla no toca la base: ``decidir(hechos, args)`` recibe la fila de la consulta de
hechos (``politicas.hechos``) y los argumentos de la llamada tal como los propuso el
modelo, y devuelve un ``Dictamen``: los motivos para pedir firma (ninguno = no la pide),
los umbrales que usó (se guardan con el veredicto) y el importe que autorizaría la firma.

Trampa: los argumentos vienen del modelo; cualquier cosa que no cuadre es un motivo
(fallar cerrado), nunca una excepción.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from politicas.hechos import PARAMETROS_COMUNES, consulta_de_hechos

__all__ = ["MOTIVO_PEDIDO_NO_ENCONTRADO", "Dictamen", "Regla", "texto_de"]

MOTIVO_PEDIDO_NO_ENCONTRADO = "pedido no encontrado para este cliente"


@dataclass(frozen=True)
class Dictamen:
    """Lo que decide una regla. ``motivos`` vacío = no pide firma."""

    motivos: tuple[str, ...]
    umbrales: Mapping[str, Any] = field(default_factory=dict)
    importe: Decimal | None = None  # lo que autorizaría la firma (reembolso, diferencia)


def _sin_parametros(_args: Mapping[str, Any]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True, kw_only=True)
class Regla:
    """Una regla con nombre (el ``regla`` del registro de herramientas).

    - ``hechos``: nombres de ``politicas.hechos.CATALOGO`` que lee ``decidir``.
    - ``parametros``: ``args -> {nombre: valor}`` para los hechos que los piden (p. ej.
      ``sku_original``); los comunes (cliente, tienda, pedido) los pone la política.
    - ``decidir``: ``(hechos, args) -> Dictamen``.

    Raises:
        ValueError: hechos desconocidos o parámetros que ``parametros`` no aporta.
    """

    nombre: str
    decidir: Callable[[Mapping[str, Any], Mapping[str, Any]], Dictamen]
    hechos: tuple[str, ...] = ()
    parametros: Callable[[Mapping[str, Any]], dict[str, Any]] = _sin_parametros

    def __post_init__(self) -> None:
        if not self.nombre:
            raise ValueError("una regla necesita nombre")
        faltan = consulta_de_hechos(self.hechos).parametros - set(self.parametros({}))
        faltan -= PARAMETROS_COMUNES
        if faltan:
            raise ValueError(f"regla {self.nombre}: faltan los parámetros {sorted(faltan)}")

    @property
    def consulta(self) -> str:
        return consulta_de_hechos(self.hechos).sql


def texto_de(valor: Any) -> str | None:
    """Un argumento de texto del modelo, o None si no lo es (o está vacío)."""
    return valor if isinstance(valor, str) and valor else None
