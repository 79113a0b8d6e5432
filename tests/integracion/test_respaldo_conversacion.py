"""Una tarjeta nunca lleva lo que el cliente no pidió, sea cual sea el modelo (issue #42, parte 2a).

Un modelo de guion (no el offline) propone lo que le da la gana; la guarda de la conversación
(``agente/middleware/respaldo.py``) contesta al modelo lo que el cliente no pidió o excluyó,
antes de que se encole o se ejecute. Servicio completo sobre PostgreSQL (pedidos de la demo).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agente.middleware.respaldo import MARCA_SIN_RESPALDO
from agente.servicio.fabrica import crear_servicio
from tests.apoyo.fabricas import ajustes_prueba, consultar, conversacion, uno
from tests.apoyo.modelo_guion import guion, llamada

VAJILLA = "P-20261012-0099"  # C-0003, Madrid-Centro, entregado, 1 × vajilla de 99,00 EUR
ENCARGADO = "enc-madrid-centro"
RAYON = (f"Lo del rayón del pedido {VAJILLA} me parece poco: quiero que me compenséis con "
         "30 euros, sin devolverlo.")


def _vale() -> dict:
    return llamada("compensar_con_vale", pedido=VAJILLA, linea=1, importe="30.00", motivo="rayón")


def _reembolso() -> dict:
    return llamada("reembolsar", pedido=VAJILLA, importe="99.00", motivo="rayón")


@pytest.fixture
def con_guion(bd_url, pasarela):
    creados = []

    def crear(*mensajes):
        s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=pasarela, modelo=guion(*mensajes),
                           pausa_reintentos=0.01)
        creados.append(s)
        return s

    yield crear
    for s in creados:
        s.cerrar()


def _mensajes(servicio, hilo):
    return servicio.ejecutor.agente.get_state({"configurable": {"thread_id": hilo}}).values["messages"]


def test_sin_devolverlo_el_modelo_propone_vale_y_reembolso_y_solo_queda_el_vale(con_guion, bd_url, pasarela):
    vale, reembolso = _vale(), _reembolso()
    servicio = con_guion(AIMessage("", tool_calls=[vale, reembolso]),
                         "Te he dado un vale de 30 euros; no he tramitado ningún reembolso.")
    hilo, respuesta = conversacion(servicio, "C-0003", RAYON)

    assert respuesta.estado == "esperando_aprobacion"
    acciones = servicio.aprobacion(hilo)["peticion"]["action_requests"]
    assert [a["name"] for a in acciones] == ["compensar_con_vale"]
    final = servicio.decidir(hilo, ENCARGADO, [{"type": "approve"}])
    # Al reanudar, el modelo lee por qué no se hizo, en español, contestando a su llamada.
    rehusada = [m for m in _mensajes(servicio, hilo)
                if isinstance(m, ToolMessage) and m.tool_call_id == reembolso["id"]]
    assert len(rehusada) == 1 and rehusada[0].status == "error"
    assert rehusada[0].additional_kwargs[MARCA_SIN_RESPALDO] == "excluida"
    assert "No ejecutada" in rehusada[0].content and "sin devolverlo" in rehusada[0].content
    assert "vale de 30 euros" in final.mensaje_cliente
    assert [v["importe"] for v in consultar(bd_url, "SELECT importe FROM vales")] == [Decimal("30.00")]
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0 and pasarela.llamadas == []
    # La respuesta al cliente no lleva el texto interno para el modelo.
    assert "No ejecutada" not in final.mensaje_cliente


def test_lo_que_el_cliente_no_nombra_no_se_ejecuta_aunque_no_pida_firma(con_guion, bd_url, pasarela):
    reembolso = _reembolso()
    servicio = con_guion(AIMessage("", tool_calls=[reembolso]), "¿En qué más te puedo ayudar?")
    _, respuesta = conversacion(servicio, "C-0003", f"¿Cuándo llegó el pedido {VAJILLA}?")
    assert respuesta.estado == "respondida"
    assert respuesta.mensaje_cliente == "¿En qué más te puedo ayudar?"
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0 and pasarela.llamadas == []
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0


def test_una_peticion_legitima_de_dos_operaciones_llega_entera_a_la_tarjeta(con_guion):
    vale, reembolso = _vale(), _reembolso()
    servicio = con_guion(AIMessage("", tool_calls=[vale, reembolso]), "Hecho.")
    hilo, respuesta = conversacion(
        servicio, "C-0003", f"Del pedido {VAJILLA} quiero devolver la vajilla y además un vale de 30 euros.")
    assert respuesta.estado == "esperando_aprobacion"
    acciones = servicio.aprobacion(hilo)["peticion"]["action_requests"]
    assert sorted(a["name"] for a in acciones) == ["compensar_con_vale", "reembolsar"]


def test_un_si_a_la_oferta_del_agente_la_respalda(con_guion):
    vale = _vale()
    servicio = con_guion(
        f"Siento lo del rayón del pedido {VAJILLA}. ¿Quieres que te prepare un vale de 30 euros?",
        AIMessage("", tool_calls=[vale]), "Hecho.")
    hilo, respuesta = conversacion(servicio, "C-0003", f"El pedido {VAJILLA} llegó con un rayón.",
                                   "Sí, por favor.")
    assert respuesta.estado == "esperando_aprobacion"
    assert [a["name"] for a in servicio.aprobacion(hilo)["peticion"]["action_requests"]] == ["compensar_con_vale"]
