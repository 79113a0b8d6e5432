"""Esquemas de la entrada del personal (OIDC y enlace por correo)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Aviso", "CanjearEnlace", "Entradas", "PedirEnlace", "ProveedorEntrada"]

# Clases explícitas, no ``\s``: JSON Schema (ECMAScript) y pydantic (Rust) no entienden lo
# mismo por espacio (U+0085), y el esquema debe decir exactamente lo que se acepta.
_EMAIL = r"^[^@ \t\r\n\x00]+@[^@ \t\r\n\x00]+\.[^@ \t\r\n\x00]+$"


class PedirEnlace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str = Field(pattern=_EMAIL, max_length=254, description="Tu correo de encargado.")


class CanjearEnlace(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str = Field(pattern=_EMAIL, max_length=254, description="El correo al que llegó el enlace.")
    token: str = Field(pattern=r"^[A-Za-z0-9_-]{20,100}$", description="El token del enlace (su fragmento).")
    canal: Literal["web", "cli"] = Field(default="web", description="cli: lo canjea `agente entrar`.")


class Aviso(BaseModel):
    detalle: str


class ProveedorEntrada(BaseModel):
    nombre: str
    titulo: str
    url: str


class Entradas(BaseModel):
    proveedores: list[ProveedorEntrada]
    correo: bool = Field(description="Si se puede pedir un enlace de entrada por correo.")
