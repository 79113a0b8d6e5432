"""Las piezas de texto de la petición de firma, para ``politicas.descripcion`` y para la
redacción propia de una operación (``describir`` en su ``regla.py``).

Todo lo que llega del cliente o del modelo pasa por ``del_cliente``: una línea, acotada,
nunca un volcado de argumentos. El dinero, con ``nucleo.dinero.eur``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["ESTADOS", "MAX_TEXTO_CLIENTE", "del_cliente", "diferencia", "hace", "lineas_pedidas", "pedido"]

MAX_TEXTO_CLIENTE = 300

ESTADOS = {"pendiente": "pendiente de envío", "enviado": "enviado, sin entregar", "cancelado": "cancelado"}


def del_cliente(valor: Any) -> str:
    """Texto del cliente o del modelo, en una línea y acotado (no es un volcado de args)."""
    texto = " ".join(str(valor).split())
    if len(texto) > MAX_TEXTO_CLIENTE:
        texto = texto[: MAX_TEXTO_CLIENTE - 1] + "…"
    return texto


def diferencia(importe: Decimal) -> str:
    """La diferencia de un cambio sin signo: quién la paga lo dice el texto."""
    if importe > 0:
        return f"Diferencia de precio: {dinero.eur(importe)}, la paga el cliente."
    if importe < 0:
        return f"Diferencia de precio: {dinero.eur(-importe)}, se le devuelve al cliente."
    return "Diferencia de precio: ninguna (mismo precio)."


def hace(dias: int) -> str:
    return "hoy" if dias <= 0 else ("hace 1 día" if dias == 1 else f"hace {dias} días")


def lineas_pedidas(valor: Any) -> list[int] | None:
    if not isinstance(valor, list | tuple) or not valor:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in valor):
        return None
    return list(valor)


def pedido(args: Mapping[str, Any], datos: Mapping[str, Any]) -> str:
    """La línea del pedido: compra, entrega (o su estado) y total; o que no es del cliente."""
    if datos["pedido"] is None:
        return f"Pedido {del_cliente(args.get('pedido', '(sin indicar)'))}: no encontrado para este cliente."
    if datos["entregado_en"]:
        entrega = f"entregado {datos['entregado_en']} ({hace(datos['dias_entrega'])})"
    else:
        entrega = f"entrega: {ESTADOS.get(datos['estado'], datos['estado'])}"
    return (
        f"Pedido {datos['pedido']}: compra {datos['fecha']}, {entrega}; "
        f"total {dinero.eur(datos['importe'])}."
    )
