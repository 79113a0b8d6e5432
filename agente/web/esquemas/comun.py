"""Formas de la API (pydantic): lo que entra, lo que sale y cómo se pasa del servicio a JSON.

El dinero viaja como texto ("120.00"), nunca como número de coma flotante.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from agente.servicio.politica.dominio import VALORES
from nucleo import dinero
from nucleo.errores import ImporteNoValido

MAX_TEXTO = 2000
# Lo que el esquema dice de un texto que no puede estar vacío: algún carácter que no sea el
# nulo ni un espacio de ``str.isspace`` (el ``strip()`` que aplica el servicio). La clase se
# escribe carácter a carácter con ``\uXXXX``: el ``\s`` de Python, el de ECMA y el de Rust
# no son el mismo (``\x1c``-``\x1f`` y ``\x85`` son espacio solo para Python).
def _clase_de_espacios() -> str:
    tramos, inicio, anterior = [], None, None
    for codigo in [c for c in range(0x3001) if chr(c).isspace()]:
        if inicio is None:
            inicio = anterior = codigo
        elif codigo == anterior + 1:
            anterior = codigo
        else:
            tramos.append((inicio, anterior))
            inicio = anterior = codigo
    tramos.append((inicio, anterior))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in tramos)


NO_VACIO = rf"^[^\u0000]*[^\u0000{_clase_de_espacios()}][^\u0000]*$"
# Un importe editado: texto, mayor que cero, como mucho dos decimales y dentro de numeric(12,2)
# (lo que acepta ``dinero.importe`` escrito de la forma normal): lo aplica ``_importe_editado``.
IMPORTE_EDITADO = r"^(?=[0-9.]*[1-9])[0-9]{1,10}(\.[0-9]{1,2})?$"
# Los argumentos de las herramientas son escalares: lo que no se edita viaja tal cual.
Escalar = Annotated[str, Field(max_length=MAX_TEXTO)] | int | float | bool | None
PLAZO_MAXIMO = timedelta(hours=VALORES["horas_caducidad"].maximo)


# -- entradas ------------------------------------------------------------------------------


class MensajeEntrada(BaseModel):
    model_config = ConfigDict(extra="forbid")
    texto: str = Field(min_length=1, max_length=MAX_TEXTO, description="Lo que escribe el cliente.",
                       json_schema_extra={"pattern": NO_VACIO})


class _DeUnaOperacion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool_call_id: str | None = Field(default=None, min_length=1, max_length=200, description=(
        "Opcional: la operación a la que responde (``tool_call_id`` de la tarjeta). Si no es la "
        "de su posición, 422 con el orden esperado y no se decide nada."))


class Aprobar(_DeUnaOperacion):
    type: Literal["approve"]


def _importe_editado(valor: Any) -> str:
    """El motivo en español de ``dinero`` (más de dos decimales, no mayor que cero...) y,
    además, la forma exacta del esquema: ``dinero`` aceptaría «1e2» o «+5»."""
    if not isinstance(valor, str):
        raise ValueError("el importe va como texto, como «90.00»")
    try:
        dinero.importe(valor)
    except ImporteNoValido as exc:
        raise ValueError(exc.mensaje) from None
    if not re.fullmatch(IMPORTE_EDITADO, valor):
        raise ValueError(f"el importe «{valor}» se escribe con punto y hasta dos decimales, como «90.00»")
    return valor


class ArgumentosEditados(BaseModel):
    """Los argumentos de la operación con lo editado: el resto viaja tal cual (y si cambia,
    409: solo se edita lo que la herramienta declara editable)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Escalar] = Field(init=False)  # type: ignore[assignment]
    importe: Annotated[str, BeforeValidator(_importe_editado)] = Field(  # type: ignore[assignment]
        default=None, json_schema_extra={"pattern": IMPORTE_EDITADO}, description=(
            "El importe nuevo, como texto («90.00»): mayor que cero, como mucho dos decimales; "
            "no puede superar lo propuesto."))


class AccionEditada(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=100)
    args: ArgumentosEditados


class Editar(_DeUnaOperacion):
    type: Literal["edit"]
    edited_action: AccionEditada


class Rechazar(_DeUnaOperacion):
    type: Literal["reject"]
    message: str = Field(max_length=MAX_TEXTO, description="Motivo; lo lee el cliente.",
                         json_schema_extra={"pattern": NO_VACIO})


class Responder(_DeUnaOperacion):
    type: Literal["respond"]
    message: str = Field(max_length=MAX_TEXTO, description="Respuesta del encargado al cliente.",
                         json_schema_extra={"pattern": NO_VACIO})


Decision = Annotated[Aprobar | Editar | Rechazar | Responder, Field(discriminator="type")]


class DecisionEntrada(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decisiones: list[Decision] = Field(
        min_length=1, max_length=20, description="Una decisión por operación pendiente, en su orden."
    )
    nota: str | None = Field(
        default=None, max_length=MAX_TEXTO,
        description="Nota del encargado para el cliente: la aplicación la añade al final del "
        "mensaje final.",
    )

    def como_lista(self) -> list[dict[str, Any]]:
        """Las decisiones como las espera el servicio (la nota va aparte)."""
        return [d.model_dump(exclude_unset=True) for d in self.decisiones]


class DemoLogin(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rol: Literal["cliente", "encargado"]
    id: str = Field(min_length=1, max_length=100)
    canal: Literal["web", "cli"] = Field(
        default="web", description="cli: la sesión de `agente entrar --demo` (renovable, firma por la CLI).")


# -- salidas -------------------------------------------------------------------------------


class ConversacionCreada(BaseModel):
    thread_id: str


class MensajeAgente(BaseModel):
    rol: Literal["agente"] = "agente"
    texto: str


class RespuestaTurno(BaseModel):
    estado: Literal["respondida", "esperando_aprobacion"]
    mensajes: list[MensajeAgente]


class MensajeHistorial(BaseModel):
    id: int
    rol: Literal["cliente", "agente", "tienda"] = Field(
        description="«tienda»: lo escribió una persona de la tienda (su nombre en «autor»).")
    texto: str
    fecha: datetime
    retenido: bool = Field(description="Llegó mientras se esperaba a un encargado: lo verá él.")
    autor: str | None = Field(default=None, description="Rol «tienda»: el nombre de quien lo escribió.")


class Conversacion(BaseModel):
    thread_id: str
    estado: str
    mensajes: list[MensajeHistorial]


class Cliente(BaseModel):
    id: str
    nombre: str


class PedidoCliente(BaseModel):
    id: str
    fecha: datetime
    estado: str
    importe: str
    entregado_en: datetime | None
    productos: str


class ConversacionResumen(BaseModel):
    thread_id: str
    estado: str
    creada: datetime
    actualizada: datetime
    mensajes: int
    ultimo_texto: str | None
    ultimo_rol: str | None
    ultimo_en: datetime | None
    tema: str | None = Field(None, description="El primer mensaje del cliente (no la presentación).")
    estado_cliente: Literal["resuelta", "esperando_tienda", "abierta"] = Field(
        description="Lo que el cliente lee: resuelta, esperando a la tienda o abierta.")


class TiendaVisible(BaseModel):
    id: str
    nombre: str


class PerfilCliente(BaseModel):
    cliente_id: str
    nombre: str
    tienda: TiendaVisible
    espera_tipica: str | None = Field(
        None, description="«unas 2 h»: la mediana de las decisiones recientes de su tienda; "
                          "null si hay pocas.")


class Error(BaseModel):
    detalle: str


class Salud(BaseModel):
    estado: str


class Token(BaseModel):
    token: str
    destino: str


class IdentidadDemo(BaseModel):
    rol: str
    id: str
    nombre: str
    tienda: str
    tienda_nombre: str | None = None
    cargo: str | None = Field(None, description="cliente, encargado, gerente o regional.")
    escenario: str | None = Field(None, description="Qué se prueba con esta identidad en la demo.")
    ejemplo: str | None = None


class CorreoDemo(BaseModel):
    """Un correo que recibió el buzón de la demo (``/demo/correo``)."""

    id: str
    de: str
    para: str
    asunto: str
    fecha: datetime | None = None
    texto: str = Field(description="El cuerpo en texto plano (los enlaces, tal cual).")


# -- del servicio a la API -----------------------------------------------------------------


def respuesta_turno(respuesta) -> dict[str, Any]:
    return {"estado": respuesta.estado, "mensajes": [{"rol": "agente", "texto": respuesta.mensaje_cliente}]}


def conversacion(historial: dict[str, Any]) -> dict[str, Any]:
    return {
        "thread_id": historial["thread_id"],
        "estado": historial["estado"],
        "mensajes": [
            {
                "id": m["id"],
                "rol": m["rol"],
                "texto": m["texto"],
                "fecha": m["creado"],
                "retenido": bool(m.get("retenido")),
                "autor": m.get("autor"),
            }
            for m in historial["mensajes"]
        ],
    }


class BajaAvisosEntrada(BaseModel):
    """El token del enlace de baja de un aviso al cliente (``#baja=...``): un JWT."""

    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=2000, pattern=r"^[A-Za-z0-9._-]+$")


class BajaAvisos(BaseModel):
    baja: bool
    detalle: str
