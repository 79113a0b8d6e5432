"""API de la tienda sobre las conversaciones de sus clientes (pestaña «Conversaciones» de
``/encargado``) y las tiendas cuya política administra quien entra (pestaña «Política»).

- ``GET /api/personal/conversaciones``: las de sus tiendas (no solo las pendientes),
  buscables por cliente, pedido y estado, en páginas.
- ``GET /api/personal/conversaciones/{thread_id}``: su transcripción.
- ``POST /api/personal/conversaciones/{thread_id}/mensajes``: «Escribir al cliente»: lo lee
  en directo en su chat, firmado con el nombre de quien escribe; nunca reanuda ni cambia una
  aprobación pendiente.
- ``GET /api/politica``: las tiendas cuya política puede ver y proponer cambiar (gerente o
  regional; un encargado, 403).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from agente.servicio.conversaciones.atencion import Busqueda
from agente.servicio.politica import politica_tienda
from agente.web.entrada.auth import EncargadoActual
from agente.web.esquemas import atencion as formas
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import ServicioWeb
from nucleo.errores import Prohibido

router = APIRouter(tags=["encargado"])

_ERRORES = {
    401: {"model": esquemas.Error, "description": "Sin token o token no válido o caducado."},
    403: {"model": esquemas.Error, "description": (
        "Token de cliente, persona de baja, o conversación (o tienda) en la que no trabaja.")},
}
_NO_EXISTE = {404: {"model": esquemas.Error, "description": "La conversación no existe o aún no tiene mensajes."}}


def _tiendas(encargado, tienda: str | None) -> tuple[str, ...]:
    if tienda is None:
        return tuple(encargado.tiendas)
    if tienda not in encargado.tiendas:
        raise Prohibido("solo puedes ver las conversaciones de tus tiendas")
    return (tienda,)


@router.get("/api/personal/conversaciones", summary="Conversaciones de sus tiendas",
            response_model=formas.PaginaConversaciones,
            responses={**_ERRORES, 422: {"model": esquemas.Error, "description": "Un filtro no válido."}})
def conversaciones(
    servicio: ServicioWeb,
    encargado: EncargadoActual,
    cliente: Annotated[str | None, Query(max_length=100, description="Id o parte del nombre del cliente.")] = None,
    pedido: Annotated[str | None, Query(max_length=40, description="Un pedido (o parte) que nombre la conversación.")] = None,
    estado: Annotated[formas.EstadoConversacion | None, Query(
        description="El que ve el cliente: resuelta, esperando_tienda o abierta.")] = None,
    tienda: Annotated[str | None, Query(max_length=100, description="Solo esta de sus tiendas.")] = None,
    pagina: Annotated[int, Query(ge=1, le=10_000)] = 1,
    por_pagina: Annotated[int, Query(ge=1, le=50)] = 20,
):
    """Las conversaciones con algún mensaje de las tiendas de quien entra (la suya; un
    regional, las de su región), la de actividad más reciente primero, con el estado que ve
    el cliente y los pedidos que nombra."""
    filtro = Busqueda(cliente=cliente, pedido=pedido, estado=estado, pagina=pagina,
                                    por_pagina=por_pagina)
    filas, total = servicio.atencion.buscar(_tiendas(encargado, tienda), filtro)
    return {"conversaciones": [formas.resumen(f) for f in filas], "total": total,
            "pagina": pagina, "por_pagina": por_pagina}


@router.get("/api/personal/conversaciones/{thread_id}", summary="Transcripción de una conversación",
            response_model=formas.ConversacionTienda, responses={**_ERRORES, **_NO_EXISTE})
def una_conversacion(thread_id: str, servicio: ServicioWeb, encargado: EncargadoActual):
    """Los mensajes del cliente, del agente y de la tienda, por orden."""
    return formas.transcripcion(servicio.atencion.transcripcion(thread_id, tuple(encargado.tiendas)))


@router.post(
    "/api/personal/conversaciones/{thread_id}/mensajes",
    summary="Escribir al cliente",
    status_code=201,
    response_model=formas.MensajeTiendaCreado,
    responses={**_ERRORES, **_NO_EXISTE, 422: {"model": esquemas.Error, "description": (
        "Texto vacío, de más de 2000 caracteres o con HTML.")}},
)
def escribir(thread_id: str, cuerpo: formas.MensajeTienda, servicio: ServicioWeb, encargado: EncargadoActual):
    """Un mensaje de la tienda firmado con el nombre de quien escribe: el cliente lo ve en
    directo si tiene el chat abierto (si no, al volver) y queda en la transcripción, en la
    traza y en el registro (``mensajes_tienda``). No toca el agente: una aprobación pendiente
    sigue igual y el agente no lo lee."""
    return formas.mensaje_creado(servicio.atencion.escribir(thread_id, encargado, cuerpo.texto))


@router.get("/api/politica", summary="Tiendas cuya política administra",
            response_model=formas.GestionPolitica, responses=_ERRORES)
def tiendas_politica(servicio: ServicioWeb, encargado: EncargadoActual):
    """La suya (gerente) o las de su región (regional), para leer y proponer cambios en
    ``/api/politica/{tienda}``, con cada valor que se puede fijar (descripción y dominio) y el
    nombre de cada regla de la matriz. Un encargado no administra la política: 403."""
    if encargado.rol not in politica_tienda.ROLES_ADMINISTRAN:
        raise Prohibido("solo un gerente o un regional administra la política de la tienda")
    return formas.gestion_politica(servicio.atencion.tiendas(tuple(encargado.tiendas)))
