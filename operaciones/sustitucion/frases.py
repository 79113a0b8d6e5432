"""Lo que lee el cliente de un cambio de producto (modelo offline), y lo que quiere a cambio.

``leer_deseo`` lee por qué quiere cambiar (SKU nombrados o una preferencia de precio: «por una
más barata», «del mismo precio», «más cara», «por la CAF-004»); ``partir`` separa lo que
tiene de lo que quiere. Una propuesta que espera un «sí» lleva sus SKU en el mensaje
(``PROPUESTA_CAMBIO``) y ``propuesta_pendiente`` la lee de ahí.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agente.modelo_offline.redaccion import diferencia, ejecutada, eur, lineas
from agente.modelo_offline.resultados import Llamada, cantidad
from agente.modelo_offline.texto import RE_SKU, limpiar_cola, normalizar, texto_de
from nucleo import dinero
from operaciones.sustitucion.declaracion import CAMBIO

__all__ = [
    "PROPUESTA_CAMBIO",
    "RE_PROPUESTA",
    "Deseo",
    "cambio_no_posible",
    "cambio_ya_compensado",
    "confirmar_cambio",
    "elegir_producto",
    "leer_deseo",
    "opciones_de_cambio",
    "partir",
    "propuesta_pendiente",
    "redactar",
    "sin_alternativas",
    "sin_encaje",
    "sustitucion",
]

RE_CAMBIO = re.compile(CAMBIO.offline.patron)
RE_POR = re.compile(r"\b(?:por|en vez de|en lugar de)\b")
RE_BARATA = re.compile(r"\b(?:barat\w*|economic\w*|menos car[ao]s?|mas asequible\w*|inferior\w*|"
                       r"(?:cuest|salg|valg|sea)\w*\s+menos)\b")
RE_IGUAL = re.compile(r"\b(?:mismo precio|misma precio|mismo importe|mismo valor|igual\w*|equivalente\w*|lo mismo)\b")
RE_CARA = re.compile(r"\b(?:mas car[ao]s?|mejor\w*|superior\w*|gama alta|car[ao]s?)\b")
# Dónde deja el modelo offline la propuesta de cambio que espera un «sí» (SKU y pedido).
PROPUESTA_CAMBIO = "propuesta_cambio"
RE_PROPUESTA = re.compile(
    r"¿Confirmas el cambio de ([A-Z]{3}-\d{3}) del pedido (P-\d{8}-\d{4}) por la ([A-Z]{3}-\d{3})\?"
)


@dataclass(frozen=True, kw_only=True)
class Deseo:
    """Por qué quiere cambiar el cliente: SKUs nombrados o una preferencia de precio."""

    texto: str
    skus: frozenset[str]
    precio: Literal["menor", "igual", "mayor"] | None


def leer_deseo(texto: str) -> Deseo:
    normal = normalizar(texto)
    precio: Literal["menor", "igual", "mayor"] | None = None
    if RE_BARATA.search(normal):
        precio = "menor"
    elif RE_IGUAL.search(normal):
        precio = "igual"
    elif RE_CARA.search(normal):
        precio = "mayor"
    return Deseo(texto=texto, skus=frozenset(s.upper() for s in RE_SKU.findall(texto)), precio=precio)


def partir(fragmento: str) -> tuple[str, str]:
    """«cambiar la cafetera por una más barata» -> ("cambiar la cafetera ", " una más barata")."""
    normal = normalizar(fragmento)
    verbo = RE_CAMBIO.search(normal)
    corte = RE_POR.search(normal, verbo.end() if verbo else 0)
    if not corte:  # «que sea la CAF-004», «una que cueste menos»: lo que quiere está en la frase
        deseo = leer_deseo(fragmento)
        return fragmento, fragmento if deseo.precio or deseo.skus else ""
    return fragmento[: corte.start()], fragmento[corte.end():]


def propuesta_pendiente(anteriores: Sequence[BaseMessage]) -> tuple[str, str, str] | None:
    """(sku_original, pedido, sku_nuevo) si la última respuesta del asistente pide confirmar un cambio.

    La propuesta va en ``additional_kwargs[PROPUESTA_CAMBIO]`` (el texto nombra los productos,
    no sus SKU); en historias de antes, en el texto (``RE_PROPUESTA``)."""
    for mensaje in reversed(anteriores):
        if isinstance(mensaje, HumanMessage):
            return None
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls:
            propuesta = (mensaje.additional_kwargs or {}).get(PROPUESTA_CAMBIO)
            if isinstance(propuesta, dict) and all(propuesta.get(k) for k in ("sku_original", "pedido", "sku_nuevo")):
                return str(propuesta["sku_original"]), str(propuesta["pedido"]), str(propuesta["sku_nuevo"])
            encontrada = RE_PROPUESTA.search(texto_de(mensaje))
            return (encontrada.group(1), encontrada.group(2), encontrada.group(3)) if encontrada else None
    return None


def elegir_producto(pedido: str | None, lineas_pedido: Sequence[dict]) -> str:
    return f"¿Qué producto del pedido {pedido} quieres cambiar? Contiene: {lineas(lineas_pedido)}."


def cambio_no_posible(pedido: str | None, estado: Any) -> str:
    if estado == "cancelado":
        return (f"El pedido {pedido} está cancelado: no se puede cambiar ningún producto. "
                "Si necesitas otra cosa de ese pedido, dímelo.")
    return (
        f"El pedido {pedido} todavía no consta como entregado, y solo se puede cambiar un "
        "producto que ya has recibido. Cuando te llegue, escríbenos y lo vemos."
    )


def cambio_ya_compensado(pedido: str | None, nombre: str, sku: str) -> str:
    return (
        f"No puedo cambiar {nombre} del pedido {pedido}: ya se reembolsó o se cambió, "
        "y cada unidad se compensa una sola vez. Si le pasa algo a lo que recibiste, dímelo y lo vemos."
    )


def sin_alternativas(nombre: str, sku: str) -> str:
    return (
        f"Lo siento, ahora mismo no hay ninguna alternativa en stock para {nombre} "
        "en tu tienda. Si lo prefieres, puedo tramitar la devolución."
    )


def opciones_de_cambio(nombre: str, sku: str, pedido: str | None, alternativas: Sequence[dict]) -> str:
    """Las alternativas por su nombre (el cliente no lee SKUs); se elige nombrándola o por
    precio («una más barata»). Los precios son los de su tienda (``stock_alternativas``):
    otra tienda puede vender lo mismo a otro precio, y el texto lo dice."""
    opciones = "; ".join(
        f"{a.get('nombre')} ({eur(a.get('pvp'))}, {diferencia(a.get('diferencia'))})"
        for a in alternativas
    )
    return (
        f"Para {nombre} tenemos en stock en tu tienda, con sus precios allí: {opciones}. ¿Por cuál quieres "
        f"cambiarlo? Por ejemplo: «cambiar {nombre} del pedido {pedido} por "
        f"{alternativas[0].get('nombre')}» o «por una más barata»."
    )


def confirmar_cambio(
    nombre: str, sku: str, pedido: str | None, elegida: dict, alternativas: Sequence[dict]
) -> str:
    """La propuesta que espera un «sí», con los productos por su nombre. Los SKU van aparte,
    en el mensaje (``propuesta_cambio``, ver ``plan``), y ``lectura`` los lee de ahí."""
    otras = "; ".join(
        f"{a.get('nombre')} ({eur(a.get('pvp'))})" for a in alternativas if a is not elegida
    )
    resto = f" También hay: {otras}." if otras else ""
    return (
        f"Para {nombre} te propongo {elegida.get('nombre')} "
        f"({eur(elegida.get('pvp'))} en tu tienda, {diferencia(elegida.get('diferencia'))}).{resto} "
        f"¿Confirmas el cambio de {nombre} del pedido {pedido} por {elegida.get('nombre')}? "
        "Responde «sí» para tramitarlo o dime otra opción."
    )


def sin_encaje(nombre: str, sku: str, deseo: str) -> str:
    return (
        f"Lo siento, no hay ninguna alternativa en stock para {nombre} que "
        f"encaje con lo que pides ({limpiar_cola(deseo.strip())}). Si quieres, te digo las que hay "
        "o tramito la devolución."
    )


def _diferencia_de_precio(valor: Any) -> str:
    numero = cantidad(valor) or dinero.CERO
    if numero < 0:
        return f"Diferencia de precio a tu favor: {eur(-numero)}."
    if numero > 0:
        return f"Diferencia de precio a tu cargo: {eur(numero)}."
    return "No hay diferencia de precio."


def _liquidacion(datos: dict) -> str:
    """Lo que pasa con la diferencia, tal como lo dice la herramienta (``liquidacion``)."""
    liq = datos.get("liquidacion") if isinstance(datos.get("liquidacion"), dict) else {}
    importe, numero = eur(liq.get("importe")), liq.get("numero")
    pendiente = liq.get("estado") == "pendiente"
    if liq.get("tipo") == "reembolso":
        if pendiente:
            return (f"La devolución de la diferencia ({importe}, reembolso {numero}) queda "
                    "pendiente: se completará sola y te avisaremos por aquí.")
        return f"Te hemos devuelto la diferencia, {importe}, a tu medio de pago original (reembolso {numero})."
    if liq.get("tipo") == "cobro":
        if pendiente and liq.get("enlace_pago"):
            return (f"Para completar el cambio, paga la diferencia ({importe}, cobro {numero}) en "
                    f"este enlace: {liq['enlace_pago']} . El cambio se hará en cuanto se confirme "
                    "el pago; si el enlace caduca sin pagarse, el cambio se anula.")
        if pendiente:
            return (f"El cobro de la diferencia ({importe}, cobro {numero}) queda pendiente: el "
                    "cambio se hará en cuanto se confirme y te avisaremos por aquí.")
        return f"Te hemos cobrado la diferencia, {importe} (cobro {numero})."
    if liq.get("tipo") == "renunciada":
        return "La diferencia es tan pequeña que la tienda no la cobra ni la devuelve."
    return ""


def sustitucion(pedido: str | None, llamada: Llamada) -> str:
    datos = ejecutada(CAMBIO.offline.palabra, CAMBIO.offline.clave_numero, pedido, llamada)
    if isinstance(datos, str):
        return datos
    liquidacion = datos.get("liquidacion") if isinstance(datos.get("liquidacion"), dict) else {}
    espera_pago = liquidacion.get("tipo") == "cobro" and liquidacion.get("estado") == "pendiente"
    nuevo = datos.get("nombre_nuevo") or "el producto nuevo"
    # Con el cobro pendiente el cambio aún no está hecho: no se promete el producto todavía.
    recibiras = (f"cuando se confirme el pago de la diferencia recibirás {nuevo}" if espera_pago
                 else f"recibirás {nuevo}")
    partes = [
        f"He tramitado el cambio {datos[CAMBIO.offline.clave_numero]} del pedido "
        f"{datos.get('pedido', pedido)}: {recibiras}.",
        _diferencia_de_precio(datos.get("diferencia")),
        _liquidacion(datos),
    ]
    cuerpo = " ".join(p for p in partes if p)
    if llamada.resultado.editado:
        return f"Un encargado ha revisado y ajustado el cambio antes de tramitarlo. {cuerpo}"
    if datos.get("repetido"):
        return f"Ese cambio ya estaba tramitado. {cuerpo}"
    return cuerpo


# Lo que lee el cliente del resultado de la herramienta (el nombre común de las frases).
redactar = sustitucion
