"""Textos que la aplicación (no el modelo) escribe al cliente.

Lo que se dice de cada operación pendiente («el reembolso de 120,00 EUR del pedido
P-...») lo da su herramienta en el registro (``Herramienta.texto_espera``, que en una
operación con efecto sale de su declaración, ``nucleo.operaciones``): una
herramienta nueva trae su propio texto, aquí no se añade nada.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from herramientas import Registro

__all__ = [
    "DISCULPA",
    "con_nota",
    "MOTIVO_CADUCIDAD",
    "RESPUESTA_CADUCIDAD",
    "mensaje_espera",
    "mensaje_retenido",
    "movimiento_marcado",
    "skus_de",
]

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
_SIN_TEXTO = "tu solicitud"


def _accion(accion: Mapping[str, Any], registro: Registro, productos: Mapping[str, str]) -> str:
    herramienta = registro.get(accion.get("name"))
    if herramienta is None:
        return _SIN_TEXTO
    # El cliente lee nombres de producto, nunca SKUs: los argumentos «sku*» van por su nombre.
    args = {k: productos.get(v, v) if k.startswith("sku") and isinstance(v, str) else v
            for k, v in (accion.get("args") or {}).items()}
    return herramienta.texto_espera(args)


def skus_de(peticion: Mapping[str, Any]) -> list[str]:
    """Los SKU que nombran las operaciones de la pausa (para buscar sus nombres)."""
    return sorted({v for a in peticion.get("action_requests", []) for k, v in (a.get("args") or {}).items()
                   if k.startswith("sku") and isinstance(v, str)})


def mensaje_espera(
    peticion: Mapping[str, Any], registro: Registro, productos: Mapping[str, str] | None = None
) -> str:
    """El aviso al cliente cuando el agente se pausa a la espera de un encargado.

    ``productos``: SKU -> nombre, para que el aviso diga «la Cafetera de goteo...» y no «CAF-001»."""
    acciones = [_accion(a, registro, productos or {}) for a in peticion.get("action_requests", [])]
    if not acciones:
        lista = _SIN_TEXTO
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


def con_nota(texto: str, nota: str | None) -> str:
    """El mensaje final al cliente con la nota del encargado al final (si la hay)."""
    return f"{texto}\n\nNota del encargado: {nota}" if nota else texto


def movimiento_marcado(tipo: str, importe: str, pedido: str) -> str:
    """Un reembolso o cobro que la pasarela no completa tras varios intentos."""
    que = "El cobro" if tipo == "cobro" else "El reembolso"
    return (
        f"{que} de {importe} del pedido {pedido} está tardando más de lo normal. Una persona "
        "de la tienda lo está revisando y te escribirá por este mismo canal."
    )
