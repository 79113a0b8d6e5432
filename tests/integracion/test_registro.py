"""El registro de herramientas es la única puerta: una herramienta nueva se añade ahí y basta."""

from __future__ import annotations

import json

import pytest
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.postgres import PostgresSaver
from pydantic import BaseModel, Field

from agente.construir import construir_agente
from herramientas import REGISTRO, Herramienta, Registro
from nucleo.contexto import contexto_de
from tests.apoyo.modelo_guion import guion, llamada


class HorarioArgs(BaseModel):
    dia: str = Field(description="Día de la semana en español, por ejemplo «lunes».")


def crear_consultar_horario(dependencias):
    @tool("consultar_horario", args_schema=HorarioArgs)
    def consultar_horario(dia: str, runtime: ToolRuntime) -> str:
        """Devuelve el horario de apertura de la tienda del cliente para `dia`."""
        return json.dumps({"tienda": contexto_de(runtime).tienda, "dia": dia, "horario": "10:00-21:00"})

    return consultar_horario


HORARIO = Herramienta(nombre="consultar_horario", crear=crear_consultar_horario, reintento_seguro=True)


def test_una_herramienta_de_lectura_registrada_solo_en_el_registro_la_llama_el_agente(
        bd_url, pool, pasarela, conexion):
    from agente.evaluacion import instantanea
    from agente.servicio.auditoria.informe import informe
    from agente.servicio.fachada import Servicio

    registro = REGISTRO.con(HORARIO)
    # De lectura: sin decisiones, la política nunca la pausa y no es una operación con efecto.
    assert "consultar_horario" not in registro.decisiones_permitidas()
    assert "consultar_horario" not in registro.con_efectos()
    efectos_antes = instantanea.efectos(conexion)
    llamada_horario = llamada("consultar_horario", dia="lunes")
    modelo = guion(AIMessage("", tool_calls=[llamada_horario]), "El lunes abrimos de 10:00 a 21:00.")
    agente = construir_agente(modelo, PostgresSaver(pool), pool=pool, pasarela=pasarela, registro=registro)
    servicio = Servicio(pool=pool, agente=agente, registro=registro)
    ctx = servicio.contexto_de_cliente("C-0001")
    hilo = servicio.iniciar_conversacion(ctx)

    respuesta = servicio.conversar(hilo, "¿Qué horario tenéis el lunes?", ctx)

    assert respuesta.estado == "respondida"
    assert respuesta.mensaje_cliente == "El lunes abrimos de 10:00 a 21:00."
    mensajes = agente.get_state({"configurable": {"thread_id": hilo}}).values["messages"]
    resultado = next(m for m in mensajes if isinstance(m, ToolMessage))
    assert resultado.name == "consultar_horario" and resultado.status == "success"
    assert json.loads(resultado.content) == {"tienda": "talavera", "dia": "lunes", "horario": "10:00-21:00"}
    # La auditoría y la instantánea de la evaluación no ven ningún efecto nuevo.
    assert instantanea.efectos(conexion) == efectos_antes
    auditado = informe(conexion)
    assert (auditado["sin_firma"], auditado["firmas"]) == ([], [])


def test_el_registro_por_defecto_no_conoce_la_herramienta_nueva():
    assert "consultar_horario" not in REGISTRO
    assert "consultar_horario" in REGISTRO.con(HORARIO)
    assert REGISTRO.con(HORARIO).reintentables()[-1] == "consultar_horario"


@pytest.mark.parametrize(
    ("campos", "mensaje"),
    [
        ({"decisiones": ("approve",)}, "necesita una regla"),
        ({"decisiones": ("approve", "fingir"), "regla": "x"}, "decisiones desconocidas"),
        ({"campos_editables": ("importe",)}, "sin la decisión"),
        ({"max_por_turno": 0}, "al menos 1"),
        ({"nombre": "con espacios"}, "no válido"),
    ],
)
def test_una_definicion_incoherente_se_rechaza_al_registrarla(campos, mensaje):
    datos = {"nombre": "herramienta_x", "crear": crear_consultar_horario, **campos}
    with pytest.raises(ValueError, match=mensaje):
        Herramienta(**datos)


def test_dos_herramientas_con_el_mismo_nombre_no_caben_en_un_registro():
    with pytest.raises(ValueError, match="repetidas"):
        Registro((HORARIO, HORARIO))


def test_una_fabrica_que_construye_otro_nombre_se_detecta(pool, pasarela):
    from herramientas import crear_herramientas

    mal = Herramienta(nombre="otro_nombre", crear=crear_consultar_horario)
    with pytest.raises(ValueError, match="se construyó como 'consultar_horario'"):
        crear_herramientas(pool=pool, pasarela=pasarela, registro=Registro((mal,)))
