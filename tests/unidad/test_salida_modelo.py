"""La salida del modelo antes de que nadie la lea (``agente/middleware/salida_modelo.py``) y una
respuesta en blanco (``agente/servicio/conversaciones/desenlace.py``): lo que encontró el modelo
del caos (``tests/integracion/test_caos.py``)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from agente.middleware.salida_modelo import ids_unicos, sin_nulos
from agente.servicio.conversaciones.desenlace import SIN_RESPUESTA, mensaje_final


def _ll(nombre: str, ident: str, **args) -> dict:
    return {"name": nombre, "args": args, "id": ident, "type": "tool_call"}


def test_un_id_repetido_con_otra_llamada_recibe_uno_nuevo_y_la_misma_llamada_queda_una_vez():
    mensaje = AIMessage("", tool_calls=[
        _ll("reembolsar", "c1", pedido="P-1", importe="1.00"),
        _ll("reenviar", "c1", pedido="P-2", linea=1),
        _ll("reembolsar", "c1", pedido="P-1", importe="1.00"),
        _ll("consultar_pedido", "c2", pedido="P-2"),
    ])
    limpio = ids_unicos(mensaje, [])
    assert [(t["name"], t["id"]) for t in limpio.tool_calls] == [
        ("reembolsar", "c1"), ("reenviar", "c1~2"), ("consultar_pedido", "c2")]


def test_un_id_de_un_mensaje_anterior_conserva_el_suyo_si_es_la_misma_llamada_y_si_no_cambia():
    antes = [HumanMessage("hola"), AIMessage("", tool_calls=[_ll("reembolsar", "c1", pedido="P-1", importe="1.00")])]
    misma = ids_unicos(AIMessage("", tool_calls=[_ll("reembolsar", "c1", pedido="P-1", importe="1.00")]), antes)
    otra = ids_unicos(AIMessage("", tool_calls=[_ll("reembolsar", "c1", pedido="P-1", importe="90.00")]), antes)
    assert misma.tool_calls[0]["id"] == "c1"
    assert otra.tool_calls[0]["id"] == "c1~2"


def test_el_nulo_se_cambia_en_claves_y_valores_a_cualquier_profundidad():
    assert sin_nulos({"a\x00": ["x\x00", {"b": "\x00"}], "n": 3}) == {"a\ufffd": ["x\ufffd", {"b": "\ufffd"}], "n": 3}


def test_una_respuesta_en_blanco_no_es_una_respuesta():
    assert mensaje_final([HumanMessage("hola"), AIMessage("\n  ")]) == SIN_RESPUESTA
    assert mensaje_final([HumanMessage("hola"), AIMessage("Hecho.")]) == "Hecho."
