"""Regla «reembolso»: devolver dinero de un pedido del cliente.

Pide firma si el pedido no es del cliente, el importe no es válido o supera el límite de
la tienda, el cliente ya tiene demasiadas devoluciones recientes, o el pedido se entregó
hace más días de los que admite la tienda. Un pedido cancelado o sin entregar, o sin
ninguna unidad libre en el libro, no pide firma: ``reembolsar`` lo rechaza sin escribir
nada (``razon_imposible``), y pedir a un encargado algo imposible solo le haría perder el
tiempo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo import dinero
from operaciones.reembolso.declaracion import OPERACION
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_compensaciones,
    motivo_rechazadas,
    motivo_vales,
    razon_imposible,
)

__all__ = ["MOTIVO_IMPORTE_NO_VALIDO", "REEMBOLSO", "REGLA"]

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


def _sin_unidades(eleg: Mapping[str, Any]) -> str | None:
    if eleg.get("unidades_libres") == 0:
        return "todas las unidades del pedido ya se reembolsaron o se cambiaron"
    return None


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    importe = dinero.importe_o_none(args.get("importe"))
    limite = h["limite_reembolso"]
    eleg = h.get("elegibilidad")
    razon = razon_imposible(eleg, sin_unidades=_sin_unidades(eleg)) if h["pedido_existe"] and eleg else None
    if razon:
        return imposible(razon, _umbrales(h), importe)
    ya_en_revision = en_revision(h, _umbrales(h), importe)
    if ya_en_revision:
        return ya_en_revision
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
    if eleg is not None and eleg["sustituciones"]:
        # Un reembolso tras un cambio en el mismo pedido: lo mira una persona.
        motivos.append(motivo_compensaciones(0, eleg["sustituciones"]))
    # Un vale no ocupa la unidad (el cliente se la quedó): reembolsarla después lo ve alguien.
    motivos.append(motivo_vales(h.get("vales_pedido")))
    motivos.append(motivo_rechazadas(h))
    return Dictamen(motivos=tuple(m for m in motivos if m), umbrales=_umbrales(h), importe=importe)


def _umbrales(h: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "limite_reembolso": dinero.texto(h["limite_reembolso"]),
        "devoluciones_max_30d": h["devoluciones_max_30d"],
        "ventana_devoluciones_dias": h["ventana_devoluciones_dias"],
        "dias_desde_entrega": h["dias_desde_entrega"],
    }


# Nombre y hechos, los de la operación declarada (declaracion.py).
REEMBOLSO = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, decidir=decidir)
REGLA = REEMBOLSO
