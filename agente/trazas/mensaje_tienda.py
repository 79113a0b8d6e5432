"""«Escribir al cliente» en Langfuse: un evento ``mensaje_tienda`` en la traza de la historia.

Con una aprobación pendiente, en SU traza (la del turno que pausó: la historia entera en un
sitio); si no, en una traza propia determinista por mensaje. El texto se enmascara como el
resto (``mask=`` del cliente y ``enmascarar_texto``); en los metadatos, solo ids. Sin
claves no hace nada; un fallo del SDK se registra y nunca llega a quien escribe.
"""

from __future__ import annotations

import logging
from typing import Any

from agente.trazas.mascara import enmascarar_texto
from agente.trazas.trazador import Trazador

__all__ = ["EVENTO_MENSAJE_TIENDA", "registrar_mensaje_tienda"]

logger = logging.getLogger(__name__)

EVENTO_MENSAJE_TIENDA = "mensaje_tienda"


def registrar_mensaje_tienda(
    trazador: Trazador, *, trace_id: str | None, thread_id: str, mensaje_id: int, encargado_id: str,
    tienda: str, texto: str,
) -> str:
    """Registra el evento y devuelve el trace id usado (con o sin trazado)."""
    trace_id = trace_id or trazador.nuevo_trace_id(semilla=f"{thread_id}:tienda:{mensaje_id}")
    if not trazador.activo:
        return trace_id
    metadatos: dict[str, Any] = {"thread_id": thread_id, "mensaje_id": mensaje_id,
                                 "encargado_id": encargado_id, "tienda": tienda}
    try:
        trazador._cliente.create_event(  # el cliente del trazador de este proceso
            trace_context={"trace_id": trace_id}, name=EVENTO_MENSAJE_TIENDA,
            input={"texto": enmascarar_texto(texto)}, metadata=metadatos,
        )
    except Exception:
        logger.exception("No se pudo registrar el mensaje de la tienda en Langfuse")
    return trace_id
