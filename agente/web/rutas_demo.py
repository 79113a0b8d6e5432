"""Login de demostración (solo con ``AGENTE_DEMO=1``; fuera de la demo, 404)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from agente.demo import CLIENTES, ENCARGADOS
from agente.nucleo.errores import HiloNoEncontrado
from agente.web import esquemas
from agente.web.auth import ROL_CLIENTE, ROL_ENCARGADO, emitir_token
from agente.web.dependencias import AjustesWeb, ServicioWeb

router = APIRouter(prefix="/api/demo", tags=["demo"])

# Una frase que el modelo offline entiende, para cada cliente con un caso de la demo.
EJEMPLOS = {
    "C-0001": "Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea",
    "C-0002": "Quiero devolver la sartén del pedido P-20260920-0102 porque se pega",
    "C-0003": "Quiero devolver las sábanas del pedido P-20260801-0007 porque no son de mi talla",
    "C-0004": "¿Dónde está mi pedido P-20260925-0150?",
    "C-0005": "Quiero devolver la batidora del pedido P-20260922-0077 porque no funciona",
}


def solo_en_demo(ajustes: AjustesWeb) -> None:
    if not ajustes.demo:
        # Mismo 404 que una ruta inexistente: fuera de la demo esto no existe.
        raise HiloNoEncontrado("no encontrado")


@router.get("/identidades", summary="Identidades de la demo", response_model=list[esquemas.IdentidadDemo], dependencies=[Depends(solo_en_demo)])
def identidades():
    """Clientes y encargados de la demo (el de baja incluido: su login se rechaza)."""
    clientes = [
        {"rol": ROL_CLIENTE, "id": cid, "nombre": nombre, "tienda": tienda, "ejemplo": EJEMPLOS.get(cid)}
        for cid, tienda, nombre, _email, _tel in CLIENTES
    ]
    encargados = [
        {"rol": ROL_ENCARGADO, "id": eid, "nombre": nombre, "tienda": tienda}
        for eid, tienda, nombre, _activo in ENCARGADOS
    ]
    return clientes + encargados


@router.post("/login", summary="Entrar en la demo", response_model=esquemas.Token, dependencies=[Depends(solo_en_demo)])
def login(cuerpo: esquemas.DemoLogin, servicio: ServicioWeb, ajustes: AjustesWeb):
    """Emite un token de demo para ese cliente o encargado (que debe existir y estar activo)."""
    if cuerpo.rol == ROL_CLIENTE:
        ctx = servicio.contexto_de_cliente(cuerpo.id)
        token = emitir_token(ajustes, rol=ROL_CLIENTE, sujeto=ctx.cliente_id, tienda=ctx.tienda)
        return {"token": token, "destino": "/"}
    encargado = servicio.encargado_activo(cuerpo.id)
    token = emitir_token(
        ajustes, rol=ROL_ENCARGADO, sujeto=encargado.encargado_id, tienda=encargado.tienda
    )
    return {"token": token, "destino": "/encargado"}
