"""Lo que lee el cliente de un reenvío sin cargo (modelo offline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agente.modelo_offline.redaccion import ejecutada
from agente.modelo_offline.resultados import Llamada
from agente.nucleo.operaciones import REENVIO

__all__ = ["no_posible", "elegir_producto", "redactar"]


def no_posible(pedido: str | None, estado: Any) -> str:
    if estado == "cancelado":
        return f"El pedido {pedido} está cancelado, así que no hay nada que reenviar."
    return (
        f"El pedido {pedido} aún no ha salido de la tienda, así que no hay nada que reenviar: "
        "te avisaremos cuando se envíe."
    )


def elegir_producto(pedido: str | None, lineas_pedido: Sequence[dict]) -> str:
    # Sin códigos de producto: el cliente reconoce los nombres.
    nombres = "; ".join(f"{linea.get('unidades', 1)} × {linea.get('nombre')}" for linea in lineas_pedido)
    return f"¿Qué producto del pedido {pedido} hay que reenviarte? Contiene: {nombres}."


def redactar(pedido: str | None, llamada: Llamada) -> str:
    palabra, clave = REENVIO.offline.palabra, REENVIO.offline.clave_numero
    datos = ejecutada(palabra, clave, pedido, llamada)
    if isinstance(datos, str):
        return datos
    unidades = datos.get("unidades")
    cuantas = "1 unidad" if unidades == 1 else f"{unidades} unidades"
    que = (f"te enviamos otra vez «{datos.get('producto')}» ({cuantas}) desde nuestra tienda de "
           f"{datos.get('tienda')}, sin ningún cargo: no se te cobra nada")
    pedido_final = datos.get("pedido", pedido)
    if datos.get("repetido"):
        return f"Ese reenvío ya estaba tramitado: {datos[clave]} del pedido {pedido_final}; {que}."
    return f"He tramitado el reenvío {datos[clave]} del pedido {pedido_final}: {que}."
