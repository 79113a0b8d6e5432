"""Historial de decisiones del encargado: la pestaña «Historial» y su CSV para contabilidad."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import BeforeValidator, WithJsonSchema

from agente.servicio.decisiones.decididas import (
    FORMATOS_CSV,
    TIPOS,
    Filtros,
    como_csv,
    como_csv_hoja,
)
from agente.web.entrada.auth import EncargadoActual
from agente.web.esquemas import bandeja as esquemas_bandeja
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import ServicioWeb
from nucleo.errores import Prohibido

router = APIRouter(prefix="/api/decisiones", tags=["encargado"])

ERRORES_PERSONAL = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "Otra tienda, otro rol o encargado de baja."},
}
MAX_CSV = 10_000  # filas de un CSV (historial y movimientos)


# RFC 3339, como dice ``format: date-time``: fecha, hora y zona. Sin esto pydantic tomaba
# «0.5» por segundos desde 1970 (un 200 con datos que el esquema prohíbe).
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _rfc3339(valor: object) -> object:
    if not isinstance(valor, str) or not _RFC3339.fullmatch(valor):
        raise ValueError("debe ser una fecha y hora ISO 8601 con zona, como 2026-12-01T00:00:00Z")
    return valor


FechaHora = Annotated[datetime, BeforeValidator(_rfc3339),
                      WithJsonSchema({"type": "string", "format": "date-time"})]


def _filtros(
    desde: Annotated[FechaHora | None, Query(description="Decididas desde (incluido), ISO 8601 con zona.")] = None,
    hasta: Annotated[FechaHora | None, Query(description="Decididas antes de (excluido), ISO 8601 con zona.")] = None,
    decision: Annotated[Literal[TIPOS] | None, Query(description="La decisión que manda.")] = None,  # type: ignore[valid-type]
    encargado: Annotated[str | None, Query(max_length=100)] = None,
    cliente: Annotated[str | None, Query(max_length=100)] = None,
    pedido: Annotated[str | None, Query(max_length=100)] = None,
    tienda: Annotated[str | None, Query(max_length=100, description="Una de tus tiendas.")] = None,
    pagina: Annotated[int, Query(ge=1, le=100_000)] = 1,
    por_pagina: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Filtros:
    return Filtros(desde=desde, hasta=hasta, tipo=decision, encargado=encargado, cliente=cliente,
                   pedido=pedido, tienda=tienda, pagina=pagina, por_pagina=por_pagina)


FiltrosHistorial = Annotated[Filtros, Depends(_filtros)]


def _comprobar_tienda(servicio, encargado, filtros: Filtros) -> None:
    if filtros.tienda is not None and filtros.tienda not in servicio.tiendas_de(encargado.encargado_id):
        raise Prohibido("solo puedes ver el historial de tus tiendas")


@router.get("", summary="Historial de decisiones", response_model=esquemas_bandeja.PaginaDecisiones, responses=ERRORES_PERSONAL)
def historial(servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosHistorial):
    """Decisiones de las tiendas del encargado, la más reciente primero, por páginas."""
    _comprobar_tienda(servicio, encargado, filtros)
    decisiones, total = servicio.decisiones_tomadas(encargado.encargado_id, filtros)
    return {"total": total, "pagina": filtros.pagina, "por_pagina": filtros.por_pagina,
            "decisiones": decisiones}


@router.get(".csv", summary="Historial de decisiones en CSV", response_class=Response,
            responses={**ERRORES_PERSONAL, 200: {"content": {"text/csv": {}}, "description": "Una fila por operación."}})
def historial_csv(
    servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosHistorial,
    formato: Annotated[Literal[FORMATOS_CSV], Query(  # type: ignore[valid-type]
        description="«hoja» (por defecto): para una hoja de cálculo en español, con «;», UTF-8 con BOM, "
                    "coma decimal, la hora de la tienda y su zona, cabeceras y decisiones en español. "
                    "«maquina»: para programas, con «,», importes con punto (\"90.00\"), fechas ISO 8601 "
                    "en UTC y los tipos de decisión de la API (approve, edit...).")] = "hoja",
):
    """Los mismos filtros que el historial, sin paginar (hasta 10.000 decisiones): una fila por
    operación decidida."""
    _comprobar_tienda(servicio, encargado, filtros)
    todos = Filtros(**{**filtros.__dict__, "pagina": 1, "por_pagina": MAX_CSV})
    decisiones, _ = servicio.decisiones_tomadas(encargado.encargado_id, todos)
    texto = como_csv(decisiones) if formato == "maquina" else como_csv_hoja(decisiones)
    return Response(texto, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="decisiones.csv"'})
