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
from typing import Any

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig, ToolCallRequest
from langchain_core.messages import ToolMessage

__all__ = ["AVISO_EDICION", "PREFIJO_DESCRIPCION", "FirmaConRespaldo", "middleware_aprobacion", "sin_respuesta"]

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


class FirmaConRespaldo(HumanInTheLoopMiddleware):
    """La firma de LangChain que, en su mismo nodo, contesta antes lo que el cliente no pidió.

    ``respaldo``: la guarda (``RespaldoConversacion.respuestas``); sus ``ToolMessage`` van al
    estado que ve la firma (``sin_respuesta`` no las pregunta) y detrás del ``AIMessage``."""

    def __init__(self, *, respaldo: Callable[[Mapping[str, Any]], list[ToolMessage]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._respaldo = respaldo

    @property
    def name(self) -> str:
        # El mismo nodo que la firma de LangChain: un hilo en pausa desde antes reanuda igual.
        return HumanInTheLoopMiddleware.__name__

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        rehusadas = self._respaldo(state)
        if not rehusadas:
            return super().after_model(state, runtime)
        resultado = super().after_model({**state, "messages": [*state["messages"], *rehusadas]}, runtime) or {}
        previos = list(resultado.get("messages") or [])
        return {**resultado, "messages": [*previos[:1], *rehusadas, *previos[1:]]}


def middleware_aprobacion(
    *, decisiones: Mapping[str, list[str]], politica, descripcion,
    respaldo: Callable[[Mapping[str, Any]], list[ToolMessage]] | None = None,
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
    if respaldo is not None:
        return FirmaConRespaldo(respaldo=respaldo, interrupt_on=interrupt_on,
                                description_prefix=PREFIJO_DESCRIPCION, edit_notice=AVISO_EDICION)
    return HumanInTheLoopMiddleware(
        interrupt_on=interrupt_on,
        description_prefix=PREFIJO_DESCRIPCION,
        edit_notice=AVISO_EDICION,
    )
