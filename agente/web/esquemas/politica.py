"""Formas de la API de la política de una tienda: el cambio propuesto (con el dominio de
cada valor en el esquema), la política vigente con su historia y las solicitudes de
cambio que esperan firma.

Los dominios salen de ``politicas.valores`` (una declaración por valor): el OpenAPI dice
exactamente lo que la API acepta, y lo que está fuera es 422 antes de tocar la base.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from agente.servicio.politica.dominio import NOMBRE_REGLA, PATRON_DINERO, VALORES
from agente.web.esquemas.comun import NO_VACIO

__all__ = [
    "CambioPolitica",
    "DecisionSolicitud",
    "EstadoSolicitud",
    "Politica",
    "SolicitudPolitica",
    "politica",
    "solicitud",
]

# Dinero de la política como texto: de 0 a 1.000.000,00 EUR, dos decimales como mucho. El
# esquema declara el patrón de ``politicas.valores`` (el mismo objeto) y lo hace cumplir el
# servicio, que responde 422 con la forma y el rango en español (pydantic solo diría «no
# cumple el patrón»).
ImportePolitica = Annotated[str, Field(
    max_length=20,
    json_schema_extra={"pattern": PATRON_DINERO},
    description="Dinero como texto, de \"0\" a \"1000000.00\" (dos decimales como mucho).",
)]
def _sin_texto(valor: Any) -> Any:
    if isinstance(valor, str | bool):
        raise ValueError("debe ser un número entero")
    return valor


# Un entero de JSON: 72 o 72.0 (los dos son «integer» en JSON Schema), nunca "72" ni true.
Entero = Annotated[int, BeforeValidator(_sin_texto)]
Regla = Literal[tuple(NOMBRE_REGLA)]  # type: ignore[valid-type]
Rol = Literal["encargado", "gerente", "regional"]
EstadoSolicitud = Literal["pendiente", "aplicada", "rechazada", "caducada", "todas"]


def _campo(nombre: str) -> tuple[Any, Any]:
    valor = VALORES[nombre]
    descripcion = f"{valor.descripcion} Dominio: {valor.rango()}."
    if valor.tipo == "dinero":
        return ImportePolitica, Field(default=None, description=descripcion)
    return Entero, Field(default=None, description=descripcion,
                            json_schema_extra={"minimum": valor.minimo, "maximum": valor.maximo})


UmbralesCambio = create_model(
    "UmbralesCambio",
    __config__=ConfigDict(extra="forbid"),
    **{nombre: _campo(nombre) for nombre in VALORES},
)


class CambioPolitica(BaseModel):
    """Un cambio vacío (o igual a lo vigente) no crea versión: responde la política tal cual."""

    model_config = ConfigDict(extra="forbid")
    umbrales: UmbralesCambio = Field(  # type: ignore[valid-type]
        default=None, description="Umbrales de la tienda a cambiar, cada uno en su dominio.")
    limites: dict[Regla, dict[Rol, ImportePolitica | None]] = Field(  # type: ignore[valid-type]
        default=None, description="{regla: {rol: importe, o null = sin límite}} sobre la matriz vigente.")
    dos_firmas: dict[Regla, ImportePolitica | None] = Field(  # type: ignore[valid-type]
        default=None, description="{regla: importe por encima del cual hacen falta dos firmas, o null = nunca}.")
    motivo: str | None = Field(default=None, max_length=500)

    def umbrales_pedidos(self) -> dict[str, Any] | None:
        if self.umbrales is None:
            return None
        return self.umbrales.model_dump(exclude_none=True)


class AprobarSolicitud(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["aprobar"]
    motivo: str | None = Field(default=None, max_length=500)


class RechazarSolicitud(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["rechazar"]
    motivo: str = Field(max_length=500, description="Obligatorio: lo lee quien la pidió.",
                        json_schema_extra={"pattern": NO_VACIO})


DecisionSolicitud = Annotated[AprobarSolicitud | RechazarSolicitud, Field(discriminator="decision")]


class ReglaMatriz(BaseModel):
    limites: dict[str, str | None]
    dos_firmas_por_encima: str | None


class MatrizAutoridad(BaseModel):
    version: int
    propia: bool = Field(description="La propia de la tienda (false: la por defecto).")
    creada: datetime | None
    creada_por: str | None
    creada_por_nombre: str | None = Field(default=None, description="Quién la escribió, por su nombre («el sistema» si nadie).")
    firmada_por_nombre: str | None = Field(default=None, description="Quién firmó la solicitud que la amplió, por su nombre.")
    roles: list[str]
    reglas: dict[str, ReglaMatriz]


class VersionPolitica(BaseModel):
    version: int
    creada: datetime
    creada_por: str
    motivo: str | None
    firmada_por: str | None = Field(default=None, description="Quién firmó la solicitud que la amplió.")
    creada_por_nombre: str = Field(default="el sistema", description="Quién la escribió, por su nombre («el sistema» si nadie).")
    firmada_por_nombre: str | None = Field(default=None, description="Quién firmó, por su nombre.")
    solicitud_id: int | None = None


class Politica(BaseModel):
    tienda: str
    version: int = Field(description="Versión vigente de los umbrales.")
    umbrales: dict[str, str | int]
    historial: list[VersionPolitica]
    matriz: MatrizAutoridad
    historial_matriz: list[VersionPolitica]


class DiferenciaPolitica(BaseModel):
    clave: str
    etiqueta: str
    antes: str
    despues: str
    sentido: Literal["endurece", "amplia"]
    texto: str = Field(description="«etiqueta: antes → después», en español.")


class SolicitudPolitica(BaseModel):
    id: int
    tienda: str
    tienda_nombre: str
    autor: str
    autor_nombre: str
    autor_rol: str
    estado: Literal["pendiente", "aplicada", "rechazada", "caducada"]
    diferencias: list[DiferenciaPolitica]
    motivo: str | None
    firman: str = Field(description="Quién puede firmarla, en español.")
    creada: datetime
    caduca: datetime
    decidida: datetime | None
    decidida_por: str | None
    decidida_por_nombre: str | None
    decidida_rol: str | None
    motivo_decision: str | None
    version_umbrales: int | None
    matriz_id: int | None
    canal: Literal["web", "cli", "protocolo"] | None = Field(
        default=None, description="Por dónde se propuso: web, cli o protocolo (sin dato: de antes de registrarlo).")
    canal_decision: Literal["web", "cli", "protocolo"] | None = Field(
        default=None, description="Por dónde se firmó o rechazó.")


_CAMPOS_VERSION = tuple(VersionPolitica.model_fields)
_CAMPOS_SOLICITUD = tuple(SolicitudPolitica.model_fields)


def politica(datos: dict[str, Any]) -> dict[str, Any]:
    def _version(v: dict[str, Any]) -> dict[str, Any]:
        return {k: v.get(k) for k in _CAMPOS_VERSION}

    return {**datos, "historial": [_version(v) for v in datos["historial"]],
            "historial_matriz": [_version(v) for v in datos["historial_matriz"]]}


def solicitud(datos: dict[str, Any]) -> dict[str, Any]:
    return {k: datos.get(k) for k in _CAMPOS_SOLICITUD}
