"""Regla «reenvio»: mandar otra vez, sin cargo, lo que no llegó o llegó roto.

Sin firma: la primera vez que se reenvía una línea, con cada unidad de valor hasta
``limite_reenvio`` (50,00 EUR por defecto), de un pedido que cuenta como perdido (enviado
hace más de ``dias_reparto_maximos``, 3 por defecto) o que llegó roto. Pide firma: el
pedido no es del cliente o no tiene esa línea, una unidad vale más que el límite, la línea
ya se reenvió, el transportista lo da por entregado y el cliente dice que no llegó, dice
que llegó roto un pedido que no consta entregado, o no consta la fecha de envío.

Imposible (no se pide a nadie; ``reenviar`` lo rechaza con su razón, sin escribir nada):
un pedido sin enviar o cancelado, uno enviado que aún está en plazo de reparto (no llega
tarde: el cliente lee cuándo esperarlo), sin stock en la tienda del pedido (se ofrece el
reembolso) o con las unidades ya reembolsadas o cambiadas.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from nucleo import dinero
from operaciones.reenvio.declaracion import OPERACION
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_rechazadas,
    texto_de,
)

__all__ = ["REGLA", "REENVIO", "entero_de"]

MOTIVOS = frozenset({"no_llego", "llego_roto"})


def entero_de(valor: Any) -> int | None:
    """Un entero positivo del modelo (``1``, ``"1"``), o None si no lo es."""
    if isinstance(valor, bool):
        return None
    if isinstance(valor, int):
        return valor if valor > 0 else None
    if isinstance(valor, str) and valor.strip().isdigit():
        return int(valor.strip()) or None
    return None


def parametros(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"linea": entero_de(args.get("linea"))}


def _veces(n: int) -> str:
    return "1 vez" if n == 1 else f"{n} veces"


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    motivos: list[str] = []
    unidades = entero_de(args.get("unidades") if args.get("unidades") is not None else 1)
    motivo = texto_de(args.get("motivo"))
    linea = h.get("linea_reenvio")
    umbrales: dict[str, Any] = {
        "limite_reenvio": dinero.texto(h["limite_reenvio"]),
        "dias_reparto_maximos": h["dias_reparto_maximos"],
    }
    if not h["pedido_existe"]:
        return Dictamen(motivos=(MOTIVO_PEDIDO_NO_ENCONTRADO,), umbrales=umbrales)
    if linea is None:
        motivos.append(f"el pedido no tiene la línea «{args.get('linea')}»")
    if unidades is None:
        motivos.append(f"número de unidades no válido: «{args.get('unidades')}»")
    if motivo not in MOTIVOS:
        motivos.append(f"motivo no válido: «{args.get('motivo')}» (debe ser que no llegó o que llegó roto)")
    precio = None
    if linea is not None:
        try:
            precio = Decimal(str(linea["precio"]))
        except (InvalidOperation, KeyError):
            precio = None
    importe = precio * unidades if precio is not None and unidades else None
    estado, dias = h["estado_pedido"], h["dias_enviado"]
    # Lo imposible primero: nadie puede firmar que salga lo que no debe salir.
    if estado == "pendiente":
        return imposible("pedido aún no enviado", umbrales, importe)
    if estado == "cancelado":
        return imposible("pedido cancelado", umbrales, importe)
    if estado == "enviado" and motivo == "no_llego" and dias is not None and dias <= h["dias_reparto_maximos"]:
        return imposible("pedido aún en plazo de reparto", umbrales, importe)
    if linea is not None and unidades:
        if unidades > linea["unidades"]:
            motivos.append(f"la línea tiene {linea['unidades']} unidades, no {unidades}")
        elif unidades > linea["libres"] + linea["reenviadas"]:
            return imposible("unidades ya reembolsadas o cambiadas", umbrales, importe)
        elif linea["stock"] < unidades:
            return imposible("sin stock en la tienda", umbrales, importe)
    ya_en_revision = en_revision(h, umbrales, importe)
    if ya_en_revision:
        return ya_en_revision
    # Lo que pide firma.
    if estado == "enviado" and h["enviado_en"] is None:
        motivos.append("no consta la fecha de envío del pedido")
    if estado == "entregado" and motivo == "no_llego":
        motivos.append("el transportista da el pedido por entregado y el cliente dice que no le ha llegado")
    if estado == "enviado" and motivo == "llego_roto":
        motivos.append("el cliente dice que llegó roto un pedido que no consta como entregado")
    if precio is not None and precio > h["limite_reenvio"]:
        motivos.append(f"cada unidad vale {dinero.eur(precio)} (sin firma hasta {dinero.eur(h['limite_reenvio'])})")
    if linea is not None and linea["reenvios"]:
        motivos.append(f"esta línea ya se reenvió {_veces(linea['reenvios'])}")
    if linea is not None and linea.get("vales"):
        # El vale compensó ya la línea (el cliente se quedó el producto): reenviarla es compensar dos veces.
        motivos.append("esta línea ya tuvo un vale de compensación")
    rechazadas = motivo_rechazadas(h)
    if rechazadas:
        motivos.append(rechazadas)
    if precio is not None:
        umbrales["precio_unidad"] = dinero.texto(precio)
    return Dictamen(motivos=tuple(motivos), umbrales=umbrales, importe=importe)


# Nombre y hechos, los de la operación declarada (operaciones/reenvio/declaracion.py).
REENVIO = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, parametros=parametros, decidir=decidir)
REGLA = REENVIO
