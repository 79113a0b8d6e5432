"""¿Respalda la conversación una operación? El mismo entendimiento del cliente que el modelo offline.

Lo usa la guarda del agente (``agente/middleware/respaldo.py``) con cualquier modelo: una
operación con efecto solo se firma o se ejecuta si el cliente la pidió, o aceptó con un «sí»
la que le ofreció el agente, y no la excluyó después.

Se recorren los mensajes del cliente del más reciente al más antiguo; el primero que dice
algo de la operación decide:

- la pide (``lectura.tareas``: sin las negadas ni las retiradas; del mismo pedido si la
  llamada nombra uno) -> respaldada;
- la nombra sin pedirla («sin devolverlo», «no quiero el reembolso», «..., bueno no») ->
  excluida;
- responde «sí» a una respuesta del agente que la ofrecía -> respaldada; «no» o «mejor no»
  -> excluida.

Si ninguno dice nada de ella, no la pidió.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agente.modelo_offline.comprension import RE_NO, RE_SI
from agente.modelo_offline.lectura import PATRONES, RENUNCIAS, tareas, trocear
from agente.modelo_offline.matices import retractadas
from agente.modelo_offline.texto import normalizar, texto_de

__all__ = ["INTENCIONES_OPERACION", "Respaldo", "operaciones_del_mensaje", "respaldo"]

Motivo = Literal["pedida", "aceptada", "excluida", "no_pedida"]
# Las intenciones de las operaciones con efecto que reconoce la lectura del cliente.
INTENCIONES_OPERACION = frozenset(intencion for intencion, _patron in PATRONES)


@dataclass(frozen=True)
class Respaldo:
    """Qué dice la conversación de una operación: ``motivo`` y el mensaje del cliente que lo decide."""

    motivo: Motivo
    texto: str = ""

    @property
    def respaldada(self) -> bool:
        return self.motivo in ("pedida", "aceptada")


def operaciones_del_mensaje(texto: str) -> tuple[frozenset[str], frozenset[str]]:
    """(pedidas, nombradas): las operaciones que el mensaje pide, leídas como ``tareas`` (sin
    las negadas ni las retiradas), y todas las que nombra, aunque sea para excluirlas."""
    normal = normalizar(texto)
    clausulas, _hubo = trocear(texto)
    anuladas = retractadas(normal, [(t, m, h) for t, _d, h, m in clausulas], RENUNCIAS)
    pedidas = frozenset(t for i, (t, _d, _h, _m) in enumerate(clausulas) if i not in anuladas)
    return pedidas, frozenset(i for i, patron in PATRONES if patron.search(normal)) | pedidas


def respaldo(intencion: str, pedido: str | None, mensajes: Sequence[BaseMessage]) -> Respaldo:
    """Si los ``mensajes`` de la conversación respaldan la operación ``intencion`` (de ``pedido``)."""
    for n in range(len(mensajes) - 1, -1, -1):
        mensaje = mensajes[n]
        if not isinstance(mensaje, HumanMessage):
            continue
        texto = texto_de(mensaje)
        pedidas, nombradas = operaciones_del_mensaje(texto)
        del_pedido = _pedidas_del_pedido(texto, mensajes[:n], pedido)
        if intencion in (pedidas if del_pedido is None else del_pedido):
            return Respaldo("pedida", texto)
        if intencion in pedidas:
            continue  # la pide, pero de otro pedido: lo decide un mensaje anterior
        if intencion in nombradas:
            return Respaldo("excluida", texto)
        if intencion in _ofrecidas(mensajes[:n]):
            normal = normalizar(texto)
            if RE_NO.search(normal):
                return Respaldo("excluida", texto)
            if RE_SI.search(normal):
                return Respaldo("aceptada", texto)
    return Respaldo("no_pedida")


def _pedidas_del_pedido(texto: str, anteriores: Sequence[BaseMessage], pedido: str | None) -> set[str] | None:
    """Las operaciones que ``tareas`` lee en el mensaje para ``pedido`` (o sin pedido, que valen
    para cualquiera); None si ``tareas`` no da ninguna operación (pregunta a la tienda, normas...)."""
    leidas = tareas(texto, anteriores)
    operaciones = [t for t in leidas if t.tipo in INTENCIONES_OPERACION]
    if not operaciones:
        return None
    return {t.tipo for t in operaciones
            if pedido is None or t.pedido is None or t.pedido.upper() == pedido.upper()}


def _ofrecidas(anteriores: Sequence[BaseMessage]) -> frozenset[str]:
    """Lo que ofrecía la última respuesta del agente al cliente, antes de su mensaje."""
    for mensaje in reversed(anteriores):
        if isinstance(mensaje, HumanMessage):
            return frozenset()
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls:
            return operaciones_del_mensaje(texto_de(mensaje))[0]
    return frozenset()

