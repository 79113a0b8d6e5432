"""Regla «direccion»: cambiar la dirección de envío de un pedido pendiente.

Automático si la dirección nueva queda en la misma provincia y el pedido no pasa de
``limite_cambio_direccion``. A otra provincia (o a un pedido que aún no tenía dirección
guardada) o en un pedido más caro, firma una persona: desviar un envío es una vía clásica
de fraude, y la tarjeta enseña la dirección antigua y la nueva en los motivos. El importe
que mira la matriz de autoridad es el del pedido.

Imposible (no pide firma; ``cambiar_direccion`` lo rechaza sin escribir nada): un pedido
que ya no está ``pendiente`` (enviado, entregado o cancelado) o un código postal que no
es español. Pedir a un encargado algo que la herramienta rechazará solo le haría perder
el tiempo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo import dinero
from nucleo.direcciones import provincia_de
from operaciones.direccion.declaracion import OPERACION
from politicas.reglas.base import MOTIVO_PEDIDO_NO_ENCONTRADO, Dictamen, Regla, imposible, texto_de

__all__ = ["REGLA", "DIRECCION", "texto_direccion"]


def texto_direccion(d: Mapping[str, Any] | None) -> str:
    """«Calle Mayor 5, 28013 Madrid (Madrid)», o «sin dirección guardada»."""
    if not d:
        return "sin dirección guardada"
    return f"{d.get('calle')}, {d.get('codigo_postal')} {d.get('localidad')} ({d.get('provincia')})"


def decidir(h: Mapping[str, Any], args: Mapping[str, Any]) -> Dictamen:
    cp = (texto_de(args.get("codigo_postal")) or "").strip()
    provincia = provincia_de(cp)
    limite = h["limite_cambio_direccion"]
    importe = h["importe_pedido"]
    anterior = h["direccion_envio"]
    umbrales = {
        "limite_cambio_direccion": dinero.texto(limite),
        "direccion_anterior": texto_direccion(anterior),
        "provincia_nueva": provincia,
    }
    if not h["pedido_existe"]:
        return Dictamen(motivos=(MOTIVO_PEDIDO_NO_ENCONTRADO,), umbrales=umbrales, importe=None)
    if h["estado_pedido"] != "pendiente":
        return imposible(f"pedido {h['estado_pedido']}: solo se cambia la dirección de un pedido pendiente",
                         umbrales, importe)
    if provincia is None:
        return imposible(f"código postal no válido: {cp or '(sin indicar)'}", umbrales, importe)
    nueva = (f"{texto_de(args.get('calle')) or '(sin calle)'}, {cp} "
             f"{texto_de(args.get('localidad')) or '(sin localidad)'} ({provincia})")
    motivos = []
    if anterior is None:
        motivos.append(f"el pedido no tenía dirección guardada; la nueva sería {nueva}")
    elif anterior.get("provincia") != provincia:
        motivos.append(f"cambia de provincia: de {texto_direccion(anterior)} a {nueva}")
    if importe is not None and importe > limite:
        motivos.append(f"pedido de {dinero.eur(importe)} (límite {dinero.eur(limite)} para cambiar "
                       f"la dirección sin firma): de {texto_direccion(anterior)} a {nueva}")
    return Dictamen(motivos=tuple(motivos), umbrales=umbrales, importe=importe)


# Nombre y hechos, los de la operación declarada (nucleo.operaciones).
DIRECCION = Regla(nombre=OPERACION.regla, hechos=OPERACION.hechos, decidir=decidir)
REGLA = DIRECCION
