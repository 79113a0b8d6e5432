"""La guarda de la conversación: ninguna operación con efecto que el cliente no pidiera.

Un modelo (cualquiera: un LLM o el offline) puede proponer, junto a lo que el cliente pidió,
una operación que no pidió o que excluyó («quiero 30 euros en un vale, sin devolverlo» y el
modelo propone el vale *y* el reembolso). Antes de que la firma
(``HumanInTheLoopMiddleware``) encole nada y antes de que se ejecute nada, ``after_model``
lee la conversación con el mismo entendimiento que el modelo offline
(``agente/modelo_offline/respaldo.py``) y, por cada operación sin respaldo, contesta a esa
llamada con un ``ToolMessage`` de error en español para el modelo: la llamada queda
respondida, así que no va a las herramientas, la firma no la pregunta
(``sin_respuesta``, en ``agente/middleware/aprobacion.py``) y el modelo vuelve a planear con
lo que sí pidió. El cliente no lee ese texto: lo lee el modelo.

Solo se vigilan las herramientas con efecto de una operación declarada cuya intención
reconoce la lectura del cliente; las consultas pasan siempre.

Corre dentro del nodo de la firma (``middleware_aprobacion(respaldo=...)``), justo antes de
decidir qué se pregunta: cada hook de middleware es un nodo con su checkpoint, y la guarda no
añade ninguno.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, ToolMessage

from agente.modelo_offline.respaldo import INTENCIONES_OPERACION, Respaldo, respaldo

__all__ = ["MARCA_SIN_RESPALDO", "RespaldoConversacion", "texto_sin_respaldo"]

MARCA_SIN_RESPALDO = "sin_respaldo"  # en ``additional_kwargs`` del ToolMessage: motivo


def texto_sin_respaldo(titulo: str, motivo: Respaldo) -> str:
    """Lo que lee el modelo cuando su llamada no se hace (en español, sin ejecutar nada)."""
    if motivo.motivo == "excluida":
        porque = f"el cliente la ha descartado («{motivo.texto.strip()}»)"
    else:
        porque = "el cliente no la ha pedido en esta conversación"
    return (f"No ejecutada: {titulo}. No se ha tramitado ni se ha enviado a firma porque {porque}. "
            "No la vuelvas a proponer salvo que el cliente la pida expresamente; responde solo a "
            "lo que sí ha pedido.")


class RespaldoConversacion(AgentMiddleware):
    """Responde con un error para el modelo a cada llamada con efecto que la conversación no respalda.

    - ``operaciones``: las operaciones con efecto declaradas (``nucleo.operaciones``).
    - ``con_efectos``: las herramientas con efecto del registro (``Registro.con_efectos``).
    - ``titulos``: ``herramienta -> título`` para el texto del modelo (por defecto, su nombre).
    """

    def __init__(
        self,
        *,
        operaciones: Iterable[Any],
        con_efectos: Iterable[str],
        titulos: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        efectos = set(con_efectos)
        self._intencion = {
            herramienta: op.offline.intencion
            for op in operaciones for herramienta in op.herramientas
            if herramienta in efectos and op.offline.intencion in INTENCIONES_OPERACION
        }
        self._titulos = dict(titulos or {})

    def after_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        respuestas = self.respuestas(state)
        return {"messages": respuestas} if respuestas else None

    def respuestas(self, state: Mapping[str, Any]) -> list[ToolMessage]:
        """Un ``ToolMessage`` de error por cada llamada con efecto del último mensaje sin respaldo."""
        mensajes = list(state.get("messages") or [])
        if not mensajes or not isinstance(mensajes[-1], AIMessage) or not mensajes[-1].tool_calls:
            return []
        respuestas = []
        for llamada in mensajes[-1].tool_calls:
            intencion = self._intencion.get(llamada.get("name", ""))
            if intencion is None or not llamada.get("id"):
                continue
            pedido = (llamada.get("args") or {}).get("pedido")
            dicho = respaldo(intencion, str(pedido) if pedido else None, mensajes)
            if dicho.respaldada:
                continue
            titulo = self._titulos.get(llamada["name"], llamada["name"])
            respuestas.append(ToolMessage(
                content=texto_sin_respaldo(titulo, dicho), name=llamada["name"],
                tool_call_id=llamada["id"], status="error",
                additional_kwargs={MARCA_SIN_RESPALDO: dicho.motivo},
            ))
        return respuestas

    async def aafter_model(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any] | None:
        return self.after_model(state, runtime)
