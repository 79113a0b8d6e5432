"""Qué unidades de un pedido ocupa un reembolso y cuánto de cada una: función pura.

Asignación determinista de un reembolso (``asignar``):

- Sin líneas: las unidades libres del pedido con precio, por orden de línea y de
  unidad; cada una se llena hasta su precio y se ocupan solo las que hacen falta
  (30 EUR sobre dos unidades de 24,90 ocupan la 1 con 24,90 y la 2 con 5,10).
- Con ``{"linea": n}`` (o el número ``n``): igual, pero solo en esas líneas.
- Con ``{"linea": n, "unidades": k}``: exactamente las ``k`` primeras unidades libres
  de esa línea, todas ocupadas aunque el importe no llegue a llenarlas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from nucleo import dinero
from nucleo.errores import ErrorDominio, ImporteNoValido

__all__ = ["LineaPedida", "UnidadLibre", "asignar", "normalizar_lineas"]


@dataclass(frozen=True)
class UnidadLibre:
    linea: int
    unidad: int
    precio: Decimal
    sku: str = ""


@dataclass(frozen=True)
class LineaPedida:
    """Una línea que cubre un reembolso; ``unidades=None`` = las que hagan falta."""

    linea: int
    unidades: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.linea, bool) or not isinstance(self.linea, int) or self.linea < 1:
            raise ErrorDominio(f"número de línea no válido: {self.linea!r}")
        if self.unidades is not None and (
            isinstance(self.unidades, bool) or not isinstance(self.unidades, int) or self.unidades < 1
        ):
            raise ErrorDominio(f"número de unidades no válido en la línea {self.linea}: {self.unidades!r}")


def normalizar_lineas(lineas: Iterable[Any] | None) -> list[LineaPedida] | None:
    """Lo que manda el modelo (``[1]``, ``[{"linea": 1, "unidades": 2}]`` o modelos de
    pydantic con esos campos) como ``LineaPedida``; ``None`` o vacío = sin líneas.

    Una línea repetida se une: sin unidades gana «las que hagan falta»; con unidades, se suman.
    """
    if not lineas:
        return None
    unidas: dict[int, LineaPedida] = {}
    for elemento in lineas:
        if isinstance(elemento, LineaPedida):
            pedida = elemento
        elif isinstance(elemento, int) and not isinstance(elemento, bool):
            pedida = LineaPedida(elemento)
        elif isinstance(elemento, dict):
            pedida = LineaPedida(elemento.get("linea"), elemento.get("unidades"))
        elif hasattr(elemento, "linea"):
            pedida = LineaPedida(elemento.linea, getattr(elemento, "unidades", None))
        else:
            raise ErrorDominio(f"línea no válida: {elemento!r} (usa el número de línea)")
        anterior = unidas.get(pedida.linea)
        if anterior is not None:
            if anterior.unidades is None or pedida.unidades is None:
                pedida = LineaPedida(pedida.linea)
            else:
                pedida = LineaPedida(pedida.linea, anterior.unidades + pedida.unidades)
        unidas[pedida.linea] = pedida
    return [unidas[n] for n in sorted(unidas)]


def asignar(
    libres: Sequence[UnidadLibre],
    importe: Decimal,
    pedidas: Sequence[LineaPedida] | None,
    *,
    pedido: str,
    lineas_del_pedido: Iterable[int],
) -> list[tuple[UnidadLibre, Decimal]]:
    """Qué unidades ocupa un reembolso de ``importe`` y cuánto de cada una (ver el módulo).

    ``ImporteNoValido`` (con ``maximo``) si no cabe; ``ErrorDominio`` si una línea no es
    del pedido o no le quedan las unidades pedidas. Función pura: no toca la base.
    """
    existentes = sorted(set(lineas_del_pedido))
    if pedidas is None:
        candidatas = [u for u in libres if u.precio > 0]
        exactas = False
        donde = "lo reembolsable del pedido"
    else:
        faltan = [str(p.linea) for p in pedidas if p.linea not in existentes]
        if faltan:
            raise ErrorDominio(
                f"el pedido {pedido} no tiene la línea {', '.join(faltan)}; "
                f"sus líneas son {', '.join(str(n) for n in existentes)}",
                pedido=pedido,
            )
        candidatas = []
        for pedida in pedidas:
            de_la_linea = [u for u in libres if u.linea == pedida.linea]
            if pedida.unidades is None:
                candidatas.extend(u for u in de_la_linea if u.precio > 0)
                continue
            if len(de_la_linea) < pedida.unidades:
                raise ErrorDominio(
                    f"a la línea {pedida.linea} del pedido {pedido} le quedan "
                    f"{len(de_la_linea)} unidades sin reembolsar ni cambiar, no {pedida.unidades}",
                    pedido=pedido,
                )
            candidatas.extend(de_la_linea[: pedida.unidades])
        exactas = all(p.unidades is not None for p in pedidas)
        donde = "lo reembolsable de las líneas indicadas"
    maximo = dinero.sumar(u.precio for u in candidatas)
    if importe > maximo:
        raise ImporteNoValido(
            f"el importe {dinero.eur(importe)} supera {donde} ({dinero.eur(maximo)}); "
            "cada unidad se reembolsa o se cambia una sola vez",
            maximo=dinero.texto(maximo),
        )
    asignacion: list[tuple[UnidadLibre, Decimal]] = []
    restante = importe
    for unidad in candidatas:
        if restante <= 0 and not exactas:
            break
        parte = min(restante, unidad.precio)
        asignacion.append((unidad, parte))
        restante -= parte
    return asignacion
