"""El paso del modelo offline para cancelar un pedido: qué consultar, qué decir o qué pedir."""

from __future__ import annotations

from agente.modelo_offline.lectura import MOTIVO_POR_DEFECTO, Tarea
from agente.modelo_offline.pasos import Contexto, Paso, fin, hecha_o_pedido
from agente.modelo_offline.resultados import cantidad
from nucleo import dinero
from operaciones.cancelacion import frases
from operaciones.cancelacion.declaracion import CANCELACION

__all__ = ["paso"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, CANCELACION.herramienta, frases.redactar, "cancelar tu pedido")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") != "pendiente":  # la herramienta lo rechazaría: se dice qué hacer
        return fin(frases.no_posible(tarea.pedido, pedido.get("estado")))
    motivo = tarea.motivo if tarea.motivo != MOTIVO_POR_DEFECTO else "cancelación solicitada por el cliente"
    # Se devuelve lo pagado, lo que dice el pedido: nunca una cantidad que pida el cliente.
    importe = cantidad(pedido.get("importe")) or dinero.CERO
    return ctx.pedir(CANCELACION.herramienta, {"pedido": tarea.pedido, "importe": dinero.texto(importe), "motivo": motivo})
