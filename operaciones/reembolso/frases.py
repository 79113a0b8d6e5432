"""Lo que lee el cliente de un reembolso (modelo offline)."""

from __future__ import annotations

from agente.modelo_offline.redaccion import ejecutada, eur
from agente.modelo_offline.resultados import Llamada
from operaciones.reembolso.declaracion import REEMBOLSO

__all__ = ["redactar", "sin_reembolsable"]


def sin_reembolsable(pedido: str | None, datos: dict) -> str:
    return (
        f"El pedido {pedido} no tiene importe pendiente de reembolsar "
        f"(ya reembolsado: {eur(datos.get('reembolsado', '0'))}). Si quieres saber cuándo te llega "
        "ese dinero, pregúntamelo; si es otro pedido, dime su número."
    )


def redactar(pedido: str | None, llamada: Llamada) -> str:
    datos = ejecutada(REEMBOLSO.offline.palabra, REEMBOLSO.offline.clave_numero, pedido, llamada)
    if isinstance(datos, str):
        return datos
    numero = datos[REEMBOLSO.offline.clave_numero]
    importe = eur(datos.get("importe"))
    pedido_final = datos.get("pedido", pedido)
    if llamada.resultado.editado:
        # Lo propuesto antes de la edición es interno (lo ve el encargado, no el cliente):
        # el cliente lee lo que se tramitó y, si el encargado la escribió, su nota.
        return (
            f"Un encargado ha revisado y ajustado la operación antes de tramitarla. "
            f"He tramitado el reembolso {numero} de {importe} del pedido {pedido_final}."
        )
    if datos.get("repetido"):
        return f"Ese reembolso ya estaba tramitado: {numero} de {importe} del pedido {pedido_final}."
    return f"He tramitado el reembolso {numero} de {importe} del pedido {pedido_final}."
