"""Los cuerpos del protocolo de LangGraph (Agent Server API) que admite el producto.

Los nombres de los campos son los del protocolo (los que mandan los SDK oficiales); los
que el producto no admite están declarados igual, para rechazarlos con un ``detail`` que
diga por qué en vez de ignorarlos (``agente.web.protocolo_langgraph.peticion``).
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from typing_extensions import TypeAliasType

from agente.web.esquemas.comun import MAX_TEXTO, NO_VACIO

__all__ = [
    "MODOS",
    "AsistenteBusqueda",
    "ComandoEntrada",
    "EjecucionEntrada",
    "ErrorProtocolo",
    "EstadoEntrada",
    "HiloBusqueda",
    "HiloEntrada",
    "HistoriaEntrada",
    "MensajeEntrada",
]

# Los modos de stream_mode que el producto emite (los demás se rechazan con 422).
MODOS = ("values", "updates", "messages-tuple", "messages", "custom")
Modo = Literal["values", "updates", "messages-tuple", "messages", "custom"]
Id = Annotated[str, Field(min_length=1, max_length=200)]
# Cualquier JSON, con su esquema: así el contrato pone a cada texto (y clave) el patrón sin
# el carácter nulo, que la puerta (``texto_seguro``) rechaza en cualquier parte del cuerpo.
Json = TypeAliasType(
    "Json", Union[str, int, float, bool, None, list["Json"], dict[str, "Json"]]  # noqa: UP007
)
Objeto = dict[str, Json]


def _entero(valor: object) -> object:
    """``5.0`` es un entero en JSON Schema; ``"5"`` y ``true`` no (modo estricto)."""
    return int(valor) if isinstance(valor, float) and valor.is_integer() else valor


Entero = Annotated[int, BeforeValidator(_entero)]


class _Abierto(BaseModel):
    """Admite los campos que el protocolo añada y el producto no usa (se ignoran)."""

    model_config = ConfigDict(extra="allow", strict=True)  # "5" no es un número, ni 1 un booleano
    __pydantic_extra__: dict[str, Json] = Field(init=False)  # type: ignore[assignment]


class ErrorProtocolo(BaseModel):
    """La forma de error del protocolo: ``{"detail": "..."}`` (en español)."""

    detail: str


class BloqueTexto(_Abierto):
    type: Literal["text"]
    text: str = Field(max_length=MAX_TEXTO)


class MensajeEntrada(_Abierto):
    """Un mensaje del cliente como lo manda el SDK: ``role`` (o ``type``) y ``content``."""

    role: Literal["human", "user"] | None = None
    type: Literal["human", "user"] | None = None
    content: Annotated[str, Field(max_length=MAX_TEXTO, pattern=NO_VACIO)] | list[BloqueTexto] = Field(
        description="El texto del cliente (o bloques de texto).")


class EntradaMensajes(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    messages: list[MensajeEntrada] = Field(min_length=1, max_length=1, description=(
        "Exactamente un mensaje nuevo del cliente: el estado lo escribe el agente."))


class ComandoEntrada(BaseModel):
    """``resume`` es una firma; ``goto`` y ``update`` se rechazan (403)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    resume: Json = Field(default=None, description=(
        '{"decisions": [...]} (approve, edit, reject o respond, una por operación pendiente), '
        'o {interrupt_id: {"decisions": [...]}}; admite además "nota" para el cliente.'))
    goto: Json = None
    update: Json = None


class EjecucionEntrada(_Abierto):
    """Una ejecución (*run*): un turno del cliente (``input``) o una firma (``command.resume``)."""

    assistant_id: Id
    input: EntradaMensajes | None = None
    command: ComandoEntrada | None = None
    stream_mode: Modo | list[Modo] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    config: Objeto | None = None
    context: Objeto | None = None
    metadata: Objeto | None = None
    checkpoint: Objeto | None = None
    checkpoint_id: str | None = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] | None = None
    if_not_exists: Literal["create", "reject"] | None = None
    on_disconnect: Literal["cancel", "continue"] | None = None
    on_completion: Literal["delete", "keep"] | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    after_seconds: Entero | None = None
    webhook: str | None = None


class HiloEntrada(_Abierto):
    thread_id: str | None = Field(default=None, description="No se admite: el id lo da el producto.")
    metadata: Objeto | None = Field(default=None, description="Se ignora: los metadatos son del producto.")
    if_exists: Literal["raise", "do_nothing"] | None = None
    graph_id: str | None = None


class HiloBusqueda(_Abierto):
    metadata: Objeto | None = None
    values: Objeto | None = None
    ids: list[Id] | None = Field(default=None, max_length=1000)
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: Entero = Field(default=10, ge=1, le=1000)
    offset: Entero = Field(default=0, ge=0, le=1_000_000)
    sort_by: Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None


class HistoriaEntrada(_Abierto):
    limit: Entero = Field(default=10, ge=1, le=1000)
    before: Objeto | str | None = None
    metadata: Objeto | None = None
    checkpoint: Objeto | None = None


class EstadoEntrada(_Abierto):
    """``update_state``: el producto no deja escribir el estado (siempre 403)."""

    values: Json = None
    as_node: str | None = None
    checkpoint: Objeto | None = None
    checkpoint_id: str | None = None


class AsistenteBusqueda(_Abierto):
    graph_id: str | None = None
    name: str | None = None
    metadata: Objeto | None = None
    limit: Entero = Field(default=10, ge=1, le=1000)
    offset: Entero = Field(default=0, ge=0, le=1_000_000)
