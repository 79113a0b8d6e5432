"""Lo que lee el cliente de un vale de compensación (modelo offline)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import ROUND_DOWN, Decimal
from typing import Any

from agente.modelo_offline.redaccion import ejecutada, eur, fecha
from agente.modelo_offline.resultados import Llamada, cantidad
from agente.modelo_offline.texto import RE_PEDIDO, limpiar_cola
from nucleo import dinero
from operaciones.vale.declaracion import VALE, VALE_IMPORTE_MAX_DEFECTO, VALE_PORCENTAJE_MAX_DEFECTO

__all__ = ["elegir_producto", "importe_propuesto", "motivo_del_texto", "no_posible", "redactar"]

# «un vale de 30 euros», «15,50 €»: lo que pide el cliente, si lo dice.
RE_IMPORTE_PEDIDO = re.compile(r"(\d{1,7}(?:[.,]\d{1,2})?)\s*(?:€|eur\b|euros?\b)", re.IGNORECASE)


def importe_propuesto(pagado: Any, texto: str) -> Decimal:
    """Lo que pide el cliente si lo dice; si no, lo que la tienda da sin firma por defecto.

    La regla de la tienda decide de verdad (y un encargado, si pasa de su máximo).
    """
    encontrado = RE_IMPORTE_PEDIDO.search(texto)
    pedido = cantidad(encontrado.group(1).replace(",", ".")) if encontrado else None
    base = cantidad(pagado) or dinero.CERO
    automatico = min((base * VALE_PORCENTAJE_MAX_DEFECTO / 100).quantize(Decimal("0.01"), rounding=ROUND_DOWN),
                     VALE_IMPORTE_MAX_DEFECTO)
    return pedido or automatico


def motivo_del_texto(texto: str) -> str:
    """El motivo, del propio mensaje sin el número de pedido (la tarjeta del encargado lo muestra)."""
    sin_pedido = re.sub(r"\b(?:del|el|en el)\s+pedido\b", " ", RE_PEDIDO.sub(" ", texto), flags=re.IGNORECASE)
    motivo = limpiar_cola(re.sub(r"^[\s,.;:]+|\s+(?=[\s,.;:])", "", sin_pedido))[:500]
    return motivo or "compensación por una incidencia con el pedido"


def no_posible(pedido: str | None, estado: Any) -> str:
    if estado == "cancelado":
        return (f"El pedido {pedido} está cancelado: no puedo darte un vale de compensación por él. "
                "Si es por otro pedido, dime su número.")
    return (
        f"El pedido {pedido} aún no se ha entregado (estado: {estado}), así que todavía no puedo "
        "compensarte con un vale. Cuando lo recibas, si algo no está bien, escríbeme y lo vemos."
    )


def elegir_producto(pedido: str | None, lineas_pedido: Sequence[dict]) -> str:
    nombres = "; ".join(str(linea.get("nombre")) for linea in lineas_pedido)
    return f"¿Qué producto del pedido {pedido} tiene el problema? Contiene: {nombres}."


def redactar(pedido: str | None, llamada: Llamada) -> str:
    datos = ejecutada(VALE.offline.palabra, VALE.offline.clave_numero, pedido, llamada)
    if isinstance(datos, str):
        return datos
    codigo = datos[VALE.offline.clave_numero]
    importe = eur(datos.get("importe"))
    pedido_final = datos.get("pedido", pedido)
    caduca = fecha(datos.get("caduca"))
    detalle = (
        f"un vale de compensación de {importe} por el pedido {pedido_final}. Tu código es {codigo}: "
        f"puedes usarlo en la tienda hasta el {caduca}. Te quedas el producto; no tienes que devolver nada."
    )
    if llamada.resultado.editado:
        return f"Un encargado ha revisado y ajustado la compensación. Te he dado {detalle}"
    if datos.get("repetido"):
        return f"Ese vale ya estaba emitido: {detalle[0].upper()}{detalle[1:]}"
    return f"Te he dado {detalle}"
