"""El paso del modelo offline para un cambio de dirección: qué consultar, qué pedir o qué proponer."""

from __future__ import annotations

from agente.modelo_offline.lectura import Tarea
from agente.modelo_offline.pasos import Contexto, Paso, fin, hecha_o_pedido
from operaciones.direccion import frases
from operaciones.direccion.declaracion import DIRECCION

__all__ = ["paso"]


def paso(tarea: Tarea, ctx: Contexto) -> Paso:
    pedido = hecha_o_pedido(tarea, ctx, DIRECCION.herramienta, frases.cambiada, "cambiar la dirección de envío")
    if isinstance(pedido, Paso):
        return pedido
    if pedido.get("estado") != "pendiente":  # la herramienta lo rechazaría: se dice antes
        return fin(frases.no_pendiente(tarea.pedido, pedido.get("estado")))
    nueva = frases.leer_direccion(tarea.texto)
    if not nueva.completa:
        return fin(frases.pedir_direccion(tarea.pedido))
    if not frases.valido(nueva.codigo_postal):
        return fin(frases.codigo_postal_no_valido(nueva.codigo_postal))
    return ctx.pedir(DIRECCION.herramienta, {"pedido": tarea.pedido, "calle": nueva.calle,
                                             "codigo_postal": nueva.codigo_postal, "localidad": nueva.localidad})
