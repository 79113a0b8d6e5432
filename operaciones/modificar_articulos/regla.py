"""Regla «modificar_articulos»: cambiar la talla o el color de un artículo de un pedido pendiente.

Automático si la diferencia de precio entre lo pagado por la unidad y la variante nueva
(en la tienda del pedido), en cualquier sentido, no pasa de ``umbral_modificacion_articulos``
(60,00 EUR por defecto); por encima firma una persona, con la matriz de autoridad sobre esa
diferencia. También firma una persona si un encargado rechazó hace poco otra operación del
pedido (lo rechazado no sale sin firma por otra vía). Si otra conversación del cliente espera
ya la firma por este pedido (``en_revision``: la pausa reserva el pedido, ``EnLibro.reserva``),
no se abre otra tarjeta y la herramienta dice que ya se está revisando.

Imposible (no pide firma; ``modificar_articulos`` lo rechaza sin escribir nada): un pedido
que ya no está ``pendiente`` (enviado, entregado, cancelado), una línea que no existe o cuyo
producto no tiene variantes, una variante que no existe, que es la misma, sin precio en la
tienda o sin stock.

Se decide bajo la misma serialización que las demás: la herramienta bloquea el pedido, lee
la línea después (sentencia nueva) y ``exigir_veredicto_vigente`` vuelve a decidir esta
regla con los hechos de ahora bajo el candado del cliente (``politicas/revalidacion.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero
from operaciones.modificar_articulos.declaracion import OPERACION
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_rechazadas,
    texto_de,
)

__all__ = ["MODIFICAR_ARTICULOS", "REGLA", "parametros"]


def _linea(args: Mapping[str, Any]) -> int | None:
    valor = args.get("linea")
    if isinstance(valor, bool):
        return None
    if isinstance(valor, int):
        return valor
    if isinstance(valor, str) and valor.strip().isdigit() and len(valor.strip()) < 9:
        return int(valor.strip())
    return None


def parametros(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"linea": _linea(args), "talla": texto_de(args.get("talla")), "color": texto_de(args.get("color"))}


def _nombre_pedida(variante: str) -> str:
    return f"la {variante}" if variante else "otra variante"


def _pedida(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{que} {texto_de(args.get(que))}" for que in ("talla", "color") if texto_de(args.get(que)))


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    umbral = h["umbral_modificacion_articulos"]
    linea, variante = h.get("linea_modificacion"), h.get("variante_modificacion")
    umbrales: dict[str, Any] = {"umbral_modificacion_articulos": dinero.texto(umbral),
                                "sku_linea": (linea or {}).get("sku"), "sku_nuevo": (variante or {}).get("sku"),
                                "precio_nuevo": (variante or {}).get("pvp")}
    if not h["pedido_existe"]:
        return Dictamen(motivos=(MOTIVO_PEDIDO_NO_ENCONTRADO,), umbrales=umbrales, importe=None)
    if h["estado_pedido"] != "pendiente":
        return imposible(f"pedido {h['estado_pedido']}: solo se modifican los artículos de un pedido pendiente",
                         umbrales, None)
    if linea is None:
        return imposible(f"el pedido no tiene la línea {args.get('linea')}", umbrales, None)
    if not linea.get("modelo"):
        return imposible(f"{linea['nombre']} no tiene otras tallas ni colores", umbrales, None)
    if not _pedida(args):
        return imposible("falta la talla o el color nuevos", umbrales, None)
    if variante is None:
        return imposible(f"{linea['nombre']} no existe en {_nombre_pedida(_pedida(args))}", umbrales, None)
    if variante["sku"] == linea["sku"]:
        return imposible(f"la línea ya es {variante['nombre']}", umbrales, None)
    if variante.get("pvp") is None:
        return imposible(f"{variante['nombre']} no se vende en la tienda del pedido", umbrales, None)
    if not variante.get("stock"):
        return imposible(f"no queda stock de {variante['nombre']} en la tienda del pedido", umbrales, None)
    diferencia = Decimal(variante["pvp"]) - Decimal(linea["precio"])
    # Otra conversación del cliente espera ya la firma por este pedido: ni firma ni otra tarjeta.
    ya_en_revision = en_revision(h, umbrales, abs(diferencia))
    if ya_en_revision:
        return ya_en_revision
    motivos = []
    if abs(diferencia) > umbral:
        sentido = "a cobrar al cliente" if diferencia > 0 else "a devolver al cliente"
        motivos.append(f"de {linea['nombre']} a {variante['nombre']}: diferencia de {dinero.eur(abs(diferencia))} "
                       f"{sentido} (umbral de la tienda {dinero.eur(umbral)})")
    rechazadas = motivo_rechazadas(h)
    if rechazadas:
        motivos.append(rechazadas)
    # Lo que autoriza la firma: el dinero que mueve, en cualquier sentido.
    return Dictamen(motivos=tuple(motivos), umbrales=umbrales, importe=abs(diferencia))


# Nombre y hechos, los de la operación declarada.
MODIFICAR_ARTICULOS = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, parametros=parametros, decidir=decidir)
REGLA = MODIFICAR_ARTICULOS
