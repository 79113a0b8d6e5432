"""Errores y límites del agente: mensajes en español, reintentos seguros, hilo marcado."""

from __future__ import annotations

import logging

import psycopg
import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agente.middleware.limites import MENSAJE_LIMITE
from agente.modelo_offline import ModeloOffline
from agente.servicio.fabrica import crear_servicio
from caja.pasarela import PasarelaSimulada
from tests.apoyo.fabricas import PEDIDO_PEQUENO, ajustes_prueba, conversacion, crear_pedido, uno
from tests.apoyo.modelo_guion import guion, llamada


def _servicio(bd_url, modelo, pasarela=None, **extra):
    return crear_servicio(ajustes_prueba(bd_url, **extra), url=bd_url, modelo=modelo,
                          pasarela=pasarela, pausa_reintentos=0.01)


def _mensajes(servicio, hilo):
    return servicio.agente.get_state({"configurable": {"thread_id": hilo}}).values["messages"]


def test_limite_de_llamadas_al_modelo_termina_en_espanol_y_pide_persona(bd_url):
    servicio = _servicio(bd_url, ModeloOffline(), max_llamadas_modelo_turno=1)
    try:
        hilo, respuesta = conversacion(servicio, "C-0004", "¿Dónde está mi pedido P-20260925-0150?")
    finally:
        servicio.cerrar()
    assert respuesta.mensaje_cliente == MENSAJE_LIMITE
    assert uno(bd_url, "SELECT estado FROM consultas_asistente WHERE thread_id = %(h)s", {"h": hilo}) == "necesita_persona"


def test_tres_reembolsos_en_un_turno_no_ejecuta_ninguno_y_pide_persona(bd_url):
    tres = AIMessage("", tool_calls=[
        llamada("reembolsar", pedido=PEDIDO_PEQUENO, importe="5", motivo="a"),
        llamada("reembolsar", pedido=PEDIDO_PEQUENO, importe="5", motivo="b"),
        llamada("reembolsar", pedido=PEDIDO_PEQUENO, importe="5", motivo="c"),
    ])
    servicio = _servicio(bd_url, guion(tres, "no debería llegar aquí"))
    try:
        hilo, respuesta = conversacion(servicio, "C-0002", "devolvedme todo tres veces")
        mensajes = _mensajes(servicio, hilo)
    finally:
        servicio.cerrar()
    assert respuesta.mensaje_cliente == MENSAJE_LIMITE
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    # La propuesta excesiva no entra en el historial: ninguna llamada queda sin respuesta
    # (un proveedor real rechazaría el historial en el turno siguiente).
    respondidas = {m.tool_call_id for m in mensajes if isinstance(m, ToolMessage)}
    pedidas = {t["id"] for m in mensajes if isinstance(m, AIMessage) for t in m.tool_calls}
    assert pedidas <= respondidas
    assert not any(t["id"] in pedidas for t in tres.tool_calls)
    assert uno(bd_url, "SELECT estado FROM consultas_asistente WHERE thread_id = %(h)s", {"h": hilo}) == "necesita_persona"


def test_dos_reembolsos_en_un_turno_si_se_permiten(bd_url):
    # Dos sartenes: cada reembolso ocupa su unidad (una unidad se compensa una sola vez).
    pedido = crear_pedido(bd_url, "C-0002", [("MEN-001", 2)], dias_entrega=3)
    dos = AIMessage("", tool_calls=[
        llamada("reembolsar", pedido=pedido, importe="5", motivo="a"),
        llamada("reembolsar", pedido=pedido, importe="5", motivo="b"),
    ])
    servicio = _servicio(bd_url, guion(dos, "Hecho."))
    try:
        _, respuesta = conversacion(servicio, "C-0002", "dos devoluciones")
    finally:
        servicio.cerrar()
    assert respuesta.mensaje_cliente == "Hecho."
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 2


def test_limites_no_validos_se_rechazan_al_construir():
    from agente.middleware.limites import LimitesTurno

    with pytest.raises(ValueError):
        LimitesTurno(llamadas_modelo_turno=0)
    with pytest.raises(ValueError):
        LimitesTurno(llamadas_modelo_turno=10, llamadas_modelo_hilo=5)
    with pytest.raises(ValueError):
        LimitesTurno(max_por_herramienta={"reembolsar": 0})


def test_error_de_negocio_llega_al_modelo_en_espanol(bd_url):
    servicio = _servicio(bd_url, ModeloOffline())
    try:
        hilo, respuesta = conversacion(servicio, "C-0002", "¿Dónde está mi pedido P-20260917-0041?")
        mensajes = _mensajes(servicio, hilo)
    finally:
        servicio.cerrar()
    errores = [m for m in mensajes if isinstance(m, ToolMessage) and m.status == "error"]
    assert errores and errores[0].content == "Error: pedido no encontrado: P-20260917-0041"
    assert "no encontrado" in respuesta.mensaje_cliente.lower()


class PasarelaRota:
    def emitir_reembolso(self, referencia, importe):
        raise RuntimeError("fallo inesperado con datos internos 0xdeadbeef")

    cobrar = emitir_reembolso


def test_fallo_de_la_pasarela_no_filtra_detalles_y_deja_el_reembolso_sin_emitir(bd_url):
    servicio = _servicio(bd_url, ModeloOffline(), pasarela=PasarelaRota())
    try:
        _, respuesta = conversacion(
            servicio, "C-0002", f"Quiero devolver la sartén del pedido {PEDIDO_PEQUENO} porque se pega"
        )
    finally:
        servicio.cerrar()
    assert "0xdeadbeef" not in respuesta.mensaje_cliente
    assert "Traceback" not in respuesta.mensaje_cliente
    # Anotado pero sin emitir: un reintento con la misma clave lo completa.
    assert uno(bd_url, "SELECT count(*) FROM reembolsos WHERE estado = 'emitido'") == 0
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 0


def test_error_inesperado_se_registra_con_el_hilo_y_el_modelo_recibe_una_disculpa(caplog):
    from types import SimpleNamespace

    from agente.middleware.errores import MENSAJE_INTERNO, convertir_error

    peticion = SimpleNamespace(
        tool_call={"name": "reembolsar", "id": "call_1", "args": {}},
        runtime=SimpleNamespace(config={"configurable": {"thread_id": "h-prueba-123"}}),
    )
    with caplog.at_level(logging.ERROR):
        texto = convertir_error(KeyError("dato interno 0xdeadbeef"), peticion)
    assert texto == MENSAJE_INTERNO and "0xdeadbeef" not in texto
    assert any("h-prueba-123" in r.getMessage() for r in caplog.records)


class PoolIntermitente:
    """El pool real, pero la primera conexión que piden las herramientas falla como una caída de red."""

    def __init__(self, pool):
        self.pool = pool
        self.fallos = 0

    def connection(self, *args, **kwargs):
        if self.fallos == 0:
            self.fallos += 1
            raise psycopg.OperationalError("la conexión se cerró inesperadamente")
        return self.pool.connection(*args, **kwargs)


def test_error_transitorio_de_base_de_datos_se_reintenta_sin_pagar_dos_veces(bd_url, pool):
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.construir import construir_agente
    from agente.servicio.fachada import Servicio
    from herramientas import REGISTRO
    from politicas import PoliticaAprobacion

    intermitente = PoolIntermitente(pool)
    agente = construir_agente(
        ModeloOffline(), PostgresSaver(pool), pool=intermitente, pasarela=PasarelaSimulada(pool=pool),
        politica=PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas()), pausa_reintentos=0.01,
    )
    servicio = Servicio(pool=pool, agente=agente)
    _, respuesta = conversacion(
        servicio, "C-0002", f"Quiero devolver la sartén del pedido {PEDIDO_PEQUENO} porque se pega"
    )
    assert intermitente.fallos == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1
    assert uno(bd_url, "SELECT numero FROM reembolsos") in respuesta.mensaje_cliente


def test_cada_herramienta_firmable_lista_sus_decisiones_y_las_de_lectura_no_se_firman():
    from herramientas import REGISTRO
    from nucleo.operaciones import OPERACIONES

    permitidas = REGISTRO.decisiones_permitidas()
    # «respond» finge un resultado sin ejecutar: solo la consulta al encargado lo admite.
    assert permitidas.pop("consultar_encargado") == ["respond"]
    assert not any("respond" in d for d in permitidas.values())
    # Cada herramienta de una operación, las de su declaración: aprobar y rechazar siempre;
    # editar, solo donde el encargado puede rebajar un campo (un importe).
    por_operacion = {h: sorted(op.decisiones) for op in OPERACIONES for h in op.herramientas}
    assert permitidas == por_operacion
    for op in OPERACIONES:
        assert {"approve", "reject"} <= set(op.decisiones)
        assert ("edit" in op.decisiones) == bool(op.campos_editables)
    assert permitidas["reembolsar"] == ["approve", "edit", "reject"]
    assert permitidas["cancelar_pedido"] == ["approve", "reject"]
    # Las de lectura nunca se firman.
    assert not {"consultar_pedido", "consultar_politica", "stock_alternativas"} & set(permitidas)


def test_proveedor_caido_da_una_disculpa_corta_y_marca_el_hilo(bd_url, caplog):
    from agente.servicio.textos import DISCULPA

    class ModeloCaido(ModeloOffline):
        def _generate(self, *args, **kwargs):
            raise ConnectionError("proveedor caído: 503 upstream sk-secret")

    servicio = _servicio(bd_url, ModeloCaido())
    try:
        with caplog.at_level(logging.ERROR):
            hilo, respuesta = conversacion(servicio, "C-0004", "¿Dónde está mi pedido P-20260925-0150?")
    finally:
        servicio.cerrar()
    assert respuesta.mensaje_cliente == DISCULPA
    assert any(hilo in r.getMessage() for r in caplog.records)
    assert uno(bd_url, "SELECT estado FROM consultas_asistente WHERE thread_id = %(h)s", {"h": hilo}) == "necesita_persona"


def test_limite_por_conversacion_se_mantiene_entre_turnos(bd_url):
    servicio = _servicio(bd_url, ModeloOffline(), max_llamadas_modelo_turno=2, max_llamadas_modelo_hilo=3)
    try:
        ctx = servicio.contexto_de_cliente("C-0004")
        hilo = servicio.iniciar_conversacion(ctx)
        primera = servicio.conversar(hilo, "¿Dónde está mi pedido P-20260925-0150?", ctx)
        segunda = servicio.conversar(hilo, "¿Y el pedido P-20260925-0150 otra vez?", ctx)
    finally:
        servicio.cerrar()
    assert primera.mensaje_cliente != MENSAJE_LIMITE
    assert segunda.mensaje_cliente == MENSAJE_LIMITE
