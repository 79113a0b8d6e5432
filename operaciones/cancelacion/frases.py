"""Lo que lee el cliente al cancelar un pedido sin enviar (modelo offline)."""

from __future__ import annotations

import re
from typing import Any

from agente.modelo_offline.redaccion import error, eur
from agente.modelo_offline.resultados import Llamada

__all__ = ["no_posible", "redactar"]

def no_posible(pedido: str | None, estado: Any) -> str:
    """Lo que el cliente puede hacer en vez de cancelar un pedido que ya no está pendiente."""
    if estado == "enviado":
        return (
            f"El pedido {pedido} ya ha salido del almacén, así que no se puede cancelar. Puedes "
            "rechazar la entrega cuando llegue, o devolverlo cuando lo recibas y te reembolsamos "
            "lo pagado. Si no te llega, avísanos y lo revisamos como pedido perdido."
        )
    if estado == "entregado":
        return (
            f"El pedido {pedido} ya está entregado, así que no se puede cancelar. Si no lo "
            "quieres, puedes devolverlo dentro del plazo de la tienda y te reembolsamos lo pagado."
        )
    if estado == "cancelado":
        return f"El pedido {pedido} ya está cancelado; no hay nada más que cancelar."
    return (f"El pedido {pedido} no se puede cancelar en su estado actual («{estado}»). Si quieres, "
            "puedo trasladar tu consulta al encargado de la tienda.")


def redactar(pedido: str | None, llamada: Llamada) -> str:
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return f"La cancelación del pedido {pedido} sigue pendiente de revisión."
    if resultado.tipo == "rechazo":
        return (
            f"El encargado no ha aprobado la cancelación del pedido {pedido}. "
            f"Motivo: {resultado.motivo_rechazo}. Tu pedido sigue en marcha: no he cancelado nada. "
            "Cuando lo recibas, si no lo quieres, puedes devolverlo dentro del plazo de la tienda."
        )
    if resultado.tipo == "error":
        numero = re.search(r"\bCA-\d{6}\b", resultado.texto)
        if numero and "queda pendiente" in resultado.texto:
            # Cancelado, pero la pasarela no confirmó la devolución: nunca «devuelto».
            return (
                f"He cancelado tu pedido {pedido} (cancelación {numero.group(0)}), pero la devolución "
                "del importe queda pendiente de confirmar por la pasarela de pagos; te avisaremos "
                "por aquí cuando se complete."
            )
        return error(f"cancelar el pedido {pedido}", resultado)
    datos = resultado.datos
    if not isinstance(datos, dict) or not datos.get("cancelacion"):
        return f"Resultado de la cancelación del pedido {pedido}: {resultado.texto}"
    pedido_final = datos.get("pedido", pedido)
    hecho = (f"Tu pedido {pedido_final} ya estaba cancelado" if datos.get("repetido")
             else f"He cancelado tu pedido {pedido_final} entero")
    texto = f"{hecho} (cancelación {datos['cancelacion']})."
    if datos.get("reembolso"):
        texto += (f" Te devolvemos {eur(datos.get('importe_devuelto'))} a tu medio de pago original "
                  f"(reembolso {datos['reembolso']}).")
    return texto
