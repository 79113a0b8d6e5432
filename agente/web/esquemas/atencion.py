"""Formas de la API de la tienda sobre sus conversaciones: la búsqueda (pestaña
«Conversaciones»), la transcripción y «Escribir al cliente»."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agente.servicio.conversaciones.atencion import MAX_TEXTO
from agente.servicio.politica.dominio import NOMBRE_REGLA, VALORES
from agente.web.esquemas.comun import NO_VACIO

__all__ = [
    "ConversacionTienda",
    "EstadoConversacion",
    "GestionPolitica",
    "MensajeTienda",
    "MensajeTiendaCreado",
    "PaginaConversaciones",
    "ResumenConversacion",
    "TiendaAdministrada",
    "gestion_politica",
    "mensaje_creado",
    "resumen",
    "transcripcion",
]

EstadoConversacion = Literal["resuelta", "esperando_tienda", "abierta"]


class MensajeTienda(BaseModel):
    model_config = ConfigDict(extra="forbid")
    texto: str = Field(
        min_length=1, max_length=MAX_TEXTO, json_schema_extra={"pattern": NO_VACIO},
        description=("Lo que lee el cliente, firmado con tu nombre. Texto llano: una etiqueta de "
                     "HTML («<b>», «</p>», «<!--») es un 422."))


class MensajeTiendaCreado(BaseModel):
    id: int
    thread_id: str
    autor: str = Field(description="El nombre de quien lo escribió (lo ve el cliente).")
    texto: str
    fecha: datetime


class ResumenConversacion(BaseModel):
    thread_id: str
    tienda: str
    tienda_nombre: str
    cliente_id: str
    cliente_nombre: str
    estado: str = Field(description="El estado interno de la conversación.")
    estado_cliente: EstadoConversacion = Field(
        description="El que ve el cliente: resuelta, esperando a la tienda o abierta.")
    pendiente: bool = Field(description="Tiene una aprobación esperando firma.")
    creada: datetime
    actividad: datetime = Field(description="El último mensaje o cambio, el de la tienda incluido.")
    tema: str | None = Field(description="El primer mensaje del cliente (recortado).")
    ultimo_texto: str | None
    ultimo_rol: str | None
    pedidos: list[str] = Field(description="Los pedidos que nombra la conversación.")


class PaginaConversaciones(BaseModel):
    conversaciones: list[ResumenConversacion]
    total: int = Field(description="Cuántas cumplen los filtros (en todas las páginas).")
    pagina: int
    por_pagina: int


class MensajeConversacion(BaseModel):
    id: int
    rol: Literal["cliente", "agente", "tienda"]
    texto: str
    fecha: datetime
    retenido: bool
    autor: str | None = Field(description="Rol «tienda»: quién lo escribió.")


class ConversacionTienda(ResumenConversacion):
    mensajes: list[MensajeConversacion]


class TiendaAdministrada(BaseModel):
    id: str
    nombre: str


class ValorPolitica(BaseModel):
    clave: str
    descripcion: str
    tipo: Literal["dinero", "entero"]
    rango: str = Field(description="El dominio en español («entre 1 y 720 horas»).")


class GestionPolitica(BaseModel):
    """Lo que necesita la página «Política»: dónde y qué se puede cambiar."""

    tiendas: list[TiendaAdministrada]
    valores: list[ValorPolitica]
    reglas: dict[str, str] = Field(description="{regla de la matriz: su nombre en plural, en español}.")


def gestion_politica(tiendas: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tiendas": tiendas, "reglas": dict(NOMBRE_REGLA), "valores": [
        {"clave": v.nombre, "descripcion": v.descripcion, "tipo": v.tipo, "rango": v.rango()}
        for v in VALORES.values()]}


_CAMPOS_RESUMEN = tuple(ResumenConversacion.model_fields)


def resumen(fila: dict[str, Any]) -> dict[str, Any]:
    return {k: fila.get(k) for k in _CAMPOS_RESUMEN}


def transcripcion(fila: dict[str, Any]) -> dict[str, Any]:
    return {**resumen(fila), "mensajes": [
        {"id": m["id"], "rol": m["rol"], "texto": m["texto"], "fecha": m["creado"],
         "retenido": bool(m["retenido"]), "autor": m["autor"]} for m in fila["mensajes"]]}


def mensaje_creado(fila: dict[str, Any]) -> dict[str, Any]:
    return {"id": fila["id"], "thread_id": fila["thread_id"], "autor": fila["autor"],
            "texto": fila["texto"], "fecha": fila["creado"]}
