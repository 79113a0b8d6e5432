"""El paso del modelo offline para un reembolso: qué consultar, qué preguntar o qué pedir."""

from __future__ import annotations

from typing import Any

from agente.modelo_offline.articulo import otro_articulo
from agente.modelo_offline.lectura import Tarea, lineas_mencionadas
from agente.modelo_offline.pasos import (
    Contexto,
    Paso,
    fin,
    hecha_o_pedido,
    lineas_de,
    unidades_limitadas,
)
from agente.modelo_offline.resultados import cantidad
from nucleo import dinero
from operaciones.reembolso import frases
from operaciones.reembolso.declaracion import REEMBOLSO

__all__ = ["paso"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, REEMBOLSO.herramienta, frases.redactar, "tramitar la devolución")
    if isinstance(pedido, Paso):
        return pedido
    reembolsable = cantidad(pedido.get("reembolsable")) or dinero.CERO
    if reembolsable <= 0:
        return fin(frases.sin_reembolsable(tarea.pedido, pedido))
    todas = lineas_de(pedido)
    if otro := otro_articulo(tarea, todas):
        return otro  # «la jarra» de un pedido sin jarra: nunca se reembolsa lo que quede
    elegidas = lineas_mencionadas(todas, tarea.origen)
    args: dict[str, Any] = {"pedido": tarea.pedido, "importe": dinero.texto(reembolsable), "motivo": tarea.motivo}
    cubiertas = [(linea, unidades_limitadas(tarea.origen, linea)) for linea in elegidas or todas]
    if (elegidas and len(elegidas) < len(todas)) or any(k for _, k in cubiertas):
        # Lo de esas líneas y, si dice cuántas («una sartén»), solo esas unidades a su precio.
        importe = dinero.sumar((cantidad(linea.get("precio_unitario")) or dinero.CERO) * k if k
                               else cantidad(linea.get("importe")) or dinero.CERO for linea, k in cubiertas)
        args["importe"] = dinero.texto(min(importe, reembolsable))
        args["lineas"] = [{"linea": int(linea["linea"]), "unidades": k} if k else int(linea["linea"])
                          for linea, k in cubiertas]
    return ctx.pedir(REEMBOLSO.herramienta, args)
