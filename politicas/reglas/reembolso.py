"""Regla «reembolso»: devolver dinero de un pedido del cliente.

Pide firma si el pedido no es del cliente, el importe no es válido o supera el límite de
la tienda, el cliente ya tiene demasiadas devoluciones recientes, o el pedido está
cancelado, sin entregar o entregado hace más días de los que admite la tienda.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agente.nucleo import dinero
from politicas.reglas.base import MOTIVO_PEDIDO_NO_ENCONTRADO, Dictamen, Regla

__all__ = ["MOTIVO_IMPORTE_NO_VALIDO", "REEMBOLSO"]

MOTIVO_IMPORTE_NO_VALIDO = "importe no válido"


def _dias(n: int) -> str:
    return "1 día" if n == 1 else f"{n} días"


def _devoluciones(n: int, ventana: int) -> str:
    cuantas = "1 devolución" if n == 1 else f"{n} devoluciones"
    return cuantas + (" en el último día" if ventana == 1 else f" en los últimos {ventana} días")


def _entrega(h: Mapping[str, Any]) -> str | None:
    if h["estado_pedido"] == "cancelado":
        return "pedido cancelado"
    if h["entregado_en"] is None:
        return "pedido aún no entregado"
    if h["dias_entregado"] > h["dias_desde_entrega"]:
        return f"entregado hace {_dias(h['dias_entregado'])} (límite {h['dias_desde_entrega']})"
    return None


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    importe = dinero.importe_o_none(args.get("importe"))
    limite = h["limite_reembolso"]
    motivos: list[str | None] = []
    if not h["pedido_existe"]:
        motivos.append(MOTIVO_PEDIDO_NO_ENCONTRADO)
    if importe is None:
        motivos.append(MOTIVO_IMPORTE_NO_VALIDO)
    elif importe > limite:
        motivos.append(
            f"importe {dinero.eur(importe)} supera el límite de {dinero.eur(limite)} de la tienda"
        )
    if h["devoluciones_recientes"] >= h["devoluciones_max_30d"]:
        motivos.append(_devoluciones(h["devoluciones_recientes"], h["ventana_devoluciones_dias"]))
    if h["pedido_existe"]:
        motivos.append(_entrega(h))
    return Dictamen(
        motivos=tuple(m for m in motivos if m),
        umbrales={
            "limite_reembolso": dinero.texto(limite),
            "devoluciones_max_30d": h["devoluciones_max_30d"],
            "ventana_devoluciones_dias": h["ventana_devoluciones_dias"],
            "dias_desde_entrega": h["dias_desde_entrega"],
        },
        importe=importe,
    )


REEMBOLSO = Regla(
    nombre="reembolso",
    hechos=("pedido_existe", "estado_pedido", "entregado_en", "dias_entregado",
            "devoluciones_recientes"),
    decidir=decidir,
)
