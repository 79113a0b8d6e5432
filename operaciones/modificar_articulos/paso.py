"""El paso del modelo offline para otra talla o color: qué consultar, qué preguntar o qué proponer."""

from __future__ import annotations

from agente.modelo_offline.lectura import Tarea, lineas_mencionadas
from agente.modelo_offline.pasos import Contexto, Paso, fin, hecha_o_pedido, lineas_de
from operaciones.modificar_articulos import frases
from operaciones.modificar_articulos.declaracion import MODIFICACION

__all__ = ["paso"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, MODIFICACION.herramienta, frases.redactar, "cambiar la talla o el color")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") != "pendiente":  # la herramienta lo rechazaría: se dice antes
        return fin(frases.no_pendiente(tarea.pedido, pedido.get("estado")))
    variante = frases.leer_variante(tarea.texto)
    if not variante:
        return fin(frases.pedir_variante(tarea.pedido))
    todas = lineas_de(pedido)
    elegidas = lineas_mencionadas(todas, tarea.texto) or (todas if len(todas) == 1 else [])
    if len(elegidas) != 1:
        return fin(frases.elegir_articulo(tarea.pedido, todas))
    return ctx.pedir(MODIFICACION.herramienta, {"pedido": tarea.pedido, "linea": int(elegidas[0]["linea"]),
                                                **variante})
