"""Historial de decisiones del encargado: la pestaña «Historial» y su CSV para contabilidad."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from agente.nucleo.errores import Prohibido
from agente.servicio.decididas import TIPOS, Filtros, como_csv
from agente.web import esquemas
from agente.web.auth import EncargadoActual
from agente.web.dependencias import ServicioWeb

router = APIRouter(prefix="/api/decisiones", tags=["encargado"])

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": "Otra tienda, otro rol o encargado de baja."},
}
MAX_CSV = 10_000


def _filtros(
    desde: Annotated[datetime | None, Query(description="Decididas desde (incluido), ISO 8601.")] = None,
    hasta: Annotated[datetime | None, Query(description="Decididas antes de (excluido), ISO 8601.")] = None,
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


@router.get("", summary="Historial de decisiones", response_model=esquemas.PaginaDecisiones, responses=_ERRORES)
def historial(servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosHistorial):
    """Decisiones de las tiendas del encargado, la más reciente primero, por páginas."""
    _comprobar_tienda(servicio, encargado, filtros)
    decisiones, total = servicio.decisiones_tomadas(encargado.encargado_id, filtros)
    return {"total": total, "pagina": filtros.pagina, "por_pagina": filtros.por_pagina,
            "decisiones": decisiones}


@router.get(".csv", summary="Historial de decisiones en CSV", response_class=Response,
            responses={**_ERRORES, 200: {"content": {"text/csv": {}}, "description": "Una fila por operación."}})
def historial_csv(servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosHistorial):
    """Los mismos filtros que el historial, sin paginar (hasta 10.000 decisiones): una fila por
    operación decidida, importes con punto decimal (``"90.00"``), fechas ISO 8601."""
    _comprobar_tienda(servicio, encargado, filtros)
    todos = Filtros(**{**filtros.__dict__, "pagina": 1, "por_pagina": MAX_CSV})
    decisiones, _ = servicio.decisiones_tomadas(encargado.encargado_id, todos)
    return Response(como_csv(decisiones), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="decisiones.csv"'})
