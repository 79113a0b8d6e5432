"""Lo que comparten las rutas del protocolo: los errores documentados (``{"detail"}``)."""

from __future__ import annotations

from agente.web.protocolo_langgraph.esquemas import ErrorProtocolo

__all__ = ["ERRORES", "SSE"]

ERRORES = {
    401: {"model": ErrorProtocolo, "description": "Sin token o token no válido o caducado."},
    403: {"model": ErrorProtocolo, "description": (
        "Otro cliente u otra tienda, firmante de baja, o algo que el protocolo permite y el "
        "producto no (el detail dice por qué).")},
    404: {"model": ErrorProtocolo, "description": "No existe."},
}
SSE = {"content": {"text/event-stream": {}}, "description": "Eventos SSE del protocolo."}
