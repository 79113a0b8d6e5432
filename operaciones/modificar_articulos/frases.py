"""Lo que lee el cliente de una modificación de artículos y cómo se lee la talla o el color
del mensaje (modelo offline). Funciones puras sobre texto."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agente.modelo_offline.redaccion import ejecutada, eur
from agente.modelo_offline.resultados import Llamada
from operaciones.modificar_articulos.declaracion import MODIFICACION

__all__ = ["elegir_articulo", "leer_variante", "no_pendiente", "pedir_variante", "redactar"]

RE_TALLA = re.compile(r"\btalla\s+(xxs|xs|s|m|l|xl|xxl|xxxl|\d{2})\b|\bla\s+(xxs|xs|s|m|l|xl|xxl)\b(?=\s*(?:[?.!,]|$|"
                      r"en\s+(?:vez|lugar)))", re.IGNORECASE)
RE_COLOR = re.compile(r"\b(?:color|en)\s+(azul|blanc[oa]|negr[oa]|roj[oa]|verde|gris|beige|marr[oó]n|rosa|"
                      r"amarill[oa]|coñac|conac)\b", re.IGNORECASE)
_COLOR = {"blanca": "blanco", "negra": "negro", "roja": "rojo", "amarilla": "amarillo", "marrón": "marron",
          "conac": "coñac"}


def leer_variante(texto: str) -> dict[str, str]:
    """La talla y el color nuevos que pide el mensaje (los que estén): {"talla": "L"}."""
    variante = {}
    if talla := RE_TALLA.search(texto):
        variante["talla"] = (talla.group(1) or talla.group(2)).upper()
    if color := RE_COLOR.search(texto):
        nombre = color.group(1).lower()
        variante["color"] = _COLOR.get(nombre, nombre)
    return variante


def pedir_variante(pedido: str | None) -> str:
    return (f"¿Qué talla o qué color quieres para el artículo del pedido {pedido}? Dímelo y miro si hay stock "
            "en tu tienda.")


def elegir_articulo(pedido: str | None, lineas_pedido: Sequence[dict]) -> str:
    nombres = "; ".join(str(linea.get("nombre")) for linea in lineas_pedido)
    return f"¿Qué artículo del pedido {pedido} quieres cambiar? Contiene: {nombres}."


def no_pendiente(pedido: str | None, estado: Any) -> str:
    if estado == "cancelado":
        return f"El pedido {pedido} está cancelado: no hay artículos que cambiar."
    que = "ya se ha entregado" if estado == "entregado" else "ya ha salido de la tienda"
    return (f"El pedido {pedido} {que}, así que ya no puedo cambiar la talla ni el color de sus artículos. "
            "Cuando lo tengas, puedes pedir el cambio por otra talla o color (un cambio tras la entrega) o "
            "devolverlo y te reembolsamos lo pagado.")


def _dinero(datos: dict) -> str:
    liquidacion = datos.get("liquidacion") or {}
    tipo, numero = liquidacion.get("tipo"), liquidacion.get("numero")
    importe = eur(liquidacion.get("importe") or datos.get("diferencia"))
    pendiente = liquidacion.get("estado") == "pendiente"
    if tipo == "cobro":
        return (f"La diferencia de {importe} se te cobra con el mismo medio de pago"
                + (f" (cobro {numero}); queda pendiente y te avisaremos por aquí." if pendiente else f" (cobro {numero})."))
    if tipo == "reembolso":
        return (f"Te devolvemos la diferencia de {importe}"
                + (f" (reembolso {numero}); queda pendiente y te avisaremos por aquí." if pendiente
                   else f" (reembolso {numero})."))
    return "Tiene el mismo precio: no hay nada que pagar ni que devolver."


def redactar(pedido: str | None, llamada: Llamada) -> str:
    datos = ejecutada(MODIFICACION.offline.palabra, MODIFICACION.offline.clave_numero, pedido, llamada)
    if isinstance(datos, str):
        return datos
    numero = datos[MODIFICACION.offline.clave_numero]
    pedido_final = datos.get("pedido", pedido)
    nuevo = datos.get("articulo_nuevo") or "el artículo que has pedido"
    anterior = datos.get("articulo_anterior") or "el de antes"
    hecho = f"el pedido {pedido_final} llevará {nuevo} en lugar de {anterior} (modificación {numero}). {_dinero(datos)}"
    if datos.get("repetido"):
        return f"Ese cambio ya estaba hecho: {hecho}"
    return f"Hecho: {hecho}"
