"""Regla «reembolso»: devolver dinero de un pedido del cliente.

Pide firma si el pedido no es del cliente, el importe no es válido o supera el límite de
la tienda, el cliente ya tiene demasiadas devoluciones recientes, o el pedido se entregó
hace más días de los que admite la tienda. Un pedido cancelado o sin entregar, o sin
ninguna unidad libre en el libro, no pide firma: ``reembolsar`` lo rechaza sin escribir
nada (``razon_imposible``), y pedir a un encargado algo imposible solo le haría perder el
tiempo.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nucleo import dinero
from operaciones.reembolso.declaracion import OPERACION
from politicas import redaccion
from politicas.reglas.base import (
    MOTIVO_PEDIDO_NO_ENCONTRADO,
    Dictamen,
    Regla,
    en_revision,
    imposible,
    motivo_compensaciones,
    motivo_rechazadas,
    motivo_vales,
    razon_imposible,
)

__all__ = ["MOTIVO_IMPORTE_NO_VALIDO", "REEMBOLSO", "REGLA", "describir"]

MOTIVO_IMPORTE_NO_VALIDO = "importe no válido"


def _dias(n: int) -> str:
    return "1 día" if n == 1 else f"{n} días"


def _devoluciones(n: int, ventana: int) -> str:
    cuantas = "1 devolución" if n == 1 else f"{n} devoluciones"
    return cuantas + (" en el último día" if ventana == 1 else f" en los últimos {ventana} días")


def _entrega(h: Mapping[str, Any]) -> str | None:
    if h["estado_pedido"] == "cancelado":
        return "pedido cancelado"
    if h["entregado_en"] is None:
        return "pedido aún no entregado"
    if h["dias_entregado"] > h["dias_desde_entrega"]:
        return f"entregado hace {_dias(h['dias_entregado'])} (límite {h['dias_desde_entrega']})"
    return None


def _sin_unidades(eleg: Mapping[str, Any]) -> str | None:
    if eleg.get("unidades_libres") == 0:
        return "todas las unidades del pedido ya se reembolsaron o se cambiaron"
    return None


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    importe = dinero.importe_o_none(args.get("importe"))
    limite = h["limite_reembolso"]
    eleg = h.get("elegibilidad")
    razon = razon_imposible(eleg, sin_unidades=_sin_unidades(eleg)) if h["pedido_existe"] and eleg else None
    if razon:
        return imposible(razon, _umbrales(h), importe)
    ya_en_revision = en_revision(h, _umbrales(h), importe)
    if ya_en_revision:
        return ya_en_revision
    motivos: list[str | None] = []
    if not h["pedido_existe"]:
        motivos.append(MOTIVO_PEDIDO_NO_ENCONTRADO)
    if importe is None:
        motivos.append(MOTIVO_IMPORTE_NO_VALIDO)
    elif importe > limite:
        motivos.append(
            f"importe {dinero.eur(importe)} supera el límite de {dinero.eur(limite)} de la tienda"
        )
    if h["devoluciones_recientes"] >= h["devoluciones_max_30d"]:
        motivos.append(_devoluciones(h["devoluciones_recientes"], h["ventana_devoluciones_dias"]))
    if h["pedido_existe"]:
        motivos.append(_entrega(h))
    if eleg is not None and eleg["sustituciones"]:
        # Un reembolso tras un cambio en el mismo pedido: lo mira una persona.
        motivos.append(motivo_compensaciones(0, eleg["sustituciones"]))
    # Un vale no ocupa la unidad (el cliente se la quedó): reembolsarla después lo ve alguien.
    motivos.append(motivo_vales(h.get("vales_pedido")))
    motivos.append(motivo_rechazadas(h))
    return Dictamen(motivos=tuple(m for m in motivos if m), umbrales=_umbrales(h), importe=importe)


def _umbrales(h: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "limite_reembolso": dinero.texto(h["limite_reembolso"]),
        "devoluciones_max_30d": h["devoluciones_max_30d"],
        "ventana_devoluciones_dias": h["ventana_devoluciones_dias"],
        "dias_desde_entrega": h["dias_desde_entrega"],
    }


# Nombre y hechos, los de la operación declarada (declaracion.py).
REEMBOLSO = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, decidir=decidir)
REGLA = REEMBOLSO


def describir(args: Mapping[str, Any], datos: Mapping[str, Any], cliente: str) -> list[str]:
    """Lo que lee quien firma: importe, pedido, las líneas a reembolsar (o todo el pedido) y el
    motivo del cliente (``politicas.descripcion``; ``datos``: su consulta del pedido)."""
    importe = dinero.importe_o_none(args.get("importe"))
    pedido = f"Reembolso de {dinero.eur(importe)}" if importe is not None else (
        f"Reembolso de importe no válido («{redaccion.del_cliente(args.get('importe'))}»)"
    )
    texto = [f"{pedido} para {cliente}.", redaccion.pedido(args, datos)]
    if datos["pedido"] is not None:
        todas: Sequence[Mapping[str, Any]] = datos["lineas"]
        pedidas = redaccion.lineas_pedidas(args.get("lineas"))
        elegidas = [ln for ln in todas if pedidas is None or ln["linea"] in pedidas]
        faltan = sorted(set(pedidas or ()) - {ln["linea"] for ln in todas})
        titulo = "Líneas a reembolsar" if pedidas is not None else "Líneas (todo el pedido)"
        detalle = "; ".join(
            f"línea {ln['linea']}: {ln['unidades']} × {ln['nombre']} ({ln['sku']}), {dinero.eur(ln['importe'])}"
            for ln in elegidas
        )
        if faltan:
            detalle += ("; " if detalle else "") + "líneas que no existen en el pedido: " + ", ".join(
                str(n) for n in faltan
            )
        texto.append(f"{titulo}: {detalle or 'ninguna'}.")
    motivo = args.get("motivo")
    texto.append(
        f"Motivo del cliente: «{redaccion.del_cliente(motivo)}»." if motivo else "Motivo del cliente: no indicado."
    )
    return texto
