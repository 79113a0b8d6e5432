"""Trazas en Langfuse: enmascarado, atributos de traza, puntuaciones, veredictos, apagado.

Todo contra ``ReceptorLangfuse`` en 127.0.0.1: sin red. El cliente de Langfuse es un
singleton por clave pública en el proceso (``LangfuseResourceManager``), así que cada
test usa su propia clave y cierra su ``Trazador`` (que suelta el singleton y apaga su
``TracerProvider``); lo que depende del proceso entero (no importar ``langfuse`` sin
claves, reanudar en otro proceso) corre en un subproceso.

Este módulo no importa ``langfuse`` arriba: el subproceso sin claves lo importa y
comprueba que el SDK no llega a cargarse.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import uuid
from decimal import Decimal
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agente.trazas import (
    EVENTO_VEREDICTO,
    PUNTUACION_DECISION,
    PUNTUACION_ESPERA,
    Trazador,
    id_puntuacion,
)
from agente.trazas.mascara import (
    CORREO,
    DNI,
    IBAN,
    TARJETA,
    TELEFONO,
    enmascarar,
    enmascarar_texto,
    enmascarar_valor,
)
from nucleo.ajustes import Ajustes
from nucleo.contexto import ContextoCliente
from tests.apoyo.agente_minimo import (
    CLIENTE,
    CONTEXTO,
    HILO,
    MENSAJE_CON_PII,
    ModeloGuion,
    aprobar,
    config_de,
    construir_agente,
    propuesta_reembolso,
    reembolsar,
    respuesta_final,
    turno_hasta_la_pausa,
)
from tests.apoyo.receptor_langfuse import ReceptorLangfuse
from tests.apoyo.rutas import RAIZ

PII = (
    "ana.garcia@example.com",
    "600 111 001",
    "91 123 45 67",
    "ES91 2100 0418 4502 0005 1332",
    "2100 0418",
    "4111 1111 1111 1111",
)


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def receptor():
    with ReceptorLangfuse() as r:
        yield r
        assert r.errores == [], r.errores


@pytest.fixture
def trazador(receptor):
    # Clave única por test: el SDK guarda un cliente por clave pública en el proceso.
    t = Trazador(public_key=f"pk-test-{uuid.uuid4().hex}", secret_key="sk-test", host=receptor.url)
    assert t.activo
    yield t
    t.cerrar()


def _entorno_sin_langfuse(**extra: str) -> dict[str, str]:
    entorno = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OTEL_"))}
    entorno.update(extra)
    return entorno


def _en_subproceso(codigo: str, *args: str, entorno: dict[str, str]) -> dict[str, Any]:
    proceso = subprocess.run(
        [sys.executable, "-c", codigo, *args],
        cwd=RAIZ,
        env=entorno,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proceso.returncode == 0, proceso.stderr
    return json.loads(proceso.stdout.strip().splitlines()[-1])


# --- enmascarado ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "correo",
    ["ana@example.com", "ana.garcia+pedidos@correo.example.es", "J_Perez-1@sub.dominio.com"],
)
def test_los_correos_se_enmascaran(correo):
    assert enmascarar_texto(f"escribe a {correo}, gracias") == f"escribe a {CORREO}, gracias"


@pytest.mark.parametrize(
    "telefono",
    [
        "+34 600 111 001",
        "+34600111001",
        "0034 600 111 001",
        "(+34) 600 111 001",
        "600111001",
        "600 111 001",
        "600-111-001",
        "600 11 10 01",
        "91 123 45 67",
        "912 345 678",
        "+34 91 123 45 67",
        "712.345.678",
    ],
)
def test_los_telefonos_espanoles_se_enmascaran(telefono):
    assert enmascarar_texto(f"llámame al {telefono} mañana") == f"llámame al {TELEFONO} mañana"


@pytest.mark.parametrize(
    "iban",
    [
        "ES91 2100 0418 4502 0005 1332",
        "ES9121000418450200051332",
        "es91 2100 0418 4502 0005 1332",
        "ES91-2100-0418-4502-0005-1332",
        "GB29NWBK60161331926819",
    ],
)
def test_los_iban_se_enmascaran_con_y_sin_espacios(iban):
    assert enmascarar_texto(f"mi cuenta {iban} y el pedido") == f"mi cuenta {IBAN} y el pedido"


def test_un_codigo_alfanumerico_que_no_cuadra_como_iban_no_se_toca():
    # Mismo formato que GB29NWBK60161331926819 con el control mal: no es un IBAN.
    assert enmascarar_texto("ref GB29NWBK60161331926818") == "ref GB29NWBK60161331926818"


@pytest.mark.parametrize(
    "tarjeta",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "3782 822463 10005",
        "4222222222222",
        "6011 0009 9013 9424 123",
    ],
)
def test_los_numeros_de_tarjeta_se_enmascaran(tarjeta):
    assert enmascarar_texto(f"pagué con {tarjeta}.") == f"pagué con {TARJETA}."


@pytest.mark.parametrize("documento", ["12345678Z", "X1234567L", "X-1234567-L"])
def test_dni_y_nie_se_enmascaran(documento):
    assert enmascarar_texto(f"DNI {documento}") == f"DNI {DNI}"


@pytest.mark.parametrize(
    "texto",
    [
        "pedido P-20260917-0041",
        "pedidos P-20260920-0102, P-20260801-0007 y P-20260925-0150",
        "reembolso RE-000001 y sustitución SU-000001",
        "SKU CAF-001, MEN-001, REP-001",
        "importe 120,00 EUR",
        "importe 120.00",
        "1.234,56 € o 1,234.56",
        "24.90 y 249.00",
        "cliente C-0001 de talavera, encargado enc-talavera",
        "entregado el 2026-09-17T10:30:00+02:00",
        "traza 2d711642b726b04401627ca9fbac32f5",
        "mensaje b1002143-1a1d-62af-9f26-baa3b3cb070c",
        "3 unidades, línea 2, 30 días, 45 días",
    ],
)
def test_los_ids_de_negocio_y_los_importes_quedan_visibles(texto):
    assert enmascarar_texto(texto) == texto


def test_los_uuid_y_los_hex_de_traza_no_se_confunden_con_datos_personales():
    azar = random.Random(20260917)
    for _ in range(5000):
        valor = uuid.UUID(int=azar.getrandbits(128), version=4)
        assert enmascarar_texto(str(valor)) == str(valor)
        assert enmascarar_texto(valor.hex) == valor.hex
        assert enmascarar_texto(f"h-{valor.hex}") == f"h-{valor.hex}"  # ids de hilo del servicio


def test_un_mensaje_mixto_tapa_lo_personal_y_deja_pedido_e_importe():
    enmascarado = enmascarar_texto(MENSAJE_CON_PII)
    for dato in PII:
        assert dato not in enmascarado
    for visible in ("P-20260917-0041", "120,00 EUR", CORREO, TELEFONO, IBAN, TARJETA):
        assert visible in enmascarado
    assert enmascarado.count(TELEFONO) == 2


def test_el_iban_no_se_traga_la_palabra_siguiente():
    assert enmascarar_texto("ES91 2100 0418 4502 0005 1332 y el pedido") == f"{IBAN} y el pedido"


def test_enmascarar_es_idempotente():
    una = enmascarar_texto(MENSAJE_CON_PII)
    assert enmascarar_texto(una) == una


def test_enmascarar_valor_recorre_estructuras_y_devuelve_json():
    datos = {
        "messages": [HumanMessage(content="soy ana@example.com")],
        "args": ("600111001", 3),
        "telefono_numerico": 600111001,
        "tarjeta_numerica": 4111111111111111,
        "importe": Decimal("120.00"),
        "urgente": True,
        "unidades": 2,
        "pedido": "P-20260917-0041",
    }
    resultado = enmascarar_valor(datos)
    texto = json.dumps(resultado, ensure_ascii=False)  # serializable tal cual
    assert "ana@example.com" not in texto and "600111001" not in texto
    assert resultado["messages"][0]["content"] == f"soy {CORREO}"
    assert resultado["args"] == [TELEFONO, 3]
    assert resultado["telefono_numerico"] == TELEFONO
    assert resultado["tarjeta_numerica"] == TARJETA
    assert resultado["importe"] == "120.00"
    assert resultado["urgente"] is True and resultado["unidades"] == 2
    assert resultado["pedido"] == "P-20260917-0041"
    assert set(resultado) == set(datos)  # las claves no se tocan


def test_enmascarar_tiene_la_firma_del_mask_del_sdk():
    assert enmascarar(data="a@b.es") == CORREO
    assert enmascarar(data=None) is None


def test_una_lista_sale_como_el_texto_json_que_habria_escrito_el_sdk():
    from langfuse._client.attributes import _serialize

    entrada = [
        {"role": "user", "content": "soy ana@example.com, ¿y mi pedido P-20260917-0041?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "args": {"unidades": 2}}]},
        {"role": "tool", "content": {"importe": Decimal("19.90"), "grande": 10**25}},
    ]
    texto = enmascarar(data=entrada)
    assert isinstance(texto, str) and "ana@example.com" not in texto
    # Lo que el SDK habría guardado con el valor ya enmascarado, sin adelantar el texto.
    assert texto == _serialize(enmascarar_valor(entrada))
    assert json.loads(texto)[2]["content"] == {"importe": "19.90", "grande": str(10**25)}


def test_una_lista_de_json_puro_sale_igual_por_el_atajo_recordado_y_la_segunda_vez_tambien():
    # La entrada de cada generación (el SDK ya la pasa a dicts): va elemento a elemento por
    # su texto JSON, recordado; debe dar el mismo texto que enmascarar la lista entera.
    entrada = [
        {"role": "system", "content": "Eres el asistente de la tienda «talavera»."},
        {"role": "user", "content": "soy ana@example.com, mi DNI 12345678Z; pedido P-20260917-0041"},
        {"role": "tool", "content": {"type": "function", "function": {"name": "reembolsar",
                                                                      "telefono": 600111001}}},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "args": {"unidades": 2}}]},
    ]
    esperado = json.dumps(enmascarar_valor(entrada), allow_nan=False)
    assert enmascarar(data=entrada) == esperado
    assert enmascarar(data=entrada) == esperado  # ya recordado
    assert "ana@example.com" not in esperado and "12345678Z" not in esperado and "600111001" not in esperado
    assert "P-20260917-0041" in esperado


def test_un_historial_de_mensajes_se_enmascara_igual_que_por_el_serializador_del_sdk():
    # El atajo de ``model_dump()`` para los modelos pydantic debe dar lo mismo que la ida y
    # vuelta por el ``EventSerializer`` del SDK (el camino de antes), byte a byte.
    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

    from agente.trazas.mascara import _a_json

    historial = [
        SystemMessage("Eres el asistente de la tienda."),
        HumanMessage("soy ana@example.com, llamadme al 600 111 001; pedido P-20260917-0041"),
        AIMessage(
            "", id="run-1",
            tool_calls=[{"name": "reembolsar", "id": "c1",
                         "args": {"pedido": "P-20260917-0041", "importe": "120.00", "unidades": 2}}],
            usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
            response_metadata={"modelo": "offline", "tarjeta": 4111111111111111},
        ),
        ToolMessage(json.dumps({"reembolso": "RE-000001", "iban": "ES91 2100 0418 4502 0005 1332"}),
                    tool_call_id="c1", name="reembolsar"),
    ]
    antes = json.dumps([enmascarar_valor(_a_json(m)) for m in historial], allow_nan=False)
    texto = enmascarar(data=historial)
    assert texto == antes
    assert "ana@example.com" not in texto and "600 111 001" not in texto and "4111111111111111" not in texto
    assert "P-20260917-0041" in texto and "120.00" in texto


def test_los_diccionarios_y_lo_que_no_es_json_valido_no_se_adelantan():
    # Los metadatos también pasan por mask= y el SDK los escribe clave a clave.
    assert enmascarar(data={"tienda": "T1", "correo": "a@b.es"}) == {"tienda": "T1", "correo": CORREO}
    con_nan = enmascarar(data=[1.5, float("nan")])
    assert isinstance(con_nan, list) and con_nan[0] == 1.5


def test_la_red_de_exportacion_tapa_atributos_que_mask_no_cubre():
    from langfuse.types import MaskOtelSpansParams, OtelSpanData, OtelSpanIdentifier

    from agente.trazas.mascara import enmascarar_spans_otel

    ident = OtelSpanIdentifier(trace_id="0" * 32, span_id="1" * 16)
    span = OtelSpanData(
        trace_id="0" * 32,
        span_id="1" * 16,
        parent_span_id=None,
        name="HumanInTheLoopMiddleware.after_model",
        instrumentation_scope_name="langfuse-sdk",
        instrumentation_scope_version=None,
        attributes={
            "langfuse.observation.status_message": "(Interrupt(args={'motivo': 'llamar al 600 111 001'}))",
            "langfuse.observation.input": '"ya enmascarado por mask="',
            "user.id": "C-0001",
            "langfuse.trace.tags": ["talavera", "web"],
        },
        resource_attributes={},
    )
    resultado = enmascarar_spans_otel(params=MaskOtelSpansParams(spans={ident: span}))
    cambios = dict(resultado.span_patches[ident].set_attributes)
    assert cambios == {
        "langfuse.observation.status_message": f"(Interrupt(args={{'motivo': 'llamar al {TELEFONO}'}}))"
    }


# --- Trazador sin red --------------------------------------------------------------------


def test_sin_claves_el_trazador_esta_apagado_y_no_falla_nada():
    t = Trazador(public_key=None, secret_key="sk", host="http://127.0.0.1:9")
    assert not t.activo
    trace_id = t.nuevo_trace_id()
    config = t.config_ejecucion(
        trace_id=trace_id,
        thread_id=HILO,
        cliente_id=CLIENTE,
        tienda="talavera",
        canal="web",
        tipo="turno_cliente",
    )
    assert config["callbacks"] == []
    assert config["metadata"]["langfuse_session_id"] == HILO
    t.registrar_veredicto(
        trace_id=trace_id,
        herramienta="reembolsar",
        tool_call_id="call_1",
        requiere_encargado=True,
        motivos=["importe"],
        umbrales={"importe_max": "50.00"},
    )
    t.puntuar_decision(
        trace_id=trace_id,
        thread_id=HILO,
        interrupt_id="i1",
        decision="reject",
        comentario="no",
        espera_minutos=1.0,
    )
    assert t.url_traza(trace_id) is None
    t.flush()
    t.cerrar()
    t.cerrar()


def test_el_trace_id_es_el_mismo_que_el_del_sdk_con_o_sin_claves():
    from langfuse import Langfuse

    apagado = Trazador()
    assert apagado.nuevo_trace_id("hilo-1:turno-3") == Langfuse.create_trace_id(
        seed="hilo-1:turno-3"
    )
    assert apagado.nuevo_trace_id("hilo-1:turno-3") != apagado.nuevo_trace_id("hilo-1:turno-4")
    a, b = apagado.nuevo_trace_id(), apagado.nuevo_trace_id()
    assert a != b
    for trace_id in (a, b, apagado.nuevo_trace_id("x")):
        assert len(trace_id) == 32 and int(trace_id, 16) >= 0 and trace_id == trace_id.lower()


def test_los_metadatos_de_la_ejecucion_solo_llevan_ids():
    config = Trazador().config_ejecucion(
        trace_id=None,
        thread_id=HILO,
        cliente_id=CLIENTE,
        tienda="talavera",
        canal="web",
        encargado_id="enc-talavera",
        tipo="decision_encargado",
    )
    assert config["metadata"] == {
        "langfuse_session_id": HILO,
        "langfuse_user_id": CLIENTE,
        "langfuse_tags": ["talavera", "web"],
        "encargado_id": "enc-talavera",
    }
    assert config["run_name"] == "decision_encargado"


@pytest.mark.parametrize(
    "cambio",
    [
        {"trace_id": "no-es-un-trace-id"},
        {"trace_id": "A" * 32},
        {"tipo": "turno"},
        {"cliente_id": "Ana García"},
        {"thread_id": ""},
        {"canal": "x" * 201},
        {"cliente_id": "ana@example.com"},
        {"cliente_id": "600111001"},
        {"thread_id": "tel:600111001"},
    ],
)
def test_config_ejecucion_rechaza_argumentos_invalidos_aun_apagado(cambio):
    argumentos = {
        "trace_id": "0" * 32,
        "thread_id": HILO,
        "cliente_id": CLIENTE,
        "tienda": "talavera",
        "canal": "web",
        "tipo": "turno_cliente",
    }
    argumentos.update(cambio)
    with pytest.raises(ValueError):
        Trazador().config_ejecucion(**argumentos)


def test_puntuar_una_decision_desconocida_es_un_error():
    with pytest.raises(ValueError):
        Trazador().puntuar_decision(
            trace_id="0" * 32,
            thread_id=HILO,
            interrupt_id="i1",
            decision="aprobar",
            comentario=None,
            espera_minutos=1,
        )


def test_el_id_de_puntuacion_es_estable_y_distinto_por_nombre_e_interrupcion():
    assert id_puntuacion(HILO, "i1", PUNTUACION_DECISION) == id_puntuacion(
        HILO, "i1", PUNTUACION_DECISION
    )
    ids = {
        id_puntuacion(HILO, "i1", PUNTUACION_DECISION),
        id_puntuacion(HILO, "i1", PUNTUACION_ESPERA),
        id_puntuacion(HILO, "i2", PUNTUACION_DECISION),
        id_puntuacion("hilo-0002", "i1", PUNTUACION_DECISION),
    }
    assert len(ids) == 4


def test_desde_ajustes_sigue_las_claves():
    assert not Trazador.desde_ajustes(
        Ajustes(langfuse_public_key=None, langfuse_secret_key=None)
    ).activo
    assert not Trazador.desde_ajustes(
        Ajustes(langfuse_public_key="pk", langfuse_secret_key=None)
    ).activo
    with ReceptorLangfuse() as r:
        ajustes = Ajustes(
            langfuse_public_key=f"pk-{uuid.uuid4().hex}",
            langfuse_secret_key="sk",
            langfuse_host=r.url,
        )
        with Trazador.desde_ajustes(ajustes) as t:
            assert t.activo
            assert t.url_traza("0" * 32) == f"{r.url}/trace/{'0' * 32}"
        assert not t.activo


def test_url_traza_no_hace_peticiones_y_usa_el_proyecto_si_se_conoce(receptor):
    trace_id = "ab" * 16
    with Trazador(
        public_key=f"pk-{uuid.uuid4().hex}",
        secret_key="sk",
        host=receptor.url + "/",
        project_id="proy1",
    ) as t:
        assert t.url_traza(trace_id) == f"{receptor.url}/project/proy1/traces/{trace_id}"
    with Trazador(public_key=f"pk-{uuid.uuid4().hex}", secret_key="sk", host=receptor.url) as t:
        assert t.url_traza(trace_id) == f"{receptor.url}/trace/{trace_id}"
    assert receptor.num_peticiones == 0


# --- con el receptor: lo que llega a "Langfuse" ------------------------------------------


def test_una_ejecucion_con_pausa_y_decision_queda_en_una_sola_traza(receptor, trazador):
    trace_id = trazador.nuevo_trace_id(f"{HILO}:1")
    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()])
    turno_hasta_la_pausa(agente, trazador, trace_id)
    aprobar(agente, trazador, trace_id)
    trazador.flush()

    spans = receptor.spans
    assert len(spans) >= 8
    assert {s.trace_id for s in spans} == {trace_id}
    for s in spans:
        assert s.atributos["session.id"] == HILO
        assert s.atributos["user.id"] == CLIENTE
        assert sorted(s.atributos["langfuse.trace.tags"]) == ["talavera", "web"]
    raices = [s for s in spans if s.atributos.get("langfuse.internal.as_root")]
    assert sorted(s.nombre for s in raices) == ["decision_encargado", "turno_cliente"]
    ids_decision = {s.span_id for s in spans if s.nombre == "decision_encargado"}
    herramienta = [s for s in spans if s.nombre == "reembolsar"]
    assert len(herramienta) == 1
    # El encargado solo figura en la ejecución de su decisión.
    turno = next(s for s in raices if s.nombre == "turno_cliente")
    decision = next(s for s in raices if s.nombre == "decision_encargado")
    assert "langfuse.trace.metadata.encargado_id" not in turno.atributos
    assert json.loads(decision.atributos["langfuse.trace.metadata.encargado_id"]) == "enc-talavera"
    assert ids_decision


def test_lo_personal_llega_enmascarado_y_el_pedido_y_el_importe_no(receptor, trazador):
    trace_id = trazador.nuevo_trace_id()
    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()])
    turno_hasta_la_pausa(agente, trazador, trace_id)
    aprobar(agente, trazador, trace_id)
    trazador.flush()

    enviado = receptor.texto_enviado()
    for dato in PII:
        assert dato not in enviado, dato
    assert "Ana García" not in enviado  # el contexto del cliente no viaja
    for visible in ("P-20260917-0041", "120,00 EUR", "120.00", "RE-000001", CORREO, IBAN, TARJETA):
        assert visible in enviado, visible
    # La pausa de HITL se escribe en status_message, fuera del alcance de mask=.
    pausas = [
        s.atributos["langfuse.observation.status_message"]
        for s in receptor.spans
        if "langfuse.observation.status_message" in s.atributos
    ]
    assert any("reembolsar" in p and TELEFONO in p for p in pausas)


def test_reintentar_la_puntuacion_de_una_decision_reutiliza_los_ids(receptor, trazador):
    trace_id = trazador.nuevo_trace_id()
    for _ in range(2):
        trazador.puntuar_decision(
            trace_id=trace_id,
            thread_id=HILO,
            interrupt_id="int-1",
            decision="reject",
            comentario="No procede: escribe a ana@example.com",
            espera_minutos=12.345,
        )
    trazador.flush()

    scores = receptor.scores_de(trace_id)
    assert len(scores) == 4
    por_nombre: dict[str, list[dict]] = {}
    for s in scores:
        por_nombre.setdefault(s["name"], []).append(s)
    decision, espera = por_nombre[PUNTUACION_DECISION], por_nombre[PUNTUACION_ESPERA]
    assert (
        decision[0]["id"] == decision[1]["id"] == id_puntuacion(HILO, "int-1", PUNTUACION_DECISION)
    )
    assert espera[0]["id"] == espera[1]["id"] == id_puntuacion(HILO, "int-1", PUNTUACION_ESPERA)
    assert decision[0]["dataType"] == "CATEGORICAL" and decision[0]["value"] == "reject"
    assert decision[0]["comment"] == f"No procede: escribe a {CORREO}"
    assert espera[0]["dataType"] == "NUMERIC" and espera[0]["value"] == 12.35


def test_el_veredicto_de_la_politica_cuelga_del_nodo_de_aprobacion(receptor, trazador):
    trace_id = trazador.nuevo_trace_id()
    evaluados: set[str] = set()

    def cuando(peticion) -> bool:
        llamada = peticion.tool_call
        if llamada["id"] not in evaluados:  # solo el veredicto nuevo, no el recordado
            evaluados.add(llamada["id"])
            trazador.registrar_veredicto(
                trace_id=None,
                herramienta=llamada["name"],
                tool_call_id=llamada["id"],
                requiere_encargado=True,
                motivos=["importe 120.00 supera 50.00"],
                umbrales={"importe_max": Decimal("50.00")},
            )
        return True

    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()], cuando)
    turno_hasta_la_pausa(agente, trazador, trace_id)
    aprobar(agente, trazador, trace_id)
    # Fuera de una ejecución, con el trace id guardado.
    trazador.registrar_veredicto(
        trace_id=trace_id,
        herramienta="reembolsar",
        tool_call_id="call_9",
        requiere_encargado=False,
        motivos=[],
        umbrales={"importe_max": "50.00"},
    )
    trazador.flush()

    spans = receptor.spans_de(trace_id)
    por_id = {s.span_id: s for s in spans}
    eventos = [s for s in spans if s.nombre == EVENTO_VEREDICTO]
    assert len(eventos) == 2
    dentro = next(e for e in eventos if "call_1" in e.atributos["langfuse.observation.input"])
    assert dentro.atributos["langfuse.observation.type"] == "event"
    assert por_id[dentro.parent_span_id].nombre == "HumanInTheLoopMiddleware.after_model"
    assert json.loads(dentro.atributos["langfuse.observation.output"]) == {
        "requiere_encargado": True,
        "motivos": ["importe 120.00 supera 50.00"],
    }
    assert json.loads(dentro.atributos["langfuse.observation.metadata.umbrales"]) == {
        "importe_max": "50.00"
    }
    assert dentro.atributos["langfuse.observation.level"] == "WARNING"
    fuera = next(e for e in eventos if e is not dentro)
    assert fuera.parent_span_id not in por_id  # cuelga de la raíz remota de la traza


def test_sin_claves_una_ejecucion_completa_no_envia_nada(receptor):
    t = Trazador(public_key=None, secret_key="sk-test", host=receptor.url)
    trace_id = t.nuevo_trace_id()
    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()])
    interrupcion = turno_hasta_la_pausa(agente, t, trace_id)
    salida = aprobar(agente, t, trace_id)
    assert "RE-000001" in salida.value["messages"][-1].content
    t.registrar_veredicto(
        trace_id=trace_id,
        herramienta="reembolsar",
        tool_call_id="call_1",
        requiere_encargado=True,
        motivos=["x"],
        umbrales={},
    )
    t.puntuar_decision(
        trace_id=trace_id,
        thread_id=HILO,
        interrupt_id=interrupcion.id,
        decision="approve",
        comentario=None,
        espera_minutos=0.5,
    )
    t.flush()
    t.cerrar()
    assert receptor.num_peticiones == 0


def test_cerrar_suelta_el_cliente_y_el_siguiente_con_la_misma_clave_va_a_su_host():
    # Trampa del SDK 5: un cliente por clave pública en el proceso; sin soltarlo, un
    # Langfuse(...) nuevo con la misma clave seguiría mandando al host del primero.
    clave = f"pk-{uuid.uuid4().hex}"
    with ReceptorLangfuse() as primero, ReceptorLangfuse() as segundo:
        with Trazador(public_key=clave, secret_key="sk", host=primero.url) as t1:
            t1.puntuar_decision(
                trace_id="1" * 32,
                thread_id=HILO,
                interrupt_id="a",
                decision="approve",
                comentario=None,
                espera_minutos=1,
            )
        antes = primero.num_peticiones
        with Trazador(public_key=clave, secret_key="sk", host=segundo.url) as t2:
            agente = construir_agente(InMemorySaver(), [propuesta_reembolso()])
            turno_hasta_la_pausa(agente, t2, "2" * 32)
            t2.flush()
        assert antes >= 1 and primero.num_peticiones == antes
        assert {s.trace_id for s in segundo.spans} == {"2" * 32}


def test_un_segundo_trazador_vivo_con_la_misma_clave_avisa(receptor, caplog):
    clave = f"pk-{uuid.uuid4().hex}"
    with Trazador(public_key=clave, secret_key="sk", host=receptor.url):
        with ReceptorLangfuse() as otro, caplog.at_level(logging.WARNING, logger="agente.trazas"):
            with Trazador(public_key=clave, secret_key="sk", host=otro.url):
                pass
    assert any("reutiliza su configuración" in r.getMessage() for r in caplog.records)


# --- en otro proceso ----------------------------------------------------------------------

_SIN_CLAVES = """
import json, sys
from langgraph.checkpoint.memory import InMemorySaver
from nucleo.ajustes import Ajustes
from agente.trazas import Trazador
from tests.apoyo import agente_minimo as minimo

t = Trazador.desde_ajustes(Ajustes())
trace_id = t.nuevo_trace_id("hilo:1")
agente = minimo.construir_agente(InMemorySaver(), [minimo.propuesta_reembolso(), minimo.respuesta_final()])
interrupcion = minimo.turno_hasta_la_pausa(agente, t, trace_id)
salida = minimo.aprobar(agente, t, trace_id)
t.registrar_veredicto(trace_id=trace_id, herramienta="reembolsar", tool_call_id="call_1",
                      requiere_encargado=True, motivos=["x"], umbrales={})
t.puntuar_decision(trace_id=trace_id, thread_id=minimo.HILO, interrupt_id=interrupcion.id,
                   decision="approve", comentario=None, espera_minutos=1)
t.flush(); t.cerrar()
print(json.dumps({"activo": t.activo, "langfuse_cargado": "langfuse" in sys.modules,
                  "respuesta": salida.value["messages"][-1].content}))
"""


@pytest.mark.lento
def test_sin_claves_ni_se_carga_el_sdk_ni_sale_una_peticion(receptor):
    resultado = _en_subproceso(
        _SIN_CLAVES,
        entorno=_entorno_sin_langfuse(
            LANGFUSE_HOST=receptor.url,
            LANGFUSE_BASE_URL=receptor.url,
            OTEL_EXPORTER_OTLP_ENDPOINT=receptor.url,
        ),
    )
    assert resultado["activo"] is False
    assert resultado["langfuse_cargado"] is False
    assert "RE-000001" in resultado["respuesta"]
    assert receptor.num_peticiones == 0


_REANUDAR = """
import json, sys
import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from agente.bd.pool import KWARGS_CONEXION
from agente.trazas import Trazador
from tests.apoyo import agente_minimo as minimo

host, bd_url, trace_id = sys.argv[1:4]
t = Trazador(public_key="pk-reanudacion", secret_key="sk", host=host)
with psycopg.connect(bd_url, **KWARGS_CONEXION) as conexion:
    agente = minimo.construir_agente(PostgresSaver(conexion), [minimo.respuesta_final()])
    salida = minimo.aprobar(agente, t, trace_id)
t.cerrar()
print(json.dumps({"respuesta": salida.value["messages"][-1].content}))
"""


@pytest.mark.lento
def test_reanudar_en_otro_proceso_continua_la_misma_traza(receptor, trazador, bd_url):
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.bd.pool import KWARGS_CONEXION

    trace_id = trazador.nuevo_trace_id(f"{HILO}:turno-1")  # lo que se guardaría en la cola
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as conexion:
        guardado = PostgresSaver(conexion)
        guardado.setup()
        agente = construir_agente(guardado, [propuesta_reembolso()])
        turno_hasta_la_pausa(agente, trazador, trace_id)
    trazador.flush()
    spans_turno = {s.span_id for s in receptor.spans}

    resultado = _en_subproceso(
        _REANUDAR, receptor.url, bd_url, trace_id, entorno=_entorno_sin_langfuse()
    )

    assert "RE-000001" in resultado["respuesta"]
    nuevos = [s for s in receptor.spans if s.span_id not in spans_turno]
    assert spans_turno and nuevos
    assert {s.trace_id for s in receptor.spans} == {trace_id}
    assert {s.nombre for s in nuevos} >= {"decision_encargado", "reembolsar"}
    for s in nuevos:  # sesión y usuario se vuelven a mandar en la reanudación
        assert s.atributos["session.id"] == HILO and s.atributos["user.id"] == CLIENTE


def test_los_nodos_de_envoltorio_no_abren_span_y_sus_hijos_cuelgan_de_la_raiz(receptor, trazador):
    from agente.trazas.manejador import NODOS_OMITIDOS

    trace_id = trazador.nuevo_trace_id()
    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()])
    turno_hasta_la_pausa(agente, trazador, trace_id)
    aprobar(agente, trazador, trace_id)
    trazador.flush()

    spans = receptor.spans_de(trace_id)
    assert {s.trace_id for s in receptor.spans} == {trace_id}  # ningún hijo huérfano abre otra traza
    assert not NODOS_OMITIDOS & {s.nombre for s in spans}
    por_id = {s.span_id: s for s in spans}
    raices = {s.span_id for s in spans if s.parent_span_id is None or s.parent_span_id not in por_id}
    assert {por_id[r].nombre for r in raices} == {"turno_cliente", "decision_encargado"}
    herramienta = next(s for s in spans if s.nombre == "reembolsar")
    generaciones = [s for s in spans if s.atributos.get("langfuse.observation.type") == "generation"]
    assert generaciones
    for hijo in [herramienta, *generaciones]:
        assert hijo.parent_span_id in raices


def test_la_salida_de_la_raiz_lleva_la_ultima_respuesta_y_no_repite_el_historial(receptor, trazador):
    trace_id = trazador.nuevo_trace_id()
    agente = construir_agente(InMemorySaver(), [propuesta_reembolso(), respuesta_final()])
    turno_hasta_la_pausa(agente, trazador, trace_id)
    salida = aprobar(agente, trazador, trace_id)
    trazador.flush()

    decision = next(s for s in receptor.spans_de(trace_id) if s.nombre == "decision_encargado")
    enviada = json.loads(decision.atributos["langfuse.observation.output"])
    mensajes = salida.value["messages"]
    assert enviada["mensajes"] == len(mensajes)
    assert "messages" not in enviada
    assert "RE-000001" in json.dumps(enviada["respuesta"], ensure_ascii=False)
    # La primera pregunta del cliente ya no viaja en la salida (sí en la última generación).
    assert str(mensajes[0].content)[:40] not in decision.atributos["langfuse.observation.output"]


class ModeloConHerramientas(ModeloGuion):
    """Como un modelo de verdad: ``bind_tools`` pasa las definiciones en las kwargs."""

    def bind_tools(self, tools, **kwargs):
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def _generaciones(receptor, trazador, modelo, texto: str) -> list:
    """Un turno de ``create_agent`` con ``modelo`` y ``reembolsar``, trazado: sus generaciones."""
    trace_id = trazador.nuevo_trace_id()
    agente = create_agent(modelo, [reembolsar], checkpointer=InMemorySaver(), context_schema=ContextoCliente)
    agente.invoke(
        {"messages": [{"role": "user", "content": texto}]},
        config_de(trazador, trace_id, "turno_cliente"), context=CONTEXTO, version="v2",
    )
    trazador.flush()
    return [s for s in receptor.spans_de(trace_id)
            if s.atributos.get("langfuse.observation.type") == "generation"]


def test_las_definiciones_de_herramientas_viajan_una_vez_por_ejecucion(receptor, trazador):
    generaciones = _generaciones(
        receptor, trazador, ModeloConHerramientas(respuestas=[propuesta_reembolso(), respuesta_final()]),
        "Devolvedme lo del pedido P-20260917-0041",
    )
    assert len(generaciones) == 2
    entradas = [json.loads(g.atributos["langfuse.observation.input"]) for g in generaciones]
    herramientas = [[m["content"] for m in e
                     if m.get("role") == "tool" and isinstance(m.get("content"), dict)] for e in entradas]
    completas = [h for h in herramientas if h[0]["function"].get("description")]
    solo_nombre = [h for h in herramientas if not h[0]["function"].get("description")]
    assert len(completas) == 1 and len(solo_nombre) == 1, herramientas
    assert completas[0][0]["function"]["description"] == "Reembolsa un pedido."
    assert "parameters" in completas[0][0]["function"]
    assert solo_nombre[0] == [{"type": "function", "function": {"name": "reembolsar"}}]


def test_las_generaciones_del_modelo_offline_llevan_su_modelo_en_la_traza(receptor, trazador):
    from agente.modelo_offline import ModeloOffline

    generaciones = _generaciones(receptor, trazador, ModeloOffline(), "Hola, ¿qué tal?")
    assert generaciones
    assert {g.atributos.get("langfuse.observation.model.name") for g in generaciones} == {"offline-reglas"}
