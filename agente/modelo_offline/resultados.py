"""Lo que la conversación devolvió a cada llamada: éxito, error, rechazo o respuesta humana.

Se leen señales estructuradas, no el aviso en inglés de LangChain. Lo que produce
``HumanInTheLoopMiddleware`` (langchain 1.5, modo por lotes, comprobado ejecutándolo):

- ``approve``: el ``ToolMessage`` de la herramienta, ``status="success"``.
- ``reject``: ``status="error"`` y ``additional_kwargs["lc_data"] == {"decision":
  "reject"}`` (``lc_source="hitl_interrupt_decision"``). El motivo solo existe como texto
  fijo en inglés: «User rejected the tool call for `X` with reason: ...», o sin motivo
  «... with id ID. The tool was not executed. ...». Lo lee ``motivo_del_rechazo``, el
  único analizador de ese texto.
- ``respond``: ``status="success"`` y ``lc_data == {"decision": "respond"}``; el contenido
  es el texto del encargado, tal cual.
- ``edit``: ``status="success"``, sin marca en ``additional_kwargs``. La herramienta se
  ejecutó con los argumentos del encargado y su JSON dice lo ejecutado (el importe de
  ``reembolsar``); el ``AIMessage`` del historial conserva la propuesta del modelo. Por
  eso «editado» = el JSON contradice la propuesta. El contenido lleva delante el
  ``edit_notice`` y «Executed instead: ... Tool response:» (sin ``edit_notice``, nada);
  el JSON se toma del final del contenido, sea cual sea el aviso. El ``artifact`` de la
  herramienta, si lo hay, se conserva y manda.
- Error de una herramienta (``ToolErrorMiddleware``): ``status="error"``; el texto
  «Error: ...» es nuestro (``agente.middleware.errores``) y se muestra sin el prefijo.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agente.modelo_offline.texto import limpiar_cola, texto_de
from nucleo import dinero
from nucleo.errores import ImporteNoValido

__all__ = [
    "SIN_MOTIVO",
    "Llamada",
    "Resultado",
    "cantidad",
    "interpretar",
    "llamadas_desde",
    "motivo_del_rechazo",
]

SIN_MOTIVO = "sin indicar motivo"
PREFIJO_ERROR = "Error:"  # el de agente.middleware.errores

# El texto fijo (no configurable) de un rechazo en langchain 1.5; solo de aquí sale el motivo.
RE_RECHAZO = re.compile(
    r"^User rejected the tool call for `[^`]+`(?: with reason: (?P<motivo>.*))?", re.DOTALL
)


def motivo_del_rechazo(texto: str) -> str | None:
    """El motivo de un rechazo del encargado, ``SIN_MOTIVO`` si no dio, ``None`` si no es un rechazo."""
    rechazo = RE_RECHAZO.match(texto.strip())
    if not rechazo:
        return None
    return limpiar_cola(rechazo.group("motivo") or "") or SIN_MOTIVO


def cantidad(valor: Any) -> Decimal | None:
    """Un importe con signo del JSON de una herramienta; ``None`` si no lo es (nunca lanza)."""
    try:
        return dinero.diferencia(valor)
    except ImporteNoValido:
        return None


@dataclass(frozen=True, kw_only=True)
class Resultado:
    """Lo que volvió a una llamada.

    ``editado``: la herramienta ejecutó otra cosa que la propuesta (un encargado la editó).
    ``datos``: el ``artifact`` o el JSON de la herramienta; ``texto``: su contenido legible.
    """

    tipo: Literal["ok", "error", "rechazo", "pendiente"]
    texto: str = ""
    datos: Any = None
    editado: bool = False
    motivo_rechazo: str | None = None
    respuesta_humana: bool = False

    def __post_init__(self) -> None:
        if self.tipo not in ("ok", "error", "rechazo", "pendiente"):
            raise ValueError(f"tipo de resultado desconocido: {self.tipo!r}")
        if (self.tipo == "rechazo") != (self.motivo_rechazo is not None):
            raise ValueError("solo un rechazo lleva motivo_rechazo, y siempre lo lleva")


@dataclass(frozen=True, kw_only=True)
class Llamada:
    nombre: str
    args: dict[str, Any]
    id: str
    resultado: Resultado = field(default_factory=lambda: Resultado(tipo="pendiente"))


def _decision(mensaje: ToolMessage) -> str | None:
    datos = (mensaje.additional_kwargs or {}).get("lc_data")
    return datos.get("decision") if isinstance(datos, dict) else None


def _json_final(texto: str) -> tuple[Any, str]:
    """El JSON con que termina ``texto`` y el texto desde él; ``(None, texto)`` si no hay."""
    limpio = texto.strip()
    decodificador = json.JSONDecoder()
    for inicio in (i for i, c in enumerate(limpio) if c in "{["):
        try:
            valor, fin = decodificador.raw_decode(limpio, inicio)
        except json.JSONDecodeError:
            continue
        if fin == len(limpio):
            return valor, limpio[inicio:]
    return None, limpio


def _mismo(propuesto: Any, ejecutado: Any) -> bool:
    a, b = cantidad(propuesto), cantidad(ejecutado)
    if a is not None and b is not None:
        return a == b
    return str(propuesto).strip().upper() == str(ejecutado).strip().upper()


def _contradice(propuesta: Mapping[str, Any], datos: Any) -> bool:
    """¿El resultado dice que se ejecutó otra cosa (otro importe, otro SKU) que lo propuesto?"""
    if not isinstance(datos, dict):
        return False
    return any(clave in datos and not _mismo(valor, datos[clave]) for clave, valor in propuesta.items())


def interpretar(mensaje: ToolMessage | None, propuesta: Mapping[str, Any]) -> Resultado:
    """El ``Resultado`` de una llamada con argumentos ``propuesta`` (``None`` = aún sin respuesta)."""
    if mensaje is None:
        return Resultado(tipo="pendiente")
    texto = texto_de(mensaje).strip()
    decision = _decision(mensaje)
    if mensaje.status == "error":
        motivo = motivo_del_rechazo(texto)
        if decision == "reject" or motivo is not None:
            return Resultado(tipo="rechazo", texto=texto, motivo_rechazo=motivo or SIN_MOTIVO)
        return Resultado(tipo="error", texto=texto.removeprefix(PREFIJO_ERROR).strip() or texto)
    if decision == "respond":
        return Resultado(tipo="ok", texto=texto, respuesta_humana=True)
    datos, cuerpo = _json_final(texto)
    if isinstance(mensaje.artifact, dict | list):
        datos = mensaje.artifact
    return Resultado(tipo="ok", texto=cuerpo, datos=datos, editado=_contradice(propuesta, datos))


def llamadas_desde(mensajes: Sequence[BaseMessage]) -> list[Llamada]:
    """Las llamadas de los ``AIMessage`` de ``mensajes``, cada una con su resultado."""
    respuestas = {m.tool_call_id: m for m in mensajes if isinstance(m, ToolMessage)}
    llamadas = []
    for mensaje in mensajes:
        if not isinstance(mensaje, AIMessage):
            continue
        for llamada in mensaje.tool_calls:
            args = dict(llamada.get("args") or {})
            llamadas.append(
                Llamada(
                    nombre=llamada["name"],
                    args=args,
                    id=llamada.get("id") or "",
                    resultado=interpretar(respuestas.get(llamada.get("id")), args),
                )
            )
    return llamadas
