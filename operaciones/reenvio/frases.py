"""Lo que lee el cliente de un reenvío sin cargo (modelo offline)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agente.modelo_offline.redaccion import ejecutada
from agente.modelo_offline.resultados import Llamada
from agente.modelo_offline.texto import normalizar
from operaciones.reenvio.declaracion import REENVIO

__all__ = ["PROPUESTA_REENVIO", "RE_ROTO", "no_posible", "elegir_producto", "ofrecido", "opciones", "pide_opciones",
           "redactar", "sin_opciones"]

# «¿Qué podéis hacer?»: quiere saber qué se puede hacer antes de que se haga nada.
RE_OPCIONES = re.compile(
    r"\bque (?:podeis|puedes|puede|pueden|podemos|puedo|se puede) hacer\b|\bque (?:opciones|soluci\w+|alternativas)\b"
    r"|\bque (?:hago|me (?:ofreceis|proponeis|recomendais))\b"
)
# «Llegó roto» frente a «no llegó» (sobre texto normalizado).
RE_ROTO = re.compile(
    r"\b(?:rot[oa]s?|romp\w*|destroz\w*|inservible\w*|aplastad\w*|mal estado|hech[oa]s? pedazos|"
    r"no funciona\w*|no va\b|defectuos\w*|estropead\w*|hech[oa]s? (?:polvo|trizas|mierda)|partid[oa]s?|"
    r"rajad[oa]s?|destrozad\w*|roto\b)"
)
# Dónde deja el modelo offline el reenvío ofrecido que espera un «sí» (pedido y queja original).
PROPUESTA_REENVIO = "propuesta_reenvio"


def pide_opciones(texto: str) -> bool:
    return bool(RE_OPCIONES.search(normalizar(texto)))


def sin_opciones(texto: str) -> str:
    """La queja sin la pregunta por las opciones: lo que se tramita tras el «sí»."""
    trozos, desde = [], 0
    for encontrada in RE_OPCIONES.finditer(normalizar(texto)):
        trozos.append(texto[desde:encontrada.start()])
        desde = encontrada.end()
    return re.sub(r"\s*¿\s*\?", "", "".join([*trozos, texto[desde:]])).strip()


def opciones(pedido: str | None, estado: Any, lineas_pedido: Sequence[dict]) -> str:
    """Una sola pregunta con lo que la tienda permite a quien no ha recibido su pedido."""
    nombres = ", ".join(f"«{linea.get('nombre')}»" for linea in lineas_pedido)
    if estado == "entregado":
        return (f"El pedido {pedido} consta como entregado. Si no te ha llegado, puedo pedir que te reenviemos "
                f"{nombres} sin cargo (lo revisa antes un encargado), o puedes esperar por si aparece y "
                "pedir después la devolución. ¿Te lo reenvío?")
    return (f"Siento que aún no te haya llegado el pedido {pedido}. Puedo reenviarte {nombres} sin ningún "
            "cargo, o puedes esperar unos días más por si el transportista lo entrega; devolverte el dinero "
            "solo es posible cuando conste como entregado. ¿Te lo reenvío?")


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


def ofrecido(anteriores: Sequence[BaseMessage]) -> dict | None:
    """El reenvío que ofreció la última respuesta (``opciones``), si espera un «sí»."""
    for mensaje in reversed(anteriores):
        if isinstance(mensaje, HumanMessage):
            return None
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls:
            oferta = (mensaje.additional_kwargs or {}).get(PROPUESTA_REENVIO)
            return oferta if isinstance(oferta, dict) and oferta.get("pedido") else None
    return None
