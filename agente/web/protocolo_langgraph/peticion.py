"""Qué pide una ejecución del protocolo: un turno del cliente o una firma, y lo que se rechaza.

Lo que el protocolo permite y el producto no se rechaza con 403 y el motivo:

- bifurcar desde un checkpoint pasado (``checkpoint``, ``checkpoint_id``,
  ``config.configurable.checkpoint_id``): la conversación tiene una sola historia, la que
  firmó quien firmó;
- ``interrupt_before``/``interrupt_after``: las pausas las decide la política de la tienda;
- ``command.goto`` y ``command.update``: nadie mueve el grafo ni escribe su estado a mano;
- ``command.resume`` de un cliente, o ``input`` de quien firma.

Una firma es ``{"decisions": [...]}`` (como la espera ``HumanInTheLoopMiddleware``) o
``{interrupt_id: {"decisions": [...]}}`` para la interrupción pendiente; se valida con el
mismo esquema que ``POST /api/aprobaciones/{id}/decision``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agente.web.esquemas import comun as esquemas_api
from agente.web.infra.errores_http import texto_validacion
from agente.web.protocolo_langgraph.esquemas import EjecucionEntrada
from agente.web.protocolo_langgraph.identidad import Quien
from nucleo.errores import DecisionNoValida, NadaPendiente, Prohibido

__all__ = ["Firma", "Turno", "leer_peticion"]


@dataclass(frozen=True)
class Turno:
    texto: str


@dataclass(frozen=True)
class Firma:
    decisiones: list[dict[str, Any]]
    nota: str | None


def _rechazar_lo_no_admitido(cuerpo: EjecucionEntrada) -> None:
    configurable = (cuerpo.config or {}).get("configurable") or {}
    if cuerpo.checkpoint or cuerpo.checkpoint_id or (
            isinstance(configurable, dict) and configurable.get("checkpoint_id")):
        raise Prohibido("no se puede seguir desde un checkpoint pasado: la conversación tiene "
                        "una sola historia, con las firmas que se dieron en ella")
    if cuerpo.interrupt_before or cuerpo.interrupt_after:
        raise Prohibido("las pausas las decide la política de la tienda, no quien llama "
                        "(interrupt_before e interrupt_after no se admiten)")
    if cuerpo.command is not None and (cuerpo.command.goto is not None or cuerpo.command.update is not None):
        raise Prohibido("nadie mueve el grafo ni escribe su estado a mano (command.goto y "
                        "command.update no se admiten): solo command.resume, que es una firma")
    if cuerpo.after_seconds or cuerpo.webhook:
        raise Prohibido("no hay ejecuciones programadas ni webhooks: cada ejecución corre al pedirla")


def _texto(cuerpo: EjecucionEntrada) -> str:
    contenido = cuerpo.input.messages[0].content
    if isinstance(contenido, str):
        return contenido
    return "".join(b.text for b in contenido)


def _decisiones(resume: Any, interrupt_id: str | None) -> tuple[Any, Any]:
    """Las decisiones y la nota de ``resume`` (las dos formas que admite el protocolo)."""
    if isinstance(resume, dict) and "decisions" not in resume and len(resume) == 1:
        (clave, valor), = resume.items()
        if interrupt_id is None:
            raise NadaPendiente("no hay ninguna operación pendiente de firma en esta conversación")
        if clave != interrupt_id:
            raise DecisionNoValida(f"la interrupción {clave} no es la pendiente ({interrupt_id})")
        resume = valor
    if not isinstance(resume, dict) or "decisions" not in resume:
        raise DecisionNoValida('command.resume debe ser {"decisions": [...]}, una decisión por '
                               "operación pendiente")
    extra = set(resume) - {"decisions", "nota"}
    if extra:
        raise DecisionNoValida(f"command.resume: campo no admitido: {', '.join(sorted(extra))}")
    return resume["decisions"], resume.get("nota")


def leer_peticion(cuerpo: EjecucionEntrada, quien: Quien, fila: dict[str, Any]) -> Turno | Firma:
    """La operación que pide ``cuerpo`` a ``quien`` sobre el hilo ``fila`` (ya visible)."""
    _rechazar_lo_no_admitido(cuerpo)
    tiene_resume = cuerpo.command is not None and cuerpo.command.resume is not None
    if cuerpo.input is not None and tiene_resume:
        raise DecisionNoValida("una ejecución lleva input (un mensaje) o command.resume (una "
                               "firma), no los dos")
    if tiene_resume:
        quien.firmante("reanudar una pausa")
        decisiones, nota = _decisiones(cuerpo.command.resume, fila.get("interrupt_id"))
        try:
            entrada = esquemas_api.DecisionEntrada(decisiones=decisiones, nota=nota)
        except ValidationError as exc:
            raise DecisionNoValida(texto_validacion(list(exc.errors()))) from None
        return Firma(entrada.como_lista(), entrada.nota)
    if cuerpo.input is None:
        raise DecisionNoValida("falta input (un mensaje del cliente) o command.resume (una firma)")
    quien.cliente("escribir en la conversación")
    return Turno(_texto(cuerpo))
