"""La firma del encargado: ``HumanInTheLoopMiddleware`` con la política de la tienda.

Las decisiones de cada herramienta vienen del registro (``herramientas.registro``),
siempre explícitas: ``True`` permitiría también ``respond``, que finge un resultado
correcto sin ejecutar la herramienta. Las que no tienen decisiones no aparecen: nunca
se interrumpen.

Una llamada que ya tiene respuesta en el estado (la guarda de la conversación,
``agente/middleware/respaldo.py``, la contestó porque el cliente no la pidió) no se pregunta
nunca: no va a ejecutarse (``sin_respuesta``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig, ToolCallRequest
from langchain_core.messages import ToolMessage

__all__ = ["AVISO_EDICION", "PREFIJO_DESCRIPCION", "middleware_aprobacion", "sin_respuesta"]

AVISO_EDICION = (
    "Aviso: un encargado modificó esta operación antes de ejecutarla; el resultado "
    "refleja lo que se ejecutó, no tu propuesta."
)
PREFIJO_DESCRIPCION = "Operación pendiente de la firma del encargado"


def sin_respuesta(when: Callable[[ToolCallRequest], bool]) -> Callable[[ToolCallRequest], bool]:
    """``when`` solo para las llamadas que aún no tienen un ``ToolMessage`` en el estado.

    Es el mismo resultado al reanudar (``when`` se vuelve a evaluar: ``docs/trampas.md``):
    la respuesta sigue en el estado."""

    def _when(req: ToolCallRequest) -> bool:
        mensajes = (req.state or {}).get("messages") or ()
        respondidas = {m.tool_call_id for m in mensajes if isinstance(m, ToolMessage)}
        return req.tool_call.get("id") not in respondidas and when(req)

    return _when


def middleware_aprobacion(
    *, decisiones: Mapping[str, list[str]], politica, descripcion
) -> HumanInTheLoopMiddleware:
    """``politica.necesita_encargado`` decide; ``descripcion`` redacta la tarjeta del encargado.

    ``decisiones``: ``nombre -> decisiones permitidas`` (``Registro.decisiones_permitidas``).
    """
    if not decisiones or any(not d for d in decisiones.values()):
        raise ValueError("cada herramienta con firma necesita al menos una decisión permitida")
    interrupt_on = {
        nombre: InterruptOnConfig(
            allowed_decisions=list(permitidas),
            when=sin_respuesta(politica.necesita_encargado),
            description=descripcion,
        )
        for nombre, permitidas in decisiones.items()
    }
    return HumanInTheLoopMiddleware(
        interrupt_on=interrupt_on,
        description_prefix=PREFIJO_DESCRIPCION,
        edit_notice=AVISO_EDICION,
    )
