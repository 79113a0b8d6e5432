"""API de la política de la tienda para gerentes y regionales (solo sus tiendas): leer y
cambiar umbrales y matriz de autoridad. Cada cambio es una versión nueva (quién y cuándo);
lo que ya espera se decide con la versión con la que se pausó."""

from __future__ import annotations

from fastapi import APIRouter

from agente.web import esquemas
from agente.web.auth import EncargadoActual
from agente.web.dependencias import ServicioWeb

router = APIRouter(prefix="/api/politica", tags=["politica"])

_ERRORES = {
    403: {"model": esquemas.Error, "description": (
        "No es gerente de esa tienda ni regional de su región (un encargado nunca), o está de baja.")},
    404: {"model": esquemas.Error, "description": "Tienda desconocida."},
}


@router.get("/{tienda}", summary="Política de la tienda", response_model=esquemas.Politica, responses=_ERRORES)
def ver_politica(tienda: str, servicio: ServicioWeb, firmante: EncargadoActual):
    """Umbrales y matriz de autoridad vigentes de la tienda, con sus versiones."""
    return esquemas.politica(servicio.politica(tienda, firmante=firmante.encargado_id))


@router.post(
    "/{tienda}",
    summary="Cambiar la política de la tienda",
    response_model=esquemas.Politica,
    responses={**_ERRORES, 422: {"model": esquemas.Error, "description": (
        "Nada que cambiar, un valor no válido o una matriz incoherente.")}},
)
def fijar_politica(tienda: str, cuerpo: esquemas.CambioPolitica, servicio: ServicioWeb,
                   firmante: EncargadoActual):
    """Versión nueva de los umbrales y/o de la matriz (parte de la vigente); devuelve la
    política resultante."""
    return esquemas.politica(servicio.fijar_politica(
        tienda, autor=firmante.encargado_id, umbrales=cuerpo.umbrales, limites=cuerpo.limites,
        dos_firmas=cuerpo.dos_firmas, motivo=cuerpo.motivo,
    ))
