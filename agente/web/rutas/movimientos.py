"""Movimientos: todo el dinero y la mercancía que se movieron en las tiendas del encargado,
automáticos o firmados (la pestaña «Movimientos» y su CSV para contabilidad)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from agente.servicio.auditoria.movimientos import ESTADOS, TIPOS, Filtros
from agente.servicio.auditoria.movimientos_csv import como_csv, como_csv_hoja
from agente.servicio.decisiones.decididas import FORMATOS_CSV
from agente.web.entrada.auth import EncargadoActual
from agente.web.esquemas import movimientos as esquemas_movimientos
from agente.web.infra.dependencias import ServicioWeb
from agente.web.rutas.historial import ERRORES_PERSONAL, MAX_CSV, FechaHora
from nucleo.errores import Prohibido

router = APIRouter(prefix="/api/movimientos", tags=["encargado"])



def _filtros(
    desde: Annotated[FechaHora | None, Query(description="Desde (incluido), ISO 8601 con zona.")] = None,
    hasta: Annotated[FechaHora | None, Query(description="Antes de (excluido), ISO 8601 con zona.")] = None,
    tipo: Annotated[Literal[TIPOS] | None, Query(description="El tipo de movimiento.")] = None,  # type: ignore[valid-type]
    estado: Annotated[Literal[ESTADOS] | None, Query(  # type: ignore[valid-type]
        description="completado (solo estos llevan importe final), pendiente, fallido o anulado.")] = None,
    tienda: Annotated[str | None, Query(max_length=100, description="Una de tus tiendas.")] = None,
    pagina: Annotated[int, Query(ge=1, le=100_000)] = 1,
    por_pagina: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Filtros:
    return Filtros(desde=desde, hasta=hasta, tipo=tipo, estado=estado, tienda=tienda,
                              pagina=pagina, por_pagina=por_pagina)


FiltrosPeticion = Annotated[Filtros, Depends(_filtros)]


def _comprobar_tienda(servicio, encargado, filtros: Filtros) -> None:
    if filtros.tienda is not None and filtros.tienda not in servicio.tiendas_de(encargado.encargado_id):
        raise Prohibido("solo puedes ver los movimientos de tus tiendas")


@router.get("", summary="Movimientos de dinero y mercancía", response_model=esquemas_movimientos.PaginaMovimientos,
            responses=ERRORES_PERSONAL)
def movimientos(servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosPeticion):
    """Reembolsos, cobros, diferencias de cambio, cancelaciones, cambios, reenvíos y vales de las
    tiendas del encargado, automáticos o firmados, el más reciente primero, por páginas; con los
    totales por tipo (mismos filtros, sin paginar)."""
    _comprobar_tienda(servicio, encargado, filtros)
    pagina, total, totales = servicio.movimientos(encargado.encargado_id, filtros)
    return {"total": total, "pagina": filtros.pagina, "por_pagina": filtros.por_pagina,
            "movimientos": pagina, "totales": totales}


@router.get(".csv", summary="Movimientos en CSV", response_class=Response,
            responses={**ERRORES_PERSONAL, 200: {"content": {"text/csv": {}}, "description": "Una fila por movimiento."}})
def movimientos_csv(
    servicio: ServicioWeb, encargado: EncargadoActual, filtros: FiltrosPeticion,
    formato: Annotated[Literal[FORMATOS_CSV], Query(  # type: ignore[valid-type]
        description="«hoja» (por defecto): como el CSV del historial, para una hoja de cálculo en español "
                    "(«;», UTF-8 con BOM, coma decimal, la hora de la tienda y su zona). «maquina»: «,», "
                    "importes con punto, fechas ISO 8601 en UTC y los valores de la API.")] = "hoja",
):
    """Los mismos filtros, sin paginar (hasta 10.000 movimientos): una fila por movimiento; el
    importe final solo en los completados."""
    _comprobar_tienda(servicio, encargado, filtros)
    todos = Filtros(**{**filtros.__dict__, "pagina": 1, "por_pagina": MAX_CSV})
    filas, _, _ = servicio.movimientos(encargado.encargado_id, todos)
    texto = como_csv(filas) if formato == "maquina" else como_csv_hoja(filas)
    return Response(texto, media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="movimientos.csv"'})
