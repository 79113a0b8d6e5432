"""Qué es una regla: los hechos que necesita y cómo decide con ellos, en Python.

Una regla no toca la base: ``decidir(hechos, args)`` recibe la fila de la consulta de
hechos (``politicas.hechos``) y los argumentos de la llamada tal como los propuso el
modelo, y devuelve un ``Dictamen``: los motivos para pedir firma (ninguno = no la pide),
los umbrales que usó (se guardan con el veredicto) y el importe que autorizaría la firma.

Trampa: los argumentos vienen del modelo; cualquier cosa que no cuadre es un motivo
(fallar cerrado), nunca una excepción.

Lo imposible no se pide a nadie: una operación que la herramienta rechazará firme quien
firme (pedido cancelado o sin entregar, unidades ya compensadas) no pide firma;
``imposible`` la marca en los umbrales (``CLAVE_IMPOSIBLE``) con la razón, y la
herramienta, que la rechaza con su error verdadero, tampoco la ejecuta sin firma si al
final resultara posible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from nucleo.puertos import CLAVE_EN_REVISION, CLAVE_IMPOSIBLE
from politicas.hechos import PARAMETROS_COMUNES, consulta_de_hechos

__all__ = [
    "MOTIVO_PEDIDO_NO_ENCONTRADO",
    "Dictamen",
    "Regla",
    "en_revision",
    "imposible",
    "motivo_rechazadas",
    "motivo_compensaciones",
    "motivo_vales",
    "motivos_de_elegibilidad",
    "razon_imposible",
    "texto_de",
]

MOTIVO_PEDIDO_NO_ENCONTRADO = "pedido no encontrado para este cliente"


@dataclass(frozen=True)
class Dictamen:
    """Lo que decide una regla. ``motivos`` vacío = no pide firma."""

    motivos: tuple[str, ...]
    umbrales: Mapping[str, Any] = field(default_factory=dict)
    # Lo que autorizaría la firma (reembolso, diferencia; <= 0 en un cambio que no cuesta
    # más). None = desconocido: la matriz de autoridad exige entonces el rol más alto.
    importe: Decimal | None = None


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

    @property
    def consulta_revalidacion(self) -> str:
        """Los mismos hechos sin el veredicto guardado: para decidir otra vez en el efecto."""
        return consulta_de_hechos(self.hechos, revalidar=True).sql


def texto_de(valor: Any) -> str | None:
    """Un argumento de texto del modelo, o None si no lo es (o está vacío)."""
    return valor if isinstance(valor, str) and valor else None


def _veces(n: int, una: str, varias: str) -> str:
    return f"1 {una}" if n == 1 else f"{n} {varias}"


def motivo_compensaciones(reembolsos: int, cambios: int) -> str | None:
    """«el pedido ya tuvo 1 reembolso y 1 cambio», o None si no tuvo ninguno."""
    partes = [
        _veces(reembolsos, "reembolso", "reembolsos") if reembolsos else None,
        _veces(cambios, "cambio de producto", "cambios de producto") if cambios else None,
    ]
    partes = [p for p in partes if p]
    return f"el pedido ya tuvo {' y '.join(partes)}" if partes else None


def motivo_vales(vales: int | None) -> str | None:
    """«el pedido ya tuvo 1 vale de compensación»: compensar otra vez lo mira una persona."""
    if not vales:
        return None
    return f"el pedido ya tuvo {_veces(vales, 'vale de compensación', 'vales de compensación')}"


def motivos_de_elegibilidad(eleg: Mapping[str, Any]) -> list[str]:
    """Fuera de plazo o ya compensado (la vista ``elegibilidad_pedidos``): pide firma."""
    motivos = []
    if not eleg["dentro_de_ventana"]:
        dias, ventana = eleg["dias_desde_entrega"], eleg["ventana_dias"]
        motivos.append(
            f"entregado hace {_veces(dias, 'día', 'días')} (límite {ventana})" if dias is not None
            else f"sin fecha de entrega (límite {_veces(ventana, 'día', 'días')} desde la entrega)"
        )
    compensado = motivo_compensaciones(eleg["reembolsos"], eleg["sustituciones"])
    if compensado:
        motivos.append(compensado)
    return motivos


def razon_imposible(eleg: Mapping[str, Any] | None, *, sin_unidades: str | None) -> str | None:
    """Por qué la herramienta rechazará la operación firme quien firme, o None.

    ``eleg``: el hecho ``elegibilidad`` (la vista que leen también las herramientas).
    ``sin_unidades``: la razón si no queda ninguna unidad que compensar (None: sí quedan).
    """
    if eleg is None:
        return None
    if not eleg["entregado"]:
        return "pedido cancelado" if eleg.get("estado") == "cancelado" else "pedido aún no entregado"
    return sin_unidades


def imposible(razon: str, umbrales: Mapping[str, Any], importe: Decimal | None) -> Dictamen:
    """Sin firma (no hay nada que aprobar) y con la razón guardada para la herramienta."""
    return Dictamen(motivos=(), umbrales={**umbrales, CLAVE_IMPOSIBLE: razon}, importe=importe)


def en_revision(h: Mapping[str, Any], umbrales: Mapping[str, Any], importe: Decimal | None) -> Dictamen | None:
    """Otra conversación del cliente espera ya la firma por las mismas unidades (hecho
    ``en_revision``): sin firma y sin tarjeta nueva; la herramienta dice que ya se revisa.
    None si no hay ninguna."""
    hilo = h.get("en_revision")
    if not hilo:
        return None
    return Dictamen(motivos=(), umbrales={**umbrales, CLAVE_EN_REVISION: hilo}, importe=importe)


def motivo_rechazadas(h: Mapping[str, Any]) -> str | None:
    """«un encargado rechazó hace poco 1 operación de este pedido»: lo rechazado no sale sin
    firma por otra operación (hecho ``rechazadas_pedido``)."""
    n = h.get("rechazadas_pedido")
    if not n:
        return None
    return (f"un encargado rechazó {_veces(n, 'operación', 'operaciones')} de este pedido en los "
            f"últimos {h['ventana_devoluciones_dias']} días: lo rechazado no sale sin firma por otra vía")
