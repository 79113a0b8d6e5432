"""Regla «cancelacion»: cancelar entero un pedido sin enviar y devolver lo pagado.

Pide firma si el pedido no es del cliente o si lo que se devuelve (el importe del pedido)
supera ``limite_cancelacion`` de la tienda; la matriz de autoridad decide quién firma por
ese importe. Un pedido enviado, entregado o ya cancelado no pide firma: ``cancelar_pedido``
lo rechaza sin escribir nada (``imposible``) y el cliente lee qué puede hacer en su lugar;
tampoco un importe que no sea lo pagado por el pedido (la cancelación devuelve lo pagado).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo import dinero
from operaciones.cancelacion.declaracion import OPERACION
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_rechazadas,
)

__all__ = ["CANCELACION", "REGLA"]

_NO_CANCELABLE = {
    "enviado": "pedido ya enviado",
    "entregado": "pedido ya entregado",
    "cancelado": "pedido ya cancelado",
}


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    limite = h["limite_cancelacion"]
    umbrales = {"limite_cancelacion": dinero.texto(limite)}
    if not h["pedido_existe"]:
        return Dictamen(motivos=(MOTIVO_PEDIDO_NO_ENCONTRADO,), umbrales=umbrales)
    importe = dinero.cuantizar(h["importe_pedido"])
    if h["estado_pedido"] != "pendiente":
        razon = _NO_CANCELABLE.get(h["estado_pedido"], f"pedido en estado {h['estado_pedido']}")
        return imposible(razon, umbrales, importe)
    if dinero.importe_o_none(args.get("importe")) != importe:
        # Se devuelve lo pagado, ni más ni menos: la herramienta rechaza otro importe.
        return imposible(f"el importe indicado no es lo pagado por el pedido ({dinero.eur(importe)})",
                         umbrales, importe)
    ya_en_revision = en_revision(h, umbrales, importe)
    if ya_en_revision:
        return ya_en_revision
    motivos = []
    if importe > limite:
        motivos.append(
            f"cancelación de {dinero.eur(importe)} supera el límite de {dinero.eur(limite)} de la tienda")
    rechazadas = motivo_rechazadas(h)
    if rechazadas:
        motivos.append(rechazadas)
    return Dictamen(motivos=tuple(motivos), umbrales=umbrales, importe=importe)


# Nombre y hechos, los de la operación declarada (declaracion.py).
CANCELACION = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, decidir=decidir)
REGLA = CANCELACION
