"""Login de demostración (solo con ``AGENTE_DEMO=1``; fuera de la demo, 404)."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Depends

from agente.servicio.operador.demo import (
    CLIENTES,
    ENCARGADOS,
    ROLES,
    TIENDAS,
    TIENDAS_REGIONALES,
    leer_buzon,
)
from agente.web.entrada.auth import (
    CANAL_CLI,
    ROL_CLIENTE,
    ROL_ENCARGADO,
    emitir_sesion,
    emitir_token,
)
from agente.web.esquemas import comun as esquemas
from agente.web.infra.dependencias import AjustesWeb, ServicioWeb
from nucleo.errores import HiloNoEncontrado

router = APIRouter(prefix="/api/demo", tags=["demo"])

# Una frase que el modelo offline entiende, para cada cliente con un caso de la demo.
EJEMPLOS = {
    "C-0001": "Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea",
    "C-0002": "Quiero devolver la sartén del pedido P-20260920-0102 porque se pega",
    "C-0003": "Quiero devolver las sábanas del pedido P-20260801-0007 porque no son de mi talla",
    "C-0004": "¿Dónde está mi pedido P-20260925-0150?",
    "C-0005": "Quiero devolver la batidora del pedido P-20260922-0077 porque no funciona",
    "C-0006": "Quiero devolver el pedido P-20261006-0650 porque no funciona",
    "C-0007": "Cambia la dirección de envío del pedido P-20260914-0025 a Calle Mayor 5, 28013 Madrid",
    "C-0008": "No me ha llegado el pedido P-20261011-0310",
    "C-0009": "Quiero devolver el pedido P-20261005-0350 porque llegó roto",
    "C-0010": "Quiero devolver una sartén del pedido P-20261003-0045 porque se pega",
    "C-0011": "Cancela mi pedido P-20261009-0420, por favor",
    "C-0012": "No me ha llegado el pedido P-20261010-0300",
}
# Qué se prueba con cada cliente (docs/demo.md): lo que pasará, para elegir a quién entrar.
ESCENARIOS = {
    "C-0001": "Devolución de 120,00 EUR: supera el límite sin firma y espera a un encargado. "
              "Después, «cámbiala por una más barata» propone una alternativa con su diferencia.",
    "C-0002": "Devolución de 24,90 EUR que sale sola, sin firma. También puede cancelar el pedido "
              "P-20261008-0201, que aún no ha salido.",
    "C-0003": "Devolución de un pedido entregado hace 45 días: firma por antigüedad. También un vale "
              "por un arañazo en el pedido P-20261012-0099.",
    "C-0004": "Pregunta por un pedido que aún está en camino: nada que firmar.",
    "C-0005": "Ya lleva dos devoluciones en 30 días: la tercera espera a un encargado.",
    "C-0006": "Devolución de 650,00 EUR: dos firmas de personas distintas, una de gerente o regional.",
    "C-0007": "Cambio de la dirección de envío de un pedido pendiente, en la misma provincia: sale solo.",
    "C-0008": "Unos cuchillos enviados ayer: aún no llegan tarde, así que no se reenvía nada.",
    "C-0009": "Devolución de 350,00 EUR: por la matriz de autoridad la firma un gerente o la regional.",
    "C-0010": "Un pedido con dos sartenes iguales: devolver una deja libre la otra.",
    "C-0011": "Cancelación de un pedido pendiente de 420,00 EUR: por la matriz la firma un gerente.",
    "C-0012": "Un pedido enviado hace 6 días que no ha llegado: reenvío sin cargo.",
}
_NOMBRES_TIENDA = dict(TIENDAS)
_LIMITES = {"encargado": "firma hasta 300,00 EUR", "gerente": "firma hasta 1.000,00 EUR y cambia la política",
            "regional": "firma sin límite y ve las colas de todas sus tiendas"}


def _cargo(encargado_id: str, tienda: str, activo: bool) -> tuple[str, str]:
    """(cargo, qué puede hacer) de una persona de la tienda en la demo."""
    cargo = ROLES.get(encargado_id, "encargado")
    if not activo:
        return cargo, "De baja: su entrada se rechaza (así se ve lo que pasa con alguien de baja)."
    tiendas = [_NOMBRES_TIENDA[t] for e, t in TIENDAS_REGIONALES if e == encargado_id] or [_NOMBRES_TIENDA[tienda]]
    return cargo, f"{cargo.capitalize()} de {' y '.join(tiendas)}: {_LIMITES[cargo]}."


def solo_en_demo(ajustes: AjustesWeb) -> None:
    if not ajustes.demo:
        # Mismo 404 que una ruta inexistente: fuera de la demo esto no existe.
        raise HiloNoEncontrado("no encontrado")


@router.get("/identidades", summary="Identidades de la demo", response_model=list[esquemas.IdentidadDemo], dependencies=[Depends(solo_en_demo)])
def identidades():
    """Clientes y personas de la tienda de la demo (la de baja incluida: su login se rechaza),
    cada una con su cargo y lo que se prueba con ella (``escenario``)."""
    clientes = [
        {"rol": ROL_CLIENTE, "id": cid, "nombre": nombre, "tienda": tienda,
         "tienda_nombre": _NOMBRES_TIENDA[tienda], "cargo": "cliente",
         "escenario": ESCENARIOS.get(cid), "ejemplo": EJEMPLOS.get(cid)}
        for cid, tienda, nombre, _email, _tel in CLIENTES
    ]
    encargados = []
    for eid, tienda, nombre, activo in ENCARGADOS:
        cargo, escenario = _cargo(eid, tienda, activo)
        encargados.append({"rol": ROL_ENCARGADO, "id": eid, "nombre": nombre, "tienda": tienda,
                           "tienda_nombre": _NOMBRES_TIENDA[tienda], "cargo": cargo, "escenario": escenario})
    return clientes + encargados


@router.post("/login", summary="Entrar en la demo", response_model=esquemas.Token, dependencies=[Depends(solo_en_demo)])
def login(cuerpo: esquemas.DemoLogin, servicio: ServicioWeb, ajustes: AjustesWeb):
    """Emite un token de demo para ese cliente o encargado (que debe existir y estar activo)."""
    if cuerpo.rol == ROL_CLIENTE:
        ctx = servicio.contexto_de_cliente(cuerpo.id)
        token = emitir_token(ajustes, rol=ROL_CLIENTE, sujeto=ctx.cliente_id, tienda=ctx.tienda)
        return {"token": token, "destino": "/"}
    encargado = servicio.encargado_activo(cuerpo.id)
    if cuerpo.canal == CANAL_CLI:
        # ``agente entrar --demo``: una sesión como la de la web (corta, se renueva), de la CLI.
        return {"token": emitir_sesion(ajustes, encargado, "demo", canal=CANAL_CLI), "destino": "/encargado"}
    token = emitir_token(
        ajustes, rol=ROL_ENCARGADO, sujeto=encargado.encargado_id, tienda=encargado.tienda
    )
    return {"token": token, "destino": "/encargado"}


@router.get("/correos", summary="Correos del buzón de la demo", response_model=list[esquemas.CorreoDemo],
            dependencies=[Depends(solo_en_demo)])
def correos(ajustes: AjustesWeb):
    """Lo que ha recibido el SMTP local de ``agente demo`` (enlaces de entrada, correos a los
    clientes), el más reciente primero. Sin buzón (otro ``AGENTE_SMTP_URL``): ninguno."""
    if ajustes.demo_buzon is None:
        return []
    return [asdict(correo) for correo in leer_buzon(ajustes.demo_buzon)]
