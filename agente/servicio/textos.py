"""Textos que la aplicación (no el modelo) escribe al cliente."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

MOTIVO_CADUCIDAD = "caducada sin revisión"
RESPUESTA_CADUCIDAD = (
    "El encargado no ha podido revisar la consulta a tiempo: ha caducado sin revisión. "
    "Puedes volver a preguntarnos cuando quieras."
)
DISCULPA = (
    "Lo siento, ahora mismo no puedo completar tu consulta por un problema técnico. "
    "No se ha hecho ningún cargo. Una persona de la tienda revisará tu conversación "
    "y te responderá por este mismo canal."
)


def euros(valor: Any) -> str:
    try:
        importe = Decimal(str(valor)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        return f"{valor} EUR"
    texto = f"{importe:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".")
    return f"{texto} EUR"


def _accion(accion: dict[str, Any]) -> str:
    args = accion.get("args") or {}
    nombre = accion.get("name")
    if nombre == "reembolsar":
        return f"el reembolso de {euros(args.get('importe'))} del pedido {args.get('pedido')}"
    if nombre == "sustituir":
        return (
            f"el cambio de {args.get('sku_original')} por {args.get('sku_nuevo')} "
            f"del pedido {args.get('pedido')}"
        )
    if nombre == "consultar_encargado":
        return "tu consulta"
    return "tu solicitud"


def mensaje_espera(peticion: dict[str, Any]) -> str:
    acciones = [_accion(a) for a in peticion.get("action_requests", [])]
    if not acciones:
        lista = "tu solicitud"
    elif len(acciones) == 1:
        lista = acciones[0]
    else:
        lista = ", ".join(acciones[:-1]) + " y " + acciones[-1]
    verbo = "quedan" if len(acciones) > 1 else "queda"
    return (
        f"He preparado {lista}; {verbo} pendiente de revisión por un encargado de la tienda. "
        "Te confirmaremos la decisión por este mismo canal."
    )


def mensaje_retenido() -> str:
    return (
        "Tu solicitud anterior sigue pendiente de revisión por un encargado. "
        "Hemos guardado tu mensaje y lo verá junto con la solicitud; "
        "te responderemos por este mismo canal."
    )
