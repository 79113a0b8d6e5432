"""El alta sin SQL: ``/api/tiendas``, ``/api/regiones`` y ``/api/personas`` (crear,
cambiar, desactivar y listar), como la persona del token. La separación de funciones la
aplica el servicio (``Servicio.alta``): 403 con el motivo en español."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from agente.web.entrada.auth import CanalActual, EncargadoActual
from agente.web.esquemas import alta as formas
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import ServicioWeb

router = APIRouter(tags=["alta"])

Id = Annotated[str, Path(pattern=formas.ID, description="Minúsculas, cifras y guiones.")]
_LEER = {403: {"model": esquemas.Error, "description": "De baja."}}
_CAMBIAR = {
    403: {"model": esquemas.Error, "description": (
        "La separación de funciones: un rol más alto que el propio, fuera de su tienda o región, "
        "cambiarse a sí mismo el rol o las tiendas; un encargado no gestiona a nadie.")},
    404: {"model": esquemas.Error, "description": "Tienda, región o persona desconocida."},
    409: {"model": esquemas.Error, "description": "Ya existe (el id o el correo), una región con tiendas activas, o algo que no cuadra (una zona horaria que no existe, un encargado sin tienda)."},
}


# -- tiendas ---------------------------------------------------------------------------------

@router.get("/api/tiendas", summary="Tiendas que gestiona", response_model=list[formas.Tienda], responses=_LEER)
def tiendas(servicio: ServicioWeb, quien: EncargadoActual):
    """Todas (administrador), las de su región (regional) o la suya."""
    return servicio.alta.tiendas(quien.encargado_id)


@router.post("/api/tiendas", summary="Dar de alta una tienda", status_code=201, response_model=formas.Tienda,
             responses=_CAMBIAR)
def crear_tienda(cuerpo: formas.TiendaNueva, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """Un regional, en su región; un administrador, en cualquiera. Con la política por defecto."""
    return servicio.alta.crear_tienda(quien.encargado_id, canal, cuerpo.model_dump(exclude_none=True))


@router.patch("/api/tiendas/{tienda}", summary="Cambiar una tienda", response_model=formas.Tienda,
              responses=_CAMBIAR)
def editar_tienda(tienda: Id, cuerpo: formas.CambiosTienda, servicio: ServicioWeb, quien: EncargadoActual,
                  canal: CanalActual):
    """Cambia lo que viene; lo demás queda igual."""
    return servicio.alta.editar_tienda(quien.encargado_id, canal, tienda, cuerpo.model_dump(exclude_none=True))


@router.post("/api/tiendas/{tienda}/desactivar", summary="Desactivar una tienda", response_model=formas.Tienda,
             responses=_CAMBIAR)
def desactivar_tienda(tienda: Id, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """Deja de contar en su región: sus regionales dejan de firmar en ella."""
    return servicio.alta.desactivar_tienda(quien.encargado_id, canal, tienda)


# -- regiones --------------------------------------------------------------------------------

@router.get("/api/regiones", summary="Regiones que gestiona", response_model=list[formas.Region], responses=_LEER)
def regiones(servicio: ServicioWeb, quien: EncargadoActual):
    """Todas (administrador) o la suya (regional), con sus tiendas activas."""
    return servicio.alta.regiones(quien.encargado_id)


@router.post("/api/regiones", summary="Dar de alta una región", status_code=201, response_model=formas.Region,
             responses=_CAMBIAR)
def crear_region(cuerpo: formas.RegionNueva, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """Solo un administrador."""
    return servicio.alta.crear_region(quien.encargado_id, canal, cuerpo.model_dump())


@router.patch("/api/regiones/{region}", summary="Cambiar una región", response_model=formas.Region,
              responses=_CAMBIAR)
def editar_region(region: Id, cuerpo: formas.CambiosRegion, servicio: ServicioWeb, quien: EncargadoActual,
                  canal: CanalActual):
    """Solo un administrador."""
    return servicio.alta.editar_region(quien.encargado_id, canal, region, cuerpo.model_dump())


@router.post("/api/regiones/{region}/desactivar", summary="Desactivar una región", response_model=formas.Region,
             responses=_CAMBIAR)
def desactivar_region(region: Id, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """Solo un administrador, y sin tiendas activas (409 si las tiene)."""
    return servicio.alta.desactivar_region(quien.encargado_id, canal, region)


# -- personas --------------------------------------------------------------------------------

@router.get("/api/personas", summary="Personas que gestiona", response_model=list[formas.Persona], responses=_LEER)
def personas(servicio: ServicioWeb, quien: EncargadoActual):
    """Todas (administrador), las de su región (regional), las de su tienda (gerente) o él mismo."""
    return servicio.alta.personas(quien.encargado_id)


@router.post("/api/personas", summary="Dar de alta a una persona", status_code=201, response_model=formas.Persona,
             responses=_CAMBIAR)
def crear_persona(cuerpo: formas.PersonaNueva, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """Nunca con un rol más alto que el de quien la crea ni fuera de lo que gestiona."""
    return servicio.alta.crear_persona(quien.encargado_id, canal, cuerpo.model_dump(exclude_none=True))


@router.patch("/api/personas/{persona}", summary="Cambiar a una persona", response_model=formas.Persona,
              responses=_CAMBIAR)
def editar_persona(persona: Id, cuerpo: formas.CambiosPersona, servicio: ServicioWeb, quien: EncargadoActual,
                   canal: CanalActual):
    """Cambia lo que viene; nadie se cambia a sí mismo el rol, la tienda, la región ni el alta."""
    return servicio.alta.editar_persona(quien.encargado_id, canal, persona, cuerpo.model_dump(exclude_none=True))


@router.post("/api/personas/{persona}/desactivar", summary="Dar de baja a una persona",
             response_model=formas.Persona, responses=_CAMBIAR)
def desactivar_persona(persona: Id, servicio: ServicioWeb, quien: EncargadoActual, canal: CanalActual):
    """No entra ni firma, y suelta al momento sus «lo atiendo yo»."""
    return servicio.alta.desactivar_persona(quien.encargado_id, canal, persona)
