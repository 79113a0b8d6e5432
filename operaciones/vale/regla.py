"""Regla «vale»: un vale de compensación por una línea de un pedido entregado.

Sin firma hasta el menor de ``vale_porcentaje_max`` de lo pagado por la línea y
``vale_importe_max`` (la política de la tienda), y uno por cliente en
``VALE_VENTANA_DIAS`` días. Pide firma si el importe pasa de ahí, si el cliente ya tiene un
vale en la ventana, si la línea ya se reembolsó o se cambió (sería compensar dos veces) o
si el pedido no es suyo. Un pedido cancelado o sin entregar, o una línea que no existe, no
pide firma: ``compensar_con_vale`` lo rechaza sin escribir nada.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_DOWN, Decimal
from typing import Any

from nucleo import dinero
from operaciones.vale.declaracion import OPERACION, VALE_VENTANA_DIAS
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_rechazadas,
)

__all__ = ["REGLA", "VALE", "importe_automatico", "linea_de"]


def linea_de(valor: Any) -> int | None:
    """El número de línea que propuso el modelo, o None si no es un entero positivo."""
    if isinstance(valor, bool):
        return None
    try:
        numero = int(str(valor).strip())
    except (TypeError, ValueError):
        return None
    return numero if 0 < numero < 100000 else None


def importe_automatico(importe_linea: Decimal, porcentaje: int, maximo: Decimal) -> Decimal:
    """El mayor vale sin firma: el menor de ``porcentaje`` de la línea y ``maximo``, a la baja."""
    parte = (Decimal(importe_linea) * Decimal(porcentaje) / 100).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    return min(parte, Decimal(maximo))


def _parametros(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"linea": linea_de(args.get("linea")), "ventana_vales": VALE_VENTANA_DIAS}


def _vales(n: int) -> str:
    cuantos = "1 vale" if n == 1 else f"{n} vales"
    return f"el cliente ya recibió {cuantos} en los últimos {VALE_VENTANA_DIAS} días"


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    importe = dinero.importe_o_none(args.get("importe"))
    umbrales = _umbrales(h)
    if h["pedido_existe"]:
        if h["estado_pedido"] == "cancelado":
            return imposible("pedido cancelado", umbrales, importe)
        if h["estado_pedido"] != "entregado":
            return imposible("pedido aún no entregado", umbrales, importe)
        if h["importe_linea_vale"] is None:
            return imposible("la línea no es de este pedido", umbrales, importe)
        ya_en_revision = en_revision(h, umbrales, importe)
        if ya_en_revision:
            return ya_en_revision
    motivos: list[str] = []
    if not h["pedido_existe"]:
        motivos.append(MOTIVO_PEDIDO_NO_ENCONTRADO)
    if importe is None:
        motivos.append("importe no válido")
    elif h["pedido_existe"]:
        automatico = importe_automatico(h["importe_linea_vale"], h["vale_porcentaje_max"], h["vale_importe_max"])
        umbrales["automatico"] = dinero.texto(automatico)
        if importe > automatico:
            motivos.append(
                f"vale de {dinero.eur(importe)}: sin firma, como mucho {dinero.eur(automatico)} "
                f"(el {h['vale_porcentaje_max']} % de la línea, {dinero.eur(h['importe_linea_vale'])}, "
                f"hasta {dinero.eur(h['vale_importe_max'])})"
            )
    if h["vales_cliente_recientes"]:
        motivos.append(_vales(h["vales_cliente_recientes"]))
    if h["compensaciones_linea_vale"]:
        motivos.append("la línea ya tuvo un reembolso, un cambio o un reenvío: un vale encima la "
                       "compensaría dos veces")
    rechazadas = motivo_rechazadas(h)
    if rechazadas:
        motivos.append(rechazadas)
    return Dictamen(motivos=tuple(motivos), umbrales=umbrales, importe=importe)


def _umbrales(h: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "vale_porcentaje_max": h["vale_porcentaje_max"],
        "vale_importe_max": dinero.texto(h["vale_importe_max"]),
        "ventana_vales_dias": VALE_VENTANA_DIAS,
    }


# Nombre y hechos, los de la operación declarada (declaracion.py).
VALE = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, decidir=decidir, parametros=_parametros)
REGLA = VALE
