"""El modelo offline (reglas, no LLM): llamadas a herramientas y respuestas en español.

Historiales construidos a mano con resultados que siguen el contrato de herramientas,
y una pasada real por ``create_agent`` + revisión humana con herramientas falsas.
"""

from __future__ import annotations

import ast
import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolErrorMiddleware
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agente.modelo_offline import ModeloOffline, redaccion
from agente.modelo_offline.lectura import normalizar
from agente.modelo_offline.resultados import motivo_del_rechazo
from herramientas import REGISTRO
from nucleo.errores import ErrorDominio, PedidoNoEncontrado
from tests.apoyo.rutas import RAIZ

AVISO = (
    "Aviso: un encargado modificó esta operación antes de ejecutarla; el resultado refleja lo "
    "que se ejecutó, no tu propuesta."
)


def _linea(n, sku, nombre, importe, categoria="cafeteras"):
    return {
        "linea": n,
        "sku": sku,
        "nombre": nombre,
        "categoria": categoria,
        "unidades": 1,
        "precio_unitario": importe,
        "importe": importe,
    }


def _pedido(pedido, estado, importe, lineas, *, entregado_en="2026-09-26", dias=4, reembolsado="0.00"):
    return {
        "pedido": pedido,
        "estado": estado,
        "fecha": "2026-09-21",
        "entregado_en": entregado_en,
        "dias_desde_entrega": dias,
        "importe": importe,
        "reembolsado": reembolsado,
        "reembolsable": str(Decimal(importe) - Decimal(reembolsado)),
        "lineas": lineas,
    }


PEDIDOS = {
    "P-20260917-0041": _pedido(
        "P-20260917-0041", "entregado", "120.00",
        [_linea(1, "CAF-001", "Cafetera de goteo Aroma 10 tazas", "120.00")],
    ),
    "P-20260920-0102": _pedido(
        "P-20260920-0102", "entregado", "24.90",
        [_linea(1, "MEN-001", "Sartén antiadherente 24 cm", "24.90", "menaje")], dias=3,
    ),
    "P-20260925-0150": _pedido(
        "P-20260925-0150", "enviado", "40.00",
        [_linea(1, "ILU-001", "Lámpara de mesa Nube", "40.00", "iluminacion")],
        entregado_en=None, dias=None,
    ),
    "P-20260924-0035": _pedido(
        "P-20260924-0035", "entregado", "44.90",
        [
            _linea(1, "ELE-002", "Tostadora 2 ranuras", "25.00", "electrodomesticos"),
            _linea(2, "MEN-002", "Sartén antiadherente 20 cm", "19.90", "menaje"),
        ],
        dias=1,
    ),
    "P-20260919-0055": _pedido(
        "P-20260919-0055", "entregado", "14.90",
        [_linea(1, "REP-001", "Jarra de repuesto para cafetera Aroma", "14.90", "repuestos")], dias=2,
    ),
}

ALTERNATIVAS = {
    "CAF-001": {
        "sku": "CAF-001",
        "nombre": "Cafetera de goteo Aroma 10 tazas",
        "categoria": "cafeteras",
        "pvp": "120.00",
        "alternativas": [
            {"sku": "CAF-002", "nombre": "Cafetera italiana Moka 6 tazas", "pvp": "29.90",
             "diferencia": "-90.10", "unidades": 8},
            {"sku": "CAF-005", "nombre": "Cafetera de cápsulas Mini", "pvp": "69.00",
             "diferencia": "-51.00", "unidades": 8},
            {"sku": "CAF-003", "nombre": "Cafetera espresso Crema 15 bar", "pvp": "120.00",
             "diferencia": "0.00", "unidades": 8},
            {"sku": "CAF-004", "nombre": "Cafetera superautomática Barista", "pvp": "249.00",
             "diferencia": "129.00", "unidades": 2},
        ],
    },
    "REP-001": {
        "sku": "REP-001", "nombre": "Jarra de repuesto para cafetera Aroma",
        "categoria": "repuestos", "pvp": "14.90", "alternativas": [],
    },
}


def _resultado_lectura(llamada):
    """Lo que devolverían las herramientas de lectura según el contrato."""
    if llamada["name"] == "consultar_pedido":
        return json.dumps(PEDIDOS[llamada["args"]["pedido"]], ensure_ascii=False)
    if llamada["name"] == "stock_alternativas":
        return json.dumps(ALTERNATIVAS[llamada["args"]["sku"]], ensure_ascii=False)
    raise AssertionError(f"no es una lectura: {llamada['name']}")


def _hasta_operacion(modelo, texto, antes=None):
    """Conversa respondiendo las lecturas hasta que el modelo propone operaciones."""
    historial = [*(antes or [SystemMessage("Eres el asistente de la tienda.")]), HumanMessage(texto)]
    for _ in range(6):
        respuesta = modelo.invoke(historial)
        historial.append(respuesta)
        lecturas = [c for c in respuesta.tool_calls if c["name"] in ("consultar_pedido", "stock_alternativas")]
        if not respuesta.tool_calls or len(lecturas) < len(respuesta.tool_calls):
            return historial, respuesta
        for llamada in lecturas:
            historial.append(ToolMessage(_resultado_lectura(llamada), tool_call_id=llamada["id"]))
    raise AssertionError("el modelo no llega a proponer nada")


@pytest.fixture
def modelo():
    return ModeloOffline()


# ------------------------------------------------------------------ llamadas


def test_estado_consulta_el_pedido_y_resume_en_espanol(modelo):
    historial = [HumanMessage("¿dónde está mi pedido P-20260925-0150?")]
    primera = modelo.invoke(historial)
    assert [(c["name"], c["args"]) for c in primera.tool_calls] == [
        ("consultar_pedido", {"pedido": "P-20260925-0150"})
    ]
    llamada = primera.tool_calls[0]
    historial += [primera, ToolMessage(_resultado_lectura(llamada), tool_call_id=llamada["id"])]
    final = modelo.invoke(historial)
    assert not final.tool_calls
    assert "P-20260925-0150" in final.content
    assert "enviado" in final.content
    assert "21/09/2026" in final.content
    assert "Lámpara de mesa Nube" in final.content
    assert "40,00 EUR" in final.content
    assert "no consta como entregado" in final.content


def test_reembolso_pequeno_propone_el_importe_del_pedido(modelo):
    _, propuesta = _hasta_operacion(modelo, "Quiero devolver la sartén del pedido P-20260920-0102")
    [llamada] = propuesta.tool_calls
    assert llamada["name"] == "reembolsar"
    assert llamada["args"]["pedido"] == "P-20260920-0102"
    assert Decimal(llamada["args"]["importe"]) == Decimal("24.90")
    assert llamada["args"]["motivo"] == "devolución solicitada por el cliente"
    assert "lineas" not in llamada["args"]


def test_reembolso_de_la_cafetera_lleva_el_motivo_del_cliente(modelo):
    historial, propuesta = _hasta_operacion(
        modelo, "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea"
    )
    # Primero consulta el pedido (el prompt manda mirar antes de proponer).
    assert historial[2].tool_calls[0]["name"] == "consultar_pedido"
    [llamada] = propuesta.tool_calls
    assert llamada["name"] == "reembolsar"
    assert llamada["args"] == {"pedido": "P-20260917-0041", "importe": "120.00", "motivo": "gotea"}


def test_reembolso_de_una_linea_indica_la_linea_y_su_importe(modelo):
    _, propuesta = _hasta_operacion(modelo, "devolver solo la tostadora del pedido P-20260924-0035")
    [llamada] = propuesta.tool_calls
    assert llamada["args"]["lineas"] == [1]
    assert Decimal(llamada["args"]["importe"]) == Decimal("25.00")


def test_reembolso_de_una_linea_por_sku(modelo):
    _, propuesta = _hasta_operacion(modelo, "quiero un reembolso del MEN-002 del pedido P-20260924-0035")
    [llamada] = propuesta.tool_calls
    assert llamada["args"]["lineas"] == [2]
    assert Decimal(llamada["args"]["importe"]) == Decimal("19.90")


@pytest.mark.parametrize(
    ("deseo", "sku_nuevo"),
    [
        ("por una más barata", "CAF-002"),
        ("por una más económica", "CAF-002"),
        ("por una del mismo precio", "CAF-003"),
        ("por una más cara", "CAF-004"),
        ("por una mejor", "CAF-004"),
        ("por la CAF-005", "CAF-005"),
        ("por la espresso", "CAF-003"),
    ],
)
def test_cambio_elige_la_alternativa_pedida(modelo, deseo, sku_nuevo):
    historial, propuesta = _hasta_operacion(
        modelo, f"quiero cambiar la cafetera del pedido P-20260917-0041 {deseo}"
    )
    if "CAF-" not in deseo:
        # Sin SKU la petición es ambigua: propone una, pide el «sí» y solo entonces cambia.
        assert not propuesta.tool_calls
        # El cliente lee los nombres; los SKU de la propuesta van aparte, en el mensaje.
        assert "¿Confirmas el cambio de Cafetera de goteo Aroma 10 tazas del pedido P-20260917-0041 por " in propuesta.content
        assert "CAF-" not in propuesta.content
        assert propuesta.additional_kwargs["propuesta_cambio"]["sku_nuevo"] == sku_nuevo
        historial, propuesta = _hasta_operacion(modelo, "Sí, confírmalo", historial)
    turno = historial[max(i for i, m in enumerate(historial) if isinstance(m, HumanMessage)):]
    nombres = [c["name"] for m in turno if isinstance(m, AIMessage) for c in m.tool_calls]
    assert nombres == ["consultar_pedido", "stock_alternativas", "sustituir"]
    assert propuesta.tool_calls[0]["args"] == {
        "pedido": "P-20260917-0041",
        "sku_original": "CAF-001",
        "sku_nuevo": sku_nuevo,
    }


def test_cambio_sin_alternativa_en_stock_lo_dice_y_no_sustituye(modelo):
    _, final = _hasta_operacion(modelo, "cambiar la jarra del pedido P-20260919-0055 por otra igual")
    assert not final.tool_calls
    assert "no hay ninguna alternativa en stock" in final.content


def test_cambio_sin_preferencia_lista_las_opciones(modelo):
    _, final = _hasta_operacion(modelo, "quiero cambiar la cafetera del pedido P-20260917-0041")
    assert not final.tool_calls
    # Por su nombre, nunca por su SKU.
    for nombre in ("Cafetera italiana Moka 6 tazas", "Cafetera espresso Crema 15 bar", "Cafetera superautomática Barista"):
        assert nombre in final.content
    assert "CAF-" not in final.content


def test_las_opciones_y_la_propuesta_de_cambio_dicen_que_el_precio_es_el_de_su_tienda(modelo):
    # Otra tienda puede vender lo mismo a otro precio (sql/030): el cliente sabe cuál es el suyo.
    _, opciones = _hasta_operacion(modelo, "quiero cambiar la cafetera del pedido P-20260917-0041")
    assert "tenemos en stock en tu tienda, con sus precios allí: Cafetera italiana Moka 6 tazas (29,90 EUR" in (
        opciones.content)
    _, propuesta = _hasta_operacion(modelo, "quiero cambiar la cafetera del pedido P-20260917-0041 por una más barata")
    assert "te propongo Cafetera italiana Moka 6 tazas (29,90 EUR en tu tienda, 90,10 EUR menos)" in (
        propuesta.content)


def test_cambio_eligiendo_una_opcion_por_su_nombre_pide_el_si_y_despues_cambia(modelo):
    historial, opciones = _hasta_operacion(modelo, "quiero cambiar la cafetera del pedido P-20260917-0041")
    ejemplo = opciones.content.split("Por ejemplo: «", 1)[1].split("»", 1)[0]
    historial, propuesta = _hasta_operacion(modelo, ejemplo, historial)
    assert not propuesta.tool_calls and "¿Confirmas el cambio" in propuesta.content
    _, cambio = _hasta_operacion(modelo, "sí", historial)
    assert cambio.tool_calls[0]["name"] == "sustituir"
    assert cambio.tool_calls[0]["args"]["sku_nuevo"] == "CAF-002"


@pytest.mark.parametrize(
    "texto",
    [
        "¿tenéis la jarra de repuesto de la cafetera?",
        "Pregunta al encargado si abrís el domingo",
        "¿Podéis preguntarle al encargado si me guarda una sartén?",
    ],
)
def test_pregunta_para_el_encargado(modelo, texto):
    respuesta = modelo.invoke([HumanMessage(texto)])
    assert [(c["name"], c["args"]) for c in respuesta.tool_calls] == [
        ("consultar_encargado", {"pregunta": texto})
    ]


def test_reembolso_y_cambio_en_un_mensaje_van_en_una_sola_propuesta(modelo):
    historial, propuesta = _hasta_operacion(
        modelo,
        "Quiero devolver la sartén del pedido P-20260920-0102 y cambiar la cafetera del "
        "pedido P-20260917-0041 por la CAF-004",
    )
    # Las dos lecturas de pedido salen juntas; después las alternativas.
    assert sorted(c["args"]["pedido"] for c in historial[2].tool_calls) == [
        "P-20260917-0041",
        "P-20260920-0102",
    ]
    assert {c["name"]: c["args"] for c in propuesta.tool_calls} == {
        "reembolsar": {
            "pedido": "P-20260920-0102",
            "importe": "24.90",
            "motivo": "devolución solicitada por el cliente",
        },
        "sustituir": {"pedido": "P-20260917-0041", "sku_original": "CAF-001", "sku_nuevo": "CAF-004"},
    }


def test_el_numero_de_pedido_se_toma_de_un_turno_anterior(modelo):
    historial = [
        HumanMessage("¿dónde está mi pedido P-20260917-0041?"),
        AIMessage("Tu pedido P-20260917-0041 está en estado «entregado»."),
        HumanMessage("Pues quiero devolverlo porque no funciona"),
    ]
    respuesta = modelo.invoke(historial)
    assert respuesta.tool_calls[0]["args"] == {"pedido": "P-20260917-0041"}


def test_sin_numero_de_pedido_lo_pide_con_educacion(modelo):
    respuesta = modelo.invoke([HumanMessage("Hola, quiero devolver una cosa")])
    assert not respuesta.tool_calls
    assert "número de pedido" in respuesta.content


def test_saludo_explica_lo_que_sabe_hacer(modelo):
    respuesta = modelo.invoke([HumanMessage("hola")])
    assert not respuesta.tool_calls
    assert "devolución" in respuesta.content and "encargado" in respuesta.content


def test_sin_la_herramienta_enlazada_no_la_llama(modelo):
    @tool
    def consultar_pedido(pedido: str) -> str:
        """Consulta un pedido."""
        return "{}"

    respuesta = modelo.bind_tools([consultar_pedido]).invoke(
        [HumanMessage("¿tenéis la jarra de repuesto?")]
    )
    assert not respuesta.tool_calls


# ------------------------------------------------------------------ respuestas finales


def _con_resultado(modelo, texto, contenido, *, status="success", lc_data=None):
    historial, propuesta = _hasta_operacion(modelo, texto)
    [llamada] = propuesta.tool_calls
    extra = {"lc_source": "hitl_interrupt_decision", "lc_data": lc_data} if lc_data else {}
    historial.append(
        ToolMessage(
            contenido, tool_call_id=llamada["id"], name=llamada["name"], status=status,
            additional_kwargs=extra,
        )
    )
    return modelo.invoke(historial)


def test_respuesta_tras_reembolso_da_el_numero_devuelto(modelo):
    resultado = {"reembolso": "RE-000123", "pedido": "P-20260917-0041", "importe": "120.00",
                 "estado": "emitido", "repetido": False}
    final = _con_resultado(
        modelo, "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea",
        json.dumps(resultado),
    )
    assert not final.tool_calls
    assert "He tramitado el reembolso RE-000123 de 120,00 EUR del pedido P-20260917-0041" in final.content


def test_respuesta_tras_edicion_explica_el_ajuste_y_el_importe_final(modelo):
    resultado = {"reembolso": "RE-000124", "pedido": "P-20260917-0041", "importe": "90.00",
                 "estado": "emitido", "repetido": False}
    contenido = (
        f"{AVISO} Executed instead: reembolsar with arguments "
        '{"pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"}.'
        f"\n\nTool response:\n{json.dumps(resultado)}"
    )
    final = _con_resultado(
        modelo, "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea", contenido
    )
    assert "encargado" in final.content and "ajustado" in final.content
    assert "RE-000124 de 90,00 EUR" in final.content
    # Lo propuesto antes de la edición es interno: el cliente no lo lee (issue 15).
    assert "120,00" not in final.content and "propuesta" not in final.content


def test_respuesta_tras_rechazo_da_el_motivo_tal_cual_y_no_reintenta(modelo):
    motivo = "El producto tiene marcas de uso; tráelo a tienda para revisarlo"
    final = _con_resultado(
        modelo, "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea",
        f"User rejected the tool call for `reembolsar` with reason: {motivo}", status="error",
        lc_data={"decision": "reject"},
    )
    assert not final.tool_calls
    assert "no ha aprobado" in final.content
    assert motivo in final.content
    assert "RE-" not in final.content


def test_respuesta_del_encargado(modelo):
    historial = [HumanMessage("¿tenéis la jarra de repuesto de la cafetera?")]
    propuesta = modelo.invoke(historial)
    historial += [
        propuesta,
        ToolMessage(
            "Sí, llegan el jueves; te la reservo.", tool_call_id=propuesta.tool_calls[0]["id"],
            additional_kwargs={"lc_source": "hitl_interrupt_decision", "lc_data": {"decision": "respond"}},
        ),
    ]
    final = modelo.invoke(historial)
    assert final.content == "El encargado responde: Sí, llegan el jueves; te la reservo."


def test_respuesta_tras_error_se_disculpa_y_transmite_el_mensaje(modelo):
    final = _con_resultado(
        modelo, "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea",
        "Error: la pasarela de pagos no responde", status="error",
    )
    assert "Lo siento" in final.content
    assert "la pasarela de pagos no responde" in final.content
    assert "RE-" not in final.content


def test_pedido_no_encontrado_se_explica(modelo):
    historial = [HumanMessage("¿dónde está mi pedido P-20990101-0001?")]
    primera = modelo.invoke(historial)
    historial += [
        primera,
        ToolMessage("Error: pedido no encontrado: P-20990101-0001",
                    tool_call_id=primera.tool_calls[0]["id"], status="error"),
    ]
    final = modelo.invoke(historial)
    assert not final.tool_calls
    assert "pedido no encontrado: P-20990101-0001" in final.content
    assert "revisar el número de pedido" in final.content


@pytest.mark.parametrize(
    ("diferencia", "frase"),
    [("-90.10", "a tu favor: 90,10 EUR"), ("129.00", "a tu cargo: 129,00 EUR"),
     ("0.00", "No hay diferencia de precio")],
)
def test_respuesta_tras_sustitucion_da_numero_y_diferencia(modelo, diferencia, frase):
    resultado = {"sustitucion": "SU-000007", "pedido": "P-20260917-0041", "sku_original": "CAF-001",
                 "sku_nuevo": "CAF-002", "nombre_nuevo": "Cafetera italiana Moka 6 tazas",
                 "diferencia": diferencia, "repetido": False}
    final = _con_resultado(
        modelo, "quiero cambiar la cafetera del pedido P-20260917-0041 por la CAF-002",
        json.dumps(resultado, ensure_ascii=False),
    )
    assert "He tramitado el cambio SU-000007 del pedido P-20260917-0041" in final.content
    assert frase in final.content


def test_respuesta_a_dos_operaciones_resume_las_dos(modelo):
    historial, propuesta = _hasta_operacion(
        modelo,
        "Quiero devolver la sartén del pedido P-20260920-0102 y cambiar la cafetera del "
        "pedido P-20260917-0041 por la CAF-004",
    )
    for llamada in propuesta.tool_calls:
        if llamada["name"] == "reembolsar":
            contenido = json.dumps({"reembolso": "RE-000009", "pedido": "P-20260920-0102",
                                    "importe": "24.90", "estado": "emitido", "repetido": False})
            historial.append(ToolMessage(contenido, tool_call_id=llamada["id"]))
        else:
            historial.append(ToolMessage(
                "User rejected the tool call for `sustituir` with reason: Sin stock reservado",
                tool_call_id=llamada["id"], status="error",
            ))
    final = modelo.invoke(historial)
    assert not final.tool_calls
    assert "RE-000009 de 24,90 EUR" in final.content
    assert "Sin stock reservado" in final.content


# ------------------------------------------------------------------ streaming e ids


def test_streaming_da_varios_trozos_que_suman_la_respuesta_de_invoke(modelo):
    historial = [HumanMessage("hola")]
    trozos = list(modelo.stream(historial))
    textos = [t.content for t in trozos if t.content]
    assert len(textos) > 5
    assert "".join(textos) == modelo.invoke(historial).content


def test_streaming_de_llamadas_reconstruye_las_tool_calls(modelo):
    texto = (
        "Quiero devolver la sartén del pedido P-20260920-0102 y cambiar la cafetera del "
        "pedido P-20260917-0041 por la CAF-004"
    )
    historial, _ = _hasta_operacion(modelo, texto)
    historial = historial[:-1]  # sin la propuesta: que la haga el streaming
    trozos = list(modelo.stream(historial))
    assert any(t.tool_call_chunks for t in trozos)
    completo = trozos[0]
    for trozo in trozos[1:]:
        completo = completo + trozo
    esperado = modelo.invoke(historial)
    assert [(c["name"], c["args"]) for c in completo.tool_calls] == [
        (c["name"], c["args"]) for c in esperado.tool_calls
    ]


def test_ids_de_llamada_unicos_y_con_prefijo(modelo):
    historial, propuesta = _hasta_operacion(
        modelo,
        "Quiero devolver la sartén del pedido P-20260920-0102 y cambiar la cafetera del "
        "pedido P-20260917-0041 por la CAF-004",
    )
    ids = [c["id"] for m in historial if isinstance(m, AIMessage) for c in m.tool_calls]
    assert len(ids) == len(set(ids)) >= 5
    assert all(i.startswith("call_") and len(i) == len("call_") + 32 for i in ids)


def test_determinista_salvo_los_ids(modelo):
    historial, _ = _hasta_operacion(modelo, "devolver solo la tostadora del pedido P-20260924-0035")
    historial = historial[:-1]
    a, b = modelo.invoke(historial), modelo.invoke(historial)
    assert [(c["name"], c["args"]) for c in a.tool_calls] == [(c["name"], c["args"]) for c in b.tool_calls]
    assert a.tool_calls[0]["id"] != b.tool_calls[0]["id"]


def test_llm_type():
    assert ModeloOffline()._llm_type == "offline-reglas"


def test_los_importes_de_la_respuesta_van_en_formato_espanol(modelo):
    # Miles con punto, decimales con coma y signo: el formato de nucleo.dinero.
    resultado = {"sustitucion": "SU-000008", "pedido": "P-20260917-0041", "sku_original": "CAF-001",
                 "sku_nuevo": "CAF-004", "nombre_nuevo": "Cafetera superautomática Barista",
                 "diferencia": "1129.00", "repetido": False}
    final = _con_resultado(
        modelo, "quiero cambiar la cafetera del pedido P-20260917-0041 por la CAF-004",
        json.dumps(resultado, ensure_ascii=False),
    )
    assert "Diferencia de precio a tu cargo: 1.129,00 EUR." in final.content


# ------------------------------------------------------------------ señales estructuradas

DEVOLVER_CAFETERA = "quiero devolver la cafetera del pedido P-20260917-0041 porque gotea"
RECHAZO = {"decision": "reject"}


def test_rechazo_se_reconoce_por_la_decision_aunque_langchain_cambie_su_texto(modelo):
    final = _con_resultado(
        modelo, DEVOLVER_CAFETERA, "The reviewer declined this call.", status="error", lc_data=RECHAZO
    )
    assert not final.tool_calls
    assert "no ha aprobado el reembolso" in final.content
    assert "Motivo: sin indicar motivo." in final.content
    assert "RE-" not in final.content and "declined" not in final.content


def test_error_se_reconoce_por_el_status_aunque_no_empiece_por_error(modelo):
    final = _con_resultado(modelo, DEVOLVER_CAFETERA, "la pasarela de pagos no responde", status="error")
    assert final.content == (
        "Lo siento, no he podido tramitar el reembolso del pedido P-20260917-0041: "
        f"la pasarela de pagos no responde. {redaccion.SIGUIENTE_PASO}"
    )


def test_un_resultado_correcto_que_parece_un_rechazo_no_lo_es(modelo):
    # Lo que decide es el status, no el texto: la respuesta de un encargado se transmite.
    historial = [HumanMessage("¿tenéis la jarra de repuesto de la cafetera?")]
    propuesta = modelo.invoke(historial)
    texto = "User rejected the tool call for `consultar_encargado` with reason: broma del encargado"
    historial += [propuesta, ToolMessage(texto, tool_call_id=propuesta.tool_calls[0]["id"])]
    assert modelo.invoke(historial).content == f"El encargado responde: {texto}"


def test_un_json_con_otro_importe_que_el_propuesto_es_una_edicion_aunque_no_haya_aviso(modelo):
    resultado = {"reembolso": "RE-000126", "pedido": "P-20260917-0041", "importe": "90.00",
                 "estado": "emitido", "repetido": False}
    final = _con_resultado(modelo, DEVOLVER_CAFETERA, json.dumps(resultado))
    assert final.content == (
        "Un encargado ha revisado y ajustado la operación antes de tramitarla. He tramitado el "
        "reembolso RE-000126 de 90,00 EUR del pedido P-20260917-0041."
    )


def test_el_artefacto_de_la_herramienta_manda_sobre_su_texto(modelo):
    historial, propuesta = _hasta_operacion(modelo, DEVOLVER_CAFETERA)
    [llamada] = propuesta.tool_calls
    datos = {"reembolso": "RE-000127", "pedido": "P-20260917-0041", "importe": "120.00",
             "estado": "emitido", "repetido": False}
    historial.append(ToolMessage("Reembolso emitido.", artifact=datos, tool_call_id=llamada["id"]))
    final = modelo.invoke(historial)
    assert final.content == "He tramitado el reembolso RE-000127 de 120,00 EUR del pedido P-20260917-0041."


@pytest.mark.parametrize(
    ("texto", "motivo"),
    [
        ("User rejected the tool call for `reembolsar` with reason: Fuera de plazo.", "Fuera de plazo"),
        ("User rejected the tool call for `reembolsar` with id call_1. The tool was not executed. "
         "Do not retry this tool call unless the user explicitly requests it.", "sin indicar motivo"),
        ("Fuera de plazo", None),
    ],
)
def test_motivo_del_rechazo_lee_el_texto_fijo_de_langchain(texto, motivo):
    assert motivo_del_rechazo(texto) == motivo


@given(st.text())
def test_normalizar_conserva_la_longitud_y_quita_mayusculas(texto):
    normal = normalizar(texto)
    assert len(normal) == len(texto)
    assert normal == normal.lower()


def test_el_modelo_offline_no_escribe_nombres_de_herramientas_a_mano():
    # Los nombres salen de herramientas.registro: un literal aquí es una lista paralela.
    carpeta = RAIZ / "agente" / "modelo_offline"
    literales = [
        (ruta.name, nodo.lineno, nodo.value)
        for ruta in sorted(carpeta.glob("*.py"))
        for nodo in ast.walk(ast.parse(ruta.read_text(encoding="utf-8")))
        if isinstance(nodo, ast.Constant) and nodo.value in REGISTRO.nombres
    ]
    assert literales == []


# ------------------------------------------------------------------ con create_agent


def _herramientas_falsas(registro):
    """Herramientas con los nombres y la forma de resultado del contrato (sin BD)."""

    @tool
    def consultar_pedido(pedido: str) -> str:
        """Consulta un pedido del cliente."""
        if pedido not in PEDIDOS:
            raise PedidoNoEncontrado(pedido)
        return json.dumps(PEDIDOS[pedido], ensure_ascii=False)

    @tool
    def stock_alternativas(sku: str) -> str:
        """Alternativas en stock de la misma categoría."""
        return json.dumps(ALTERNATIVAS[sku], ensure_ascii=False)

    @tool
    def reembolsar(pedido: str, importe: Decimal, motivo: str, lineas: list[int] | None = None) -> str:
        """Emite un reembolso."""
        registro.append(("reembolsar", pedido, importe))
        numero = f"RE-{len(registro):06d}"
        return json.dumps({"reembolso": numero, "pedido": pedido, "importe": f"{importe:.2f}",
                           "estado": "emitido", "repetido": False})

    @tool
    def sustituir(pedido: str, sku_original: str, sku_nuevo: str) -> str:
        """Sustituye un producto."""
        registro.append(("sustituir", pedido, sku_nuevo))
        return json.dumps({"sustitucion": f"SU-{len(registro):06d}", "pedido": pedido,
                           "sku_original": sku_original, "sku_nuevo": sku_nuevo,
                           "nombre_nuevo": "Cafetera superautomática Barista",
                           "diferencia": "129.00", "repetido": False})

    @tool
    def consultar_encargado(pregunta: str) -> str:
        """Traslada una pregunta al encargado."""
        return "Pregunta enviada al encargado."

    @tool
    def consultar_politica() -> str:
        """Normas de la tienda."""
        return "Devoluciones en 30 días."

    return [consultar_pedido, stock_alternativas, reembolsar, sustituir, consultar_encargado,
            consultar_politica]


def _agente(registro, *, aviso=AVISO):
    decisiones = ["approve", "edit", "reject"]
    aviso_edicion = {} if aviso is None else {"edit_notice": aviso}
    return create_agent(
        ModeloOffline(),
        tools=_herramientas_falsas(registro),
        system_prompt="Eres el asistente de la tienda.",
        middleware=[
            HumanInTheLoopMiddleware(
                {
                    "reembolsar": {"allowed_decisions": decisiones},
                    "sustituir": {"allowed_decisions": decisiones},
                    "consultar_encargado": {"allowed_decisions": ["respond", "reject"]},
                },
                **aviso_edicion,
            ),
            ToolErrorMiddleware(
                on_error=lambda exc, request: f"Error: {exc.mensaje}"
                if isinstance(exc, ErrorDominio) else None
            ),
        ],
        checkpointer=InMemorySaver(),
    )


def _historial_valido(mensajes):
    respondidas = {m.tool_call_id for m in mensajes if isinstance(m, ToolMessage)}
    return all(c["id"] in respondidas for m in mensajes if isinstance(m, AIMessage) for c in m.tool_calls)


def test_agente_real_reembolso_editado_por_el_encargado():
    registro = []
    agente = _agente(registro)
    config = {"configurable": {"thread_id": "editado"}}
    salida = agente.invoke(
        {"messages": [HumanMessage("quiero devolver la cafetera del pedido P-20260917-0041 porque gotea")]},
        config, version="v2",
    )
    [pausa] = salida.interrupts
    [peticion] = pausa.value["action_requests"]
    assert peticion["name"] == "reembolsar" and peticion["args"]["importe"] == "120.00"
    editada = {**peticion["args"], "importe": "90.00"}
    salida = agente.invoke(
        Command(resume={"decisions": [
            {"type": "edit", "edited_action": {"name": "reembolsar", "args": editada}}
        ]}),
        config, version="v2",
    )
    mensajes = salida.value["messages"]
    assert registro == [("reembolsar", "P-20260917-0041", Decimal("90.00"))]
    assert "RE-000001 de 90,00 EUR" in mensajes[-1].content
    assert "ajustado" in mensajes[-1].content
    assert _historial_valido(mensajes)


def test_agente_real_rechazo_no_reintenta():
    registro = []
    agente = _agente(registro)
    config = {"configurable": {"thread_id": "rechazo"}}
    agente.invoke(
        {"messages": [HumanMessage("quiero devolver la cafetera del pedido P-20260917-0041 porque gotea")]},
        config, version="v2",
    )
    salida = agente.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "Fuera de plazo"}]}),
        config, version="v2",
    )
    assert not salida.interrupts
    assert registro == []
    final = salida.value["messages"][-1]
    assert "no ha aprobado" in final.content and "Fuera de plazo" in final.content
    assert _historial_valido(salida.value["messages"])


def test_agente_real_dos_operaciones_en_una_sola_pausa():
    registro = []
    agente = _agente(registro)
    config = {"configurable": {"thread_id": "dos"}}
    salida = agente.invoke(
        {"messages": [HumanMessage(
            "Quiero devolver la sartén del pedido P-20260920-0102 y cambiar la cafetera del "
            "pedido P-20260917-0041 por la CAF-004"
        )]},
        config, version="v2",
    )
    [pausa] = salida.interrupts
    assert sorted(p["name"] for p in pausa.value["action_requests"]) == ["reembolsar", "sustituir"]
    salida = agente.invoke(
        Command(resume={"decisions": [{"type": "approve"}, {"type": "approve"}]}), config, version="v2"
    )
    final = salida.value["messages"][-1].content
    assert "RE-0000" in final and "SU-0000" in final
    assert len(registro) == 2


def test_agente_real_respuesta_del_encargado_y_error_de_herramienta():
    agente = _agente([])
    config = {"configurable": {"thread_id": "encargado"}}
    agente.invoke({"messages": [HumanMessage("¿tenéis la jarra de repuesto de la cafetera?")]},
                  config, version="v2")
    salida = agente.invoke(
        Command(resume={"decisions": [{"type": "respond", "message": "Llega el jueves."}]}),
        config, version="v2",
    )
    assert salida.value["messages"][-1].content == "El encargado responde: Llega el jueves."

    salida = agente.invoke({"messages": [HumanMessage("¿dónde está mi pedido P-20990101-0001?")]},
                           config, version="v2")
    final = salida.value["messages"][-1].content
    assert "Lo siento" in final and "pedido no encontrado: P-20990101-0001" in final


def test_agente_real_en_streaming_de_mensajes():
    agente = _agente([])
    config = {"configurable": {"thread_id": "stream"}}
    trozos = [
        trozo.content
        for trozo, _meta in agente.stream(
            {"messages": [HumanMessage("¿dónde está mi pedido P-20260925-0150?")]},
            config, stream_mode="messages",
        )
        if isinstance(trozo, AIMessageChunk)
    ]
    texto = "".join(t for t in trozos if isinstance(t, str))
    assert len([t for t in trozos if t]) > 5
    estado = agente.get_state(config).values["messages"][-1].content
    assert texto == estado


@pytest.mark.parametrize("aviso", [AVISO, "", None], ids=["aviso-propio", "sin-aviso", "aviso-de-langchain"])
def test_agente_real_la_edicion_se_lee_del_json_sea_cual_sea_el_aviso(aviso):
    registro = []
    agente = _agente(registro, aviso=aviso)
    config = {"configurable": {"thread_id": "editado-sin-aviso"}}
    salida = agente.invoke({"messages": [HumanMessage(DEVOLVER_CAFETERA)]}, config, version="v2")
    [peticion] = salida.interrupts[0].value["action_requests"]
    editada = {**peticion["args"], "importe": "90.00"}
    salida = agente.invoke(
        Command(resume={"decisions": [
            {"type": "edit", "edited_action": {"name": "reembolsar", "args": editada}}
        ]}),
        config, version="v2",
    )
    final = salida.value["messages"][-1].content
    assert registro == [("reembolsar", "P-20260917-0041", Decimal("90.00"))]
    assert final == (
        "Un encargado ha revisado y ajustado la operación antes de tramitarla. He tramitado el "
        "reembolso RE-000001 de 90,00 EUR del pedido P-20260917-0041."
    )


def test_agente_real_rechazo_sin_motivo():
    registro = []
    agente = _agente(registro)
    config = {"configurable": {"thread_id": "rechazo-sin-motivo"}}
    agente.invoke({"messages": [HumanMessage(DEVOLVER_CAFETERA)]}, config, version="v2")
    salida = agente.invoke(Command(resume={"decisions": [{"type": "reject"}]}), config, version="v2")
    final = salida.value["messages"][-1].content
    assert registro == []
    assert final == (
        "El encargado no ha aprobado el reembolso del pedido P-20260917-0041. "
        "Motivo: sin indicar motivo. No he tramitado ningún reembolso. Si tienes algo más que aportar "
        "(fotos, otra fecha de entrega), dímelo y se lo traslado al encargado."
    )


def test_un_error_con_instrucciones_para_el_asistente_no_se_las_pasa_al_cliente(modelo):
    texto = ("La pasarela no ha podido cobrar la diferencia. El cambio queda pendiente. Dile al cliente "
             "que queda pendiente y que le avisaremos por aquí; no propongas el cambio otra vez")
    final = _con_resultado(modelo, DEVOLVER_CAFETERA, texto, status="error")
    assert final.content.endswith("El cambio queda pendiente. Te avisaremos por aquí en cuanto se complete.")
    assert "Dile al cliente" not in final.content and "no propongas" not in final.content
