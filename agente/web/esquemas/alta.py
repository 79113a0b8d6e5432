"""Los cuerpos de ``/api/tiendas``, ``/api/regiones`` y ``/api/personas`` (el alta).

Los patrones son los del servicio (``agente/servicio/alta/``): un cuerpo que cumple el
esquema no se rechaza por su forma (422 solo si no lo cumple); lo que tiene la forma pero no
cuadra (una zona horaria que no existe, un encargado sin tienda) es 409.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CambiosPersona",
    "CambiosRegion",
    "CambiosTienda",
    "Persona",
    "PersonaNueva",
    "Region",
    "RegionNueva",
    "Tienda",
    "TiendaNueva",
]

ID = r"^[a-z0-9][a-z0-9-]{0,62}$"
ID_O_VACIO = r"^([a-z0-9][a-z0-9-]{0,62})?$"
TEXTO = r"^[^\x00]*[^\s\x00][^\x00]*$"
EMAIL = r"^[^@\s\x00]+@[^@\s\x00]+\.[^@\s\x00]+$"
CODIGO_POSTAL = r"^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$"
ZONA = r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$"
Rol = Literal["encargado", "gerente", "regional"]
_CERRADO = ConfigDict(extra="forbid")


def _texto(maximo: int, descripcion: str, *, opcional: bool = True):
    extra = {"default": None} if opcional else {}
    return Field(min_length=1, max_length=maximo, pattern=TEXTO, description=descripcion, **extra)


class TiendaNueva(BaseModel):
    model_config = _CERRADO
    id: str = Field(pattern=ID, description="Minúsculas, cifras y guiones (p. ej. mi-tienda).")
    nombre: str = _texto(100, "Nombre visible.", opcional=False)
    zona_horaria: str | None = Field(None, pattern=ZONA, max_length=60,
                                     description="Zona IANA; por defecto Europe/Madrid (409 si no existe).")
    calle: str | None = _texto(200, "Calle y número.")
    codigo_postal: str | None = Field(None, pattern=CODIGO_POSTAL, description="La provincia sale de él.")
    localidad: str | None = _texto(100, "Localidad.")
    provincia: str | None = _texto(100, "Si se da, la del código postal (409 si no).")
    region: str | None = Field(None, pattern=ID, description="Id de su región.")


class CambiosTienda(BaseModel):
    model_config = _CERRADO
    nombre: str | None = _texto(100, "Nombre visible.")
    zona_horaria: str | None = Field(None, pattern=ZONA, max_length=60, description="Zona IANA (409 si no existe).")
    calle: str | None = _texto(200, "Calle y número.")
    codigo_postal: str | None = Field(None, pattern=CODIGO_POSTAL, description="La provincia sale de él.")
    localidad: str | None = _texto(100, "Localidad.")
    provincia: str | None = _texto(100, "Si se da, la del código postal (409 si no).")
    region: str | None = Field(None, pattern=ID_O_VACIO, description="Id de su región; vacío la quita.")


class Tienda(BaseModel):
    id: str
    nombre: str
    region: str | None
    activa: bool
    zona_horaria: str
    calle: str | None
    codigo_postal: str | None
    localidad: str | None
    provincia: str | None


class RegionNueva(BaseModel):
    model_config = _CERRADO
    id: str = Field(pattern=ID, description="Minúsculas, cifras y guiones (p. ej. centro).")
    nombre: str = _texto(100, "Nombre visible.", opcional=False)


class CambiosRegion(BaseModel):
    model_config = _CERRADO
    nombre: str = _texto(100, "Nombre visible.", opcional=False)


class Region(BaseModel):
    id: str
    nombre: str
    activa: bool
    tiendas: list[str] = Field(description="Sus tiendas activas.")


class PersonaNueva(BaseModel):
    model_config = _CERRADO
    id: str = Field(pattern=ID, description="P. ej. enc-mi-tienda.")
    nombre: str = _texto(100, "Nombre y apellidos.", opcional=False)
    email: str = Field(pattern=EMAIL, max_length=200, description="El correo con el que entra (único).")
    rol: Rol
    tienda: str | None = Field(None, pattern=ID, description="Su tienda (encargado y gerente).")
    region: str | None = Field(None, pattern=ID, description="Su región (regional).")
    administrador: bool = Field(False, description="Solo lo da un administrador.")


class CambiosPersona(BaseModel):
    model_config = _CERRADO
    nombre: str | None = _texto(100, "Nombre y apellidos.")
    email: str | None = Field(None, pattern=EMAIL, max_length=200, description="El correo con el que entra.")
    rol: Rol | None = None
    tienda: str | None = Field(None, pattern=ID_O_VACIO, description="Su tienda; vacío la quita.")
    region: str | None = Field(None, pattern=ID_O_VACIO, description="Su región; vacío la quita.")
    administrador: bool | None = None
    activo: bool | None = Field(None, description="true vuelve a darla de alta; false, de baja.")


class Persona(BaseModel):
    id: str
    nombre: str
    email: str | None
    rol: str
    tienda: str | None
    region: str | None
    administrador: bool
    activo: bool
