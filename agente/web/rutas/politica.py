"""API de la política de la tienda para gerentes y regionales (solo sus tiendas).

- ``GET /api/politica/{tienda}``: umbrales y matriz vigentes con su historia.
- ``POST /api/politica/{tienda}``: un cambio que solo endurece se aplica (200, versión
  nueva); uno que amplía queda como solicitud (202) que firma alguien por encima del autor.
- ``/api/solicitudes-politica``: las solicitudes de cambio, y su firma o rechazo.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from agente.web.entrada.auth import CanalActual, EncargadoActual
from agente.web.esquemas import comun as esquemas
from agente.web.esquemas import politica as formas
from agente.web.infra.dependencias import ServicioWeb

router = APIRouter(tags=["politica"])

_ERRORES = {
    403: {"model": esquemas.Error, "description": (
        "No es gerente de esa tienda ni regional de su región (un encargado nunca), está de "
        "baja, o fija un valor por encima de su propio límite.")},
    404: {"model": esquemas.Error, "description": "Tienda desconocida."},
}
IdSolicitud = Annotated[int, Path(ge=1, le=2**62)]


@router.get("/api/politica/{tienda}", summary="Política de la tienda", response_model=formas.Politica,
            responses=_ERRORES)
def ver_politica(tienda: str, servicio: ServicioWeb, firmante: EncargadoActual):
    """Umbrales y matriz de autoridad vigentes de la tienda, con sus versiones (quién,
    cuándo, por qué y quién firmó)."""
    return formas.politica(servicio.politica(tienda, firmante=firmante.encargado_id))


@router.post(
    "/api/politica/{tienda}",
    summary="Cambiar la política de la tienda",
    response_model=formas.Politica,
    responses={
        **_ERRORES,
        202: {"model": formas.SolicitudPolitica, "description": (
            "El cambio amplía: queda como solicitud hasta que la firme alguien por encima del autor.")},
        422: {"model": esquemas.Error, "description": "Un valor fuera de su dominio o una matriz incoherente."},
    },
)
def fijar_politica(tienda: str, cuerpo: formas.CambioPolitica, servicio: ServicioWeb,
                   firmante: EncargadoActual, canal: CanalActual):
    """Un cambio que solo endurece (límites o umbrales más bajos, dos firmas desde menos,
    plazos más cortos) se aplica al momento como versión nueva y devuelve la política. Uno
    que amplía no cambia nada todavía: devuelve 202 con la solicitud y quién puede firmarla."""
    resultado = servicio.fijar_politica(
        tienda, autor=firmante.encargado_id, umbrales=cuerpo.umbrales_pedidos(), limites=cuerpo.limites,
        dos_firmas=cuerpo.dos_firmas, motivo=cuerpo.motivo, canal=canal,
    )
    if resultado.solicitud is not None:
        return JSONResponse(formas.SolicitudPolitica.model_validate(
            formas.solicitud(resultado.solicitud)).model_dump(mode="json"), status_code=202)
    return formas.politica(resultado.politica)


@router.get("/api/solicitudes-politica", summary="Solicitudes de cambio de política",
            response_model=list[formas.SolicitudPolitica], responses=_ERRORES)
def solicitudes(
    servicio: ServicioWeb,
    firmante: EncargadoActual,
    tienda: Annotated[str | None, Query(max_length=100, description="Solo esta tienda.")] = None,
    estado: Annotated[formas.EstadoSolicitud | None, Query(
        description="pendiente (por defecto), aplicada, rechazada o caducada; «todas» para todas.")] = "pendiente",
):
    """Las solicitudes de cambio de las tiendas que administra (la suya; un regional, las
    de su región): las pendientes primero, la más antigua antes."""
    filas = servicio.solicitudes_politica(
        firmante=firmante.encargado_id, tienda=tienda, estado=None if estado == "todas" else estado)
    return [formas.solicitud(f) for f in filas]


@router.get("/api/solicitudes-politica/{solicitud_id}", summary="Una solicitud de cambio de política",
            response_model=formas.SolicitudPolitica,
            responses={**_ERRORES, 404: {"model": esquemas.Error, "description": "No existe."}})
def ver_solicitud(solicitud_id: IdSolicitud, servicio: ServicioWeb, firmante: EncargadoActual):
    return formas.solicitud(servicio.solicitud_politica(solicitud_id, firmante=firmante.encargado_id))


@router.post(
    "/api/solicitudes-politica/{solicitud_id}/decision",
    summary="Firmar o rechazar un cambio de política",
    response_model=formas.SolicitudPolitica,
    responses={
        **_ERRORES,
        404: {"model": esquemas.Error, "description": "No existe."},
        409: {"model": esquemas.Error, "description": "Ya decidida, caducada o vencida."},
        422: {"model": esquemas.Error, "description": "Rechazo sin motivo, o la matriz resultante es incoherente."},
    },
)
def decidir_solicitud(solicitud_id: IdSolicitud, cuerpo: formas.DecisionSolicitud, servicio: ServicioWeb,
                      firmante: EncargadoActual, canal: CanalActual):
    """Solo alguien por encima del autor en la cadena de la tienda: nunca el autor (403),
    nunca alguien cuyo propio límite sube con el cambio, ni con valores por encima de su
    límite. Al aprobar se aplica como versión nueva que dice quién la firmó."""
    return formas.solicitud(servicio.decidir_solicitud_politica(
        solicitud_id, firmante=firmante.encargado_id, aprobar=cuerpo.decision == "aprobar",
        motivo=cuerpo.motivo, canal=canal,
    ))
