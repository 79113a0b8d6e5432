"""El paso del modelo offline para un cambio de producto, y el «sí» o el «no» a una propuesta.

Qué consultar (el pedido, las alternativas en stock), qué preguntar (qué producto, por cuál)
o qué proponer; «por una más barata» no dice cuál: se propone una y se espera el «sí»
(``respuesta``). ``partir`` separa lo que tiene de lo que quiere (lo usa ``lectura``).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from langchain_core.messages import BaseMessage

from agente.modelo_offline.articulo import otro_articulo
from agente.modelo_offline.comprension import RE_NO, RE_SI
from agente.modelo_offline.lectura import (
    PATRONES,
    RE_PEDIDO,
    Tarea,
    lineas_mencionadas,
    normalizar,
    puntuacion,
)
from agente.modelo_offline.pasos import Contexto, Paso, fin, hecha_o_pedido, lineas_de
from agente.modelo_offline.redaccion import error
from agente.modelo_offline.resultados import cantidad
from herramientas.registro import STOCK_ALTERNATIVAS
from nucleo import dinero
from operaciones.sustitucion import frases
from operaciones.sustitucion.declaracion import CAMBIO

__all__ = ["partir", "paso", "respuesta"]

partir = frases.partir


def _elegir(alternativas: list[dict], deseo: frases.Deseo) -> dict | None:
    if deseo.skus:
        return next((a for a in alternativas if str(a.get("sku", "")).upper() in deseo.skus), None)

    def diferencia(a: dict) -> Decimal:
        return cantidad(a.get("diferencia")) or dinero.CERO

    if deseo.precio == "menor":
        baratas = [a for a in alternativas if diferencia(a) < 0]
        return min(baratas, key=diferencia) if baratas else None
    if deseo.precio == "igual":
        return next((a for a in alternativas if diferencia(a) == 0), None)
    if deseo.precio == "mayor":
        caras = [a for a in alternativas if diferencia(a) > 0]
        return max(caras, key=diferencia) if caras else None
    puntos = [(puntuacion(str(a.get("nombre", "")), deseo.texto), a) for a in alternativas]
    mejor = max((p for p, _ in puntos), default=0)
    return next((a for p, a in puntos if p == mejor), None) if mejor else None


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, CAMBIO.herramienta, frases.sustitucion, "tramitar el cambio")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") != "entregado":  # la herramienta lo rechazaría: se dice antes
        return fin(frases.cambio_no_posible(tarea.pedido, pedido.get("estado")))
    todas = lineas_de(pedido)
    if otro := otro_articulo(tarea, todas):
        return otro
    elegidas = lineas_mencionadas(todas, tarea.origen)
    if not elegidas and len(todas) == 1:
        elegidas = todas
    if len(elegidas) != 1:
        return fin(frases.elegir_producto(tarea.pedido, todas))
    linea = elegidas[0]
    sku = str(linea.get("sku"))
    if linea.get("unidades_libres") == 0:  # ya reembolsada o cambiada: la herramienta lo rechazaría
        return fin(frases.cambio_ya_compensado(tarea.pedido, str(linea.get("nombre", sku)), sku))
    consulta = ctx.buscar(STOCK_ALTERNATIVAS, sku=sku)
    if consulta is None:
        return ctx.pedir(STOCK_ALTERNATIVAS, {"sku": sku})
    if consulta.resultado.tipo != "ok" or not isinstance(consulta.resultado.datos, dict):
        return fin(error(f"consultar alternativas para {sku}", consulta.resultado))
    alternativas = [a for a in consulta.resultado.datos.get("alternativas") or [] if isinstance(a, dict)]
    nombre = str(linea.get("nombre", sku))
    if not alternativas:
        return fin(frases.sin_alternativas(nombre, sku))
    if not tarea.deseo.strip():
        return fin(frases.opciones_de_cambio(nombre, sku, tarea.pedido, alternativas))
    deseo = frases.leer_deseo(tarea.deseo)
    elegida = _elegir(alternativas, deseo)
    if elegida is None:
        return fin(frases.sin_encaje(nombre, sku, tarea.deseo))
    if not deseo.skus:
        # «Por una más barata» no dice cuál: se propone una y se espera el «sí» del cliente.
        propuesta = {"sku_original": sku, "pedido": tarea.pedido, "sku_nuevo": str(elegida.get("sku"))}
        return Paso(tipo="fin", texto=frases.confirmar_cambio(nombre, sku, tarea.pedido, elegida, alternativas),
                    args={frases.PROPUESTA_CAMBIO: propuesta})
    return ctx.pedir(
        CAMBIO.herramienta, {"pedido": tarea.pedido, "sku_original": sku, "sku_nuevo": str(elegida.get("sku"))}
    )


def respuesta(texto: str, anteriores: Sequence[BaseMessage]) -> list[Tarea] | None:
    """Lo que responde a la propuesta de cambio de la última respuesta: «sí» es el cambio con
    los SKU ya nombrados (la confirmación explícita); «no», la anulación. None si no hay
    propuesta o el mensaje pide otra cosa."""
    propuesta = frases.propuesta_pendiente(anteriores)
    if not propuesta:
        return None
    sku, pedido, sku_nuevo = propuesta
    normal = normalizar(texto)
    otras = {intencion for intencion, patron in PATRONES if patron.search(normal)}
    if not otras and RE_SI.search(normal):
        return [Tarea(tipo=CAMBIO.offline.intencion, pedido=pedido, texto=texto, origen=sku, deseo=sku_nuevo)]
    # «Cancela» sin nombrar un pedido responde a la propuesta: no cancela el pedido.
    cancela = {intencion for intencion, patron in PATRONES if patron.search("cancela")}
    if RE_NO.search(normal) and (not otras or (otras == cancela and not RE_PEDIDO.search(texto))):
        return [Tarea(tipo="anulada", pedido=pedido, texto=texto)]
    return None
