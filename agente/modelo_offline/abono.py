"""«¿Cuándo me llega el dinero?»: el plazo típico del medio de pago del pedido.

Se reconoce antes que una devolución («¿cuándo me devolvéis el dinero?» no pide otra) y que
un reenvío («no me ha llegado el reembolso» no habla de un paquete). El pedido es el que
nombra el cliente o, si no nombra ninguno, el del último reembolso (o cancelación) de la
conversación; se lee con ``consultar_pedido``, que da sus reembolsos y, en ``abono``, el
medio y el plazo que la tienda dice que suele tardar (``nucleo/abonos.py``). No se
promete nada que el sistema no haga: si el reembolso espera la firma de un encargado o la
pasarela aún no lo ha confirmado, se dice eso.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

from agente.modelo_offline.redaccion import eur, fecha
from nucleo.operaciones import OPERACIONES

__all__ = ["INTENCION", "RE_ABONO", "pedido_del_ultimo_reembolso", "plazo"]

INTENCION = "abono"
# Sobre texto normalizado (minúsculas, sin tildes).
RE_ABONO = re.compile(
    r"\b(?:cuando|cuanto (?:tarda\w*|tiempo))\b[^.?!,]{0,25}?\b(?:dinero|reembolso|abono)\b"
    r"|\bno (?:me )?(?:ha llegado|han llegado|llega|he recibido|veo|aparece)\b(?: todavia| aun)? "
    r"(?:el |mi |ningun )?(?:dinero|reembolso|abono)\b"
)
# Las herramientas cuyo efecto devuelve dinero al cliente: las de las operaciones cuyo único
# movimiento de pasarela es un reembolso (un cambio también puede cobrar).
_DEVUELVEN_DINERO = tuple(h for op in OPERACIONES if op.libro.movimientos == ("reembolso",) for h in op.herramientas)


def pedido_del_ultimo_reembolso(anteriores: Sequence[BaseMessage]) -> str | None:
    """El pedido de la última llamada que devuelve dinero en la conversación, si la hubo."""
    for mensaje in reversed(anteriores):
        if isinstance(mensaje, AIMessage):
            for llamada in reversed(mensaje.tool_calls):
                pedido = (llamada.get("args") or {}).get("pedido")
                if llamada.get("name") in _DEVUELVEN_DINERO and pedido:
                    return str(pedido).upper()
    return None


def plazo(pedido: str | None, datos: dict) -> str:
    """Cuándo llega el dinero del último reembolso de ``pedido`` (``datos``: su consulta)."""
    abono = datos.get("abono") if isinstance(datos.get("abono"), dict) else {}
    medio = abono.get("medio") or "tu medio de pago original"
    tarda = abono.get("plazo") or "unos días hábiles"
    reembolsos = [r for r in datos.get("reembolsos") or [] if isinstance(r, dict)]
    if abono.get("reembolso_en_firma"):
        return (
            f"El reembolso del pedido {pedido} está pendiente de que lo apruebe un encargado de la "
            "tienda: hasta entonces no sale ningún dinero. Te avisaré por aquí en cuanto decida; "
            f"desde que se emita, el dinero vuelve a {medio} y suele tardar {tarda} en verse."
        )
    if not reembolsos:
        return (
            f"El pedido {pedido} no tiene ningún reembolso, así que no hay dinero en camino. "
            "Si quieres devolver algo, dime qué producto y por qué, y lo tramito."
        )
    ultimo = reembolsos[-1]
    que = f"El reembolso {ultimo.get('numero')} de {eur(ultimo.get('importe'))} del pedido {pedido}"
    if ultimo.get("estado") != "emitido":
        return (
            f"{que} está registrado, pero la pasarela de pagos aún no lo ha confirmado: se "
            "completará solo y te avisaremos por aquí. Cuando se emita, el dinero vuelve a "
            f"{medio} y suele tardar {tarda} en verse."
        )
    return (
        f"{que} se emitió el {fecha(ultimo.get('emitido_en') or ultimo.get('fecha'))}. El dinero "
        f"vuelve a {medio} y suele tardar {tarda} en verse, según tu banco. Si pasado ese plazo "
        "no lo ves, escríbeme y lo revisamos con la tienda."
    )
