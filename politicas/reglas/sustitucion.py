"""Regla «sustitucion»: cambiar un producto del pedido por otro.

Pide firma si el pedido no es del cliente, un producto no existe, el original no está en
el pedido, o el nuevo cuesta más que el original por encima de lo que admite la tienda.
Los precios vistos al proponer se guardan en los umbrales: ``sustituir`` caduca la firma
si cambian antes de ejecutarse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agente.nucleo import dinero
from politicas.reglas.base import MOTIVO_PEDIDO_NO_ENCONTRADO, Dictamen, Regla, texto_de

__all__ = ["SUSTITUCION"]


def parametros(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "sku_original": texto_de(args.get("sku_original")),
        "sku_nuevo": texto_de(args.get("sku_nuevo")),
    }


def _no_encontrado(sku: str | None) -> str:
    return f"producto no encontrado: {sku or '(sin indicar)'}"


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    skus = parametros(args)
    original, nuevo = h["pvp_original"], h["pvp_nuevo"]
    maximo = h["diferencia_max_sustitucion"]
    motivos = []
    if not h["pedido_existe"]:
        motivos.append(MOTIVO_PEDIDO_NO_ENCONTRADO)
    if original is None:
        motivos.append(_no_encontrado(skus["sku_original"]))
    elif h["pedido_existe"] and not h["sku_original_en_pedido"]:
        motivos.append(f"el producto {skus['sku_original']} no está en el pedido")
    if nuevo is None:
        motivos.append(_no_encontrado(skus["sku_nuevo"]))
    diferencia = nuevo - original if original is not None and nuevo is not None else None
    if diferencia is not None and diferencia > maximo:
        limite = f" (límite {dinero.eur(maximo)})" if maximo > 0 else ""
        motivos.append(f"el producto nuevo cuesta {dinero.eur(diferencia)} más que el original{limite}")
    return Dictamen(
        motivos=tuple(motivos),
        umbrales={
            "diferencia_max_sustitucion": dinero.texto(maximo),
            "pvp_original": dinero.texto(original) if original is not None else None,
            "pvp_nuevo": dinero.texto(nuevo) if nuevo is not None else None,
        },
        importe=diferencia if diferencia is not None and diferencia > 0 else None,
    )


SUSTITUCION = Regla(
    nombre="sustitucion",
    hechos=("pedido_existe", "sku_original_en_pedido", "pvp_original", "pvp_nuevo"),
    parametros=parametros,
    decidir=decidir,
)
