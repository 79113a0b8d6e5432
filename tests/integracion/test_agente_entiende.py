"""El modelo offline entiende negaciones, correcciones y alternativas (issue #42, parte 1).

Cada historia va de punta a punta por el agente real (modelo offline, PostgreSQL de la demo):
lo que el cliente dice que NO quiere no se hace, la cantidad que nombra limita las unidades,
un producto que no está en el pedido se pregunta, y una corrección («al final mejor que me
llegue a...») es la operación que pide. Pedidos de ``agente/demo.py``.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from nucleo.errores import NadaPendiente
from tests.apoyo.fabricas import consultar, conversacion, uno

VAJILLA = "P-20261012-0099"  # C-0003, entregado, 1 × vajilla de 99,00 EUR
SARTENES = "P-20261003-0045"  # C-0010, entregado, 2 × sartén de 24,90 EUR
SARTEN_Y_COJINES = "P-20260911-0022"  # C-0006, entregado, 1 × sartén 20 cm y 2 × cojín
SARTEN_SOLA = "P-20260920-0102"  # C-0002, entregado, 1 × sartén de 24,90 EUR
LAMPARA_ENVIADA = "P-20261010-0300"  # C-0012, enviado hace 6 días, 1 × lámpara de 40 EUR
FLEXO_PENDIENTE = "P-20260914-0025"  # C-0007, pendiente, se envía a Madrid


def _acciones(servicio, hilo) -> list[tuple[str, dict]]:
    try:
        pendiente = servicio.aprobacion(hilo)
    except NadaPendiente:
        return []
    return [(a["name"], a["args"]) for a in pendiente["peticion"]["action_requests"]]


def _cuantas(bd_url, tabla: str) -> int:
    return uno(bd_url, f"SELECT count(*) FROM {tabla}")  # noqa: S608 - tabla fija de la prueba


def test_compensar_con_30_euros_sin_devolverlo_es_un_vale_de_30_y_ningun_reembolso(servicio, pasarela, bd_url):
    texto = (f"Lo del rayón del pedido {VAJILLA} me parece poco: quiero que me compenséis con "
             "30 euros, sin devolverlo.")
    hilo, respuesta = conversacion(servicio, "C-0003", texto)
    acciones = _acciones(servicio, hilo)
    assert [nombre for nombre, _ in acciones] == ["compensar_con_vale"], respuesta.mensaje_cliente
    assert Decimal(acciones[0][1]["importe"]) == Decimal("30.00")
    assert respuesta.estado == "esperando_aprobacion"
    assert "reembols" not in respuesta.mensaje_cliente.lower()
    assert _cuantas(bd_url, "reembolsos") == 0 and pasarela.llamadas == []


@pytest.mark.parametrize("frase", [
    f"Quiero devolver una sartén del pedido {SARTENES}",
    f"Quiero devolver 1 sartén del pedido {SARTENES}",
    f"Del pedido {SARTENES} quiero devolver una de las sartenes porque se pega",
])
def test_devolver_una_sarten_de_dos_reembolsa_una_y_la_otra_sigue_reembolsable(servicio, bd_url, frase):
    _, respuesta = conversacion(servicio, "C-0010", frase)
    assert respuesta.estado == "respondida", respuesta.mensaje_cliente
    assert [r["importe"] for r in consultar(bd_url, "SELECT importe FROM reembolsos")] == [Decimal("24.90")]
    assert "24,90 EUR" in respuesta.mensaje_cliente and "49,80" not in respuesta.mensaje_cliente

    _, otra = conversacion(servicio, "C-0010", f"Quiero devolver la otra sartén del pedido {SARTENES}")
    assert otra.estado == "respondida", otra.mensaje_cliente
    assert sorted(r["importe"] for r in consultar(bd_url, "SELECT importe FROM reembolsos")) == [
        Decimal("24.90"), Decimal("24.90")]


def test_devolver_un_producto_que_no_esta_en_el_pedido_pregunta_cual_y_no_mueve_nada(servicio, pasarela, bd_url):
    hilo, respuesta = conversacion(servicio, "C-0006", f"Quiero devolver la jarra del pedido {SARTEN_Y_COJINES}")
    assert respuesta.estado == "respondida"
    assert _acciones(servicio, hilo) == []
    assert _cuantas(bd_url, "reembolsos") == 0 and pasarela.llamadas == []
    texto = respuesta.mensaje_cliente
    assert "?" in texto and "jarra" in texto
    assert "Sartén antiadherente 20 cm" in texto and "Cojín decorativo" in texto


@pytest.mark.parametrize("frase", [
    f"Iba a devolver el pedido {SARTEN_SOLA}, bueno no, mejor me lo quedo",
    f"Quería devolver la sartén del pedido {SARTEN_SOLA}... al final no",
    f"Quiero devolver la sartén del pedido {SARTEN_SOLA}. Mejor no, olvídalo",
])
def test_quien_se_retracta_en_el_mismo_mensaje_no_pone_en_marcha_nada(servicio, pasarela, bd_url, frase):
    hilo, respuesta = conversacion(servicio, "C-0002", frase)
    assert respuesta.estado == "respondida"
    assert _acciones(servicio, hilo) == []
    assert _cuantas(bd_url, "reembolsos") == 0 and pasarela.llamadas == []
    assert "no he tramitado nada" in respuesta.mensaje_cliente.lower()


@pytest.mark.parametrize("respuesta_cliente", ["sí, reenviádmelo", "Sí"])
def test_pedido_que_no_llega_se_ofrecen_opciones_y_el_si_lo_reenvia(servicio, bd_url, respuesta_cliente):
    pregunta = (f"Aún no he recibido el pedido {LAMPARA_ENVIADA} y hace casi una semana que lo "
                "enviasteis. ¿Qué podéis hacer?")
    hilo, primera = conversacion(servicio, "C-0012", pregunta)
    assert primera.estado == "respondida"
    assert _cuantas(bd_url, "reenvios") == 0
    opciones = primera.mensaje_cliente
    assert opciones.count("?") == 1 and "reenv" in opciones and "esperar" in opciones
    assert len(opciones) < 500

    ctx = servicio.contexto_de_cliente("C-0012")
    final = servicio.conversar(hilo, respuesta_cliente, ctx)
    assert final.estado == "respondida", final.mensaje_cliente
    reenvios = consultar(bd_url, "SELECT pedido_id, unidades, motivo FROM reenvios")
    assert [(r["pedido_id"], r["unidades"], r["motivo"]) for r in reenvios] == [(LAMPARA_ENVIADA, 1, "no_llego")]
    assert "He tramitado el reenvío" in final.mensaje_cliente


def test_al_final_mejor_que_me_llegue_a_barcelona_cambia_la_direccion_con_firma(servicio, bd_url):
    texto = (f"Perdona, al final mejor que el pedido {FLEXO_PENDIENTE} me llegue a Barcelona: "
             "Calle Hospital 20, 1º 2ª, 08001 Barcelona.")
    hilo, respuesta = conversacion(servicio, "C-0007", texto)
    # Otra provincia: la política de la demo pide la firma de un encargado.
    assert respuesta.estado == "esperando_aprobacion", respuesta.mensaje_cliente
    acciones = _acciones(servicio, hilo)
    assert [nombre for nombre, _ in acciones] == ["cambiar_direccion"]
    args = acciones[0][1]
    assert (args["pedido"], args["codigo_postal"], args["localidad"]) == (FLEXO_PENDIENTE, "08001", "Barcelona")
    assert args["calle"].startswith("Calle Hospital 20")
    assert _cuantas(bd_url, "cambios_direccion") == 0
