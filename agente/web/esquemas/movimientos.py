"""Esquemas de ``GET /api/movimientos``: todo el dinero y la mercancía que se movieron."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from agente.web.esquemas.comun import Cliente

__all__ = ["PaginaMovimientos"]

Tipo = Literal["reembolso", "diferencia_devuelta", "cobro", "cobro_devuelto", "cancelacion", "cambio",
               "reenvio", "vale"]
Flujo = Literal["sale", "entra", "vale", "mercancia"]
_IMPORTE = "Importe con dos decimales y punto, como texto («90.00»)."


class EnLaPasarela(BaseModel):
    referencia: str = Field(description="La referencia que se mandó a la pasarela (el número del asiento).")
    id_proveedor: str | None = Field(description="El id que el proveedor (Stripe) dio al movimiento.")
    estado: str | None = Field(description="El estado del asiento: pendiente, emitido, confirmado o caducado.")
    intentos: int | None = Field(description="Cuántas veces falló la pasarela.")
    error: str | None = Field(description="El último error (o detalle) de la pasarela.")
    requiere_persona: bool | None = Field(description="Marcado para una persona tras varios fallos o un rechazo.")
    fallo_tardio_en: datetime | None = Field(description="Cuándo el proveedor se desdijo de un movimiento hecho.")


class Movimiento(BaseModel):
    tipo: Tipo
    titulo: str = Field(description="El tipo, para leerlo («Reembolso»).")
    flujo: Flujo = Field(description="sale: dinero al cliente; entra: dinero del cliente; vale; mercancia.")
    numero: str = Field(description="RE-, CO-, CA-, SU-, RV- o VA-: el número del movimiento.")
    operacion: str = Field(description="La operación de la que sale (el cambio de una diferencia, por ejemplo).")
    fecha: datetime
    completado_en: datetime | None
    tienda: str
    tienda_nombre: str
    pedido: str
    cliente: Cliente
    importe: str | None = Field(description=_IMPORTE + " Sin importe: un cambio (su dinero va aparte).")
    importe_final: str | None = Field(description="Lo que de verdad se movió: solo en los completados.")
    estado: Literal["completado", "pendiente", "fallido", "anulado"]
    autorizado_por: str = Field(description="Quienes firmaron («Nombre (rol)»), o «automático (política)».")
    veredicto: str = Field(description="El veredicto guardado de la política para esa llamada.")
    pasarela: EnLaPasarela | None = Field(description="Solo lo que pasa por la pasarela de pagos.")
    detalle: str | None
    thread_id: str


class TotalMovimientos(BaseModel):
    tipo: Tipo
    titulo: str
    flujo: Flujo
    movimientos: int
    importe: str | None = Field(description="La suma de todos, completados o no.")
    importe_final: str | None = Field(description="La suma de los completados: lo que de verdad se movió.")
    pendientes: int
    fallidos: int
    anulados: int


class PaginaMovimientos(BaseModel):
    total: int
    pagina: int
    por_pagina: int
    movimientos: list[Movimiento]
    totales: list[TotalMovimientos] = Field(description="Por tipo, con los mismos filtros y sin paginar.")
