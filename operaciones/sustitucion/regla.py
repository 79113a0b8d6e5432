"""Regla «sustitucion»: cambiar un producto del pedido por otro.

Las mismas condiciones que una devolución (la vista ``elegibilidad_pedidos``): pide firma
si el pedido no es del cliente, un producto no existe (o no tiene precio en la tienda del
pedido: ``precios_tienda``, sql/030), el original no está en el pedido, el nuevo cuesta
más que el original por encima de lo que admite la tienda, la entrega queda fuera del
plazo de la tienda, o el pedido ya tuvo alguna compensación (reembolso o cambio). Un
pedido sin entregar o cancelado, o un producto cuyas unidades ya se reembolsaron o
cambiaron todas, no pide firma: ``sustituir`` lo rechaza sin escribir nada
(``razon_imposible``), y pedir a un encargado algo imposible solo le haría perder el tiempo.
Los precios vistos al proponer se guardan en los umbrales: ``sustituir`` caduca la firma
si cambian antes de ejecutarse.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero
from operaciones.sustitucion.declaracion import OPERACION
from politicas import redaccion
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_rechazadas,
    motivo_vales,
    motivos_de_elegibilidad,
    razon_imposible,
    texto_de,
)

__all__ = ["REGLA", "SUSTITUCION", "describir"]


def parametros(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "sku_original": texto_de(args.get("sku_original")),
        "sku_nuevo": texto_de(args.get("sku_nuevo")),
    }


def _no_encontrado(cual: str, nombre: str | None) -> str:
    if nombre:  # existe, pero sin precio en la tienda del pedido
        return f"{nombre} no tiene precio en la tienda del pedido"
    return f"el producto {cual} no existe en el catálogo"


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    # El personal lee el producto por su nombre; el código, solo si no existe.
    nombre_original = h.get("nombre_original") or "ese producto"
    original, nuevo = h["pvp_original"], h["pvp_nuevo"]
    maximo = h["diferencia_max_sustitucion"]
    motivos = []
    if not h["pedido_existe"]:
        motivos.append(MOTIVO_PEDIDO_NO_ENCONTRADO)
    if original is None:
        motivos.append(_no_encontrado("original", h.get("nombre_original")))
    elif h["pedido_existe"] and not h["sku_original_en_pedido"]:
        motivos.append(f"{nombre_original} no está en el pedido")
    if nuevo is None:
        motivos.append(_no_encontrado("nuevo", h.get("nombre_nuevo")))
    diferencia = nuevo - original if original is not None and nuevo is not None else None
    if diferencia is not None and diferencia > maximo:
        limite = f" (límite {dinero.eur(maximo)})" if maximo > 0 else ""
        motivos.append(f"el producto nuevo cuesta {dinero.eur(diferencia)} más que el original{limite}")
    limite_reembolso = h["limite_reembolso"]
    if diferencia is not None and -diferencia > limite_reembolso:
        # El dinero que sale por un cambio a algo más barato cuenta como un reembolso.
        motivos.append(f"el cambio devuelve {dinero.eur(-diferencia)} y supera el límite de "
                       f"{dinero.eur(limite_reembolso)} de la tienda para devolver dinero")
    umbrales = {
        "diferencia_max_sustitucion": dinero.texto(maximo),
        "limite_reembolso": dinero.texto(limite_reembolso),
        "pvp_original": dinero.texto(original) if original is not None else None,
        "pvp_nuevo": dinero.texto(nuevo) if nuevo is not None else None,
    }
    eleg = h.get("elegibilidad")
    compensado = (
        f"todas las unidades de {nombre_original} del pedido ya se reembolsaron o se cambiaron"
        if h["pedido_existe"] and h["sku_original_en_pedido"] and h.get("libres_sku_original") == 0
        else None
    )
    razon = razon_imposible(eleg, sin_unidades=compensado) if h["pedido_existe"] else None
    if razon:
        return imposible(razon, umbrales, diferencia)  # lo rechaza la herramienta, sin efecto
    ya_en_revision = en_revision(h, umbrales, diferencia) if h["pedido_existe"] else None
    if ya_en_revision:
        return ya_en_revision
    if eleg is not None:
        motivos.extend(motivos_de_elegibilidad(eleg))
    vales = motivo_vales(h.get("vales_pedido"))  # el vale no ocupa la unidad: lo ve una persona
    if vales:
        motivos.append(vales)
    rechazadas = motivo_rechazadas(h)
    if rechazadas:
        motivos.append(rechazadas)
    return Dictamen(
        motivos=tuple(motivos),
        umbrales=umbrales,
        # El dinero que mueve el cambio, en cualquier sentido: lo que se cobra o lo que se
        # devuelve (la firma autoriza las dos cosas); 0 lo firma el rol más bajo; None (precio
        # desconocido), el más alto (politicas.matriz_autoridad).
        importe=abs(diferencia) if diferencia is not None else None,
    )


# Nombre y hechos, los de la operación declarada (operaciones/sustitucion/declaracion.py).
SUSTITUCION = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, parametros=parametros, decidir=decidir)
REGLA = SUSTITUCION


def describir(args: Mapping[str, Any], datos: Mapping[str, Any], cliente: str) -> list[str]:
    """Lo que lee quien firma: el pedido, los productos original y nuevo con su precio en la
    tienda del pedido y quién paga la diferencia (``politicas.descripcion``)."""
    productos: Mapping[str, Mapping[str, Any]] = datos["productos"]
    texto = [f"Sustitución de producto para {cliente}.", redaccion.pedido(args, datos)]

    def producto(clave: str, rotulo: str) -> Decimal | None:
        sku = args.get(clave)
        datos_sku = productos.get(sku) if isinstance(sku, str) else None
        if datos_sku is None:
            texto.append(f"{rotulo}: {redaccion.del_cliente(sku or '(sin indicar)')} (no existe en el catálogo).")
            return None
        if datos_sku["pvp"] is None:  # la tienda del pedido no lo vende (sql/030)
            texto.append(f"{rotulo}: {datos_sku['nombre']} ({sku}), sin precio en la tienda del pedido.")
            return None
        texto.append(f"{rotulo}: {datos_sku['nombre']} ({sku}), {dinero.eur(datos_sku['pvp'])}.")
        return dinero.cuantizar(datos_sku["pvp"])

    original = producto("sku_original", "Original")
    nuevo = producto("sku_nuevo", "Nuevo")
    if original is not None and nuevo is not None:
        texto.append(redaccion.diferencia(nuevo - original))
    if args.get("motivo"):
        texto.append(f"Motivo del cliente: «{redaccion.del_cliente(args['motivo'])}».")
    return texto
