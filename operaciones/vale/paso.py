"""El paso del modelo offline para un vale: qué consultar, qué preguntar o qué proponer."""

from __future__ import annotations

from agente.modelo_offline.articulo import otro_articulo
from agente.modelo_offline.lectura import MOTIVO_POR_DEFECTO, Tarea, lineas_mencionadas
from agente.modelo_offline.pasos import Contexto, Paso, fin, hecha_o_pedido, lineas_de
from nucleo import dinero
from operaciones.vale import frases
from operaciones.vale.declaracion import VALE

__all__ = ["paso"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, VALE.herramienta, frases.redactar, "darte un vale de compensación")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") != "entregado":  # la herramienta lo rechazaría: se dice antes
        return fin(frases.no_posible(tarea.pedido, pedido.get("estado")))
    todas = lineas_de(pedido)
    if otro := otro_articulo(tarea, todas):
        return otro
    elegidas = lineas_mencionadas(todas, tarea.texto)
    if not elegidas and len(todas) == 1:
        elegidas = todas
    if len(elegidas) != 1:
        return fin(frases.elegir_producto(tarea.pedido, todas))
    linea = elegidas[0]
    importe = frases.importe_propuesto(linea.get("importe"), tarea.texto)
    if importe <= 0:
        return fin(frases.no_posible(tarea.pedido, pedido.get("estado")))
    motivo = tarea.motivo if tarea.motivo != MOTIVO_POR_DEFECTO else frases.motivo_del_texto(tarea.texto)
    return ctx.pedir(VALE.herramienta, {"pedido": tarea.pedido, "linea": int(linea["linea"]),
                                        "importe": dinero.texto(importe), "motivo": motivo})
