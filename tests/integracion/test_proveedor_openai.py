"""La ruta de un proveedor real: langchain-openai contra un servidor local compatible con OpenAI.

Prueba que los tool_call_id del proveedor, las ediciones y los rechazos hacen el viaje
completo, y que el historial que recibe el proveedor tras la decisión es válido (cada
tool_call tiene su respuesta), que es lo que un proveedor real exige.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from agente.modelos import crear_modelo
from agente.servicio.fabrica import crear_servicio
from tests.apoyo.fabricas import PEDIDO_GRANDE, ajustes_prueba, conversacion, uno
from tests.apoyo.servidor_openai import ServidorOpenAI


@pytest.fixture
def servidor():
    with ServidorOpenAI() as s:
        yield s


@pytest.fixture
def servicio(bd_url, servidor, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    modelo = crear_modelo("openai:gpt-prueba", base_url=servidor.base_url, sin_reintentos=True)
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, modelo=modelo, pausa_reintentos=0.01)
    yield s
    s.cerrar()


def _hasta_la_pausa(servicio, servidor):
    servidor.responder_llamadas(("consultar_pedido", {"pedido": PEDIDO_GRANDE}))
    [id_reembolso] = servidor.responder_llamadas(
        ("reembolsar", {"pedido": PEDIDO_GRANDE, "importe": 120, "motivo": "gotea"})
    )
    hilo, respuesta = conversacion(servicio, "C-0001", f"Devolved la cafetera del pedido {PEDIDO_GRANDE}")
    assert respuesta.estado == "esperando_aprobacion"
    assert uno(servicio_url(servicio), "SELECT count(*) FROM reembolsos") == 0
    return hilo, id_reembolso


def servicio_url(servicio) -> str:
    return servicio.pool.conninfo


def _ultima_peticion_valida(servidor):
    ultima = servidor.peticiones[-1]
    assert ultima.llamadas_sin_respuesta() == []
    assert ultima.respuestas_huerfanas() == []
    return ultima


def test_aprobar_con_proveedor_real_conserva_el_tool_call_id(servicio, servidor, bd_url):
    hilo, id_reembolso = _hasta_la_pausa(servicio, servidor)
    herramientas = servidor.peticiones[0].herramientas()
    assert set(herramientas) >= {"consultar_pedido", "reembolsar", "sustituir", "consultar_encargado"}
    assert "runtime" not in herramientas["reembolsar"].get("properties", {})
    servidor.responder_texto("Reembolso hecho.")
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert final.mensaje_cliente == "Reembolso hecho."
    assert uno(bd_url, "SELECT tool_call_id FROM reembolsos") == id_reembolso
    _ultima_peticion_valida(servidor)


def test_editar_con_proveedor_real_ejecuta_el_importe_del_encargado(servicio, servidor, bd_url):
    hilo, id_reembolso = _hasta_la_pausa(servicio, servidor)
    args = servicio.aprobacion(hilo)["peticion"]["action_requests"][0]["args"]
    servidor.responder_texto("Te devolvemos 90,00 EUR.")
    servicio.decidir(hilo, "enc-talavera",
                     [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {**args, "importe": "90"}}}])
    assert uno(bd_url, "SELECT importe FROM reembolsos") == Decimal("90.00")
    assert uno(bd_url, "SELECT tool_call_id FROM reembolsos") == id_reembolso
    ultima = _ultima_peticion_valida(servidor)
    resultado = next(m for m in ultima.mensajes if m.get("tool_call_id") == id_reembolso)
    assert resultado["content"].startswith("Aviso: un encargado modificó esta operación")


def test_rechazar_con_proveedor_real_no_ejecuta_y_el_historial_es_valido(servicio, servidor, bd_url):
    hilo, id_reembolso = _hasta_la_pausa(servicio, servidor)
    servidor.responder_texto("El encargado no lo ha aprobado: producto usado.")
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "reject", "message": "producto usado"}])
    assert "producto usado" in final.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    ultima = _ultima_peticion_valida(servidor)
    rechazo = next(m for m in ultima.mensajes if m.get("tool_call_id") == id_reembolso)
    assert "User rejected the tool call for `reembolsar` with reason: producto usado" in rechazo["content"]
