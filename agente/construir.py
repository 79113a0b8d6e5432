"""Ensambla el agente: modelo, herramientas, prompt, errores, firma, límites y la salida del modelo.

Orden del middleware: en ``wrap_*`` el primero envuelve a los demás. La revalidación de
los efectos va por fuera de los errores (su ``NecesitaFirma`` se convierte en una pausa). Los límites envuelven
directamente al modelo (dentro de los reintentos: un reintento no cuenta dos veces) y
cortan una respuesta que se pasa antes de que la firma la vea: no se pide firma para
algo que no se va a ejecutar.

El canal ``messages`` es un ``DeltaChannel`` de LangGraph (``EstadoAgente``): cada
checkpoint guarda lo que añadió su paso y, cada 50, la conversación entera; sin él, cada
paso volvía a serializar y guardar la conversación entera (O(n²) en bytes y CPU por hilo).
A/B en docs/rendimiento.md: 150 turnos, 28,7 -> 21,8 ms de CPU por turno y 11,2 -> 1,8 MiB;
10 turnos, 13,3 -> 12,6 ms. Lee igual los hilos guardados antes con la lista entera.

Trampa: su reductor (``_messages_delta_reducer``) recibe todas las escrituras de un paso a
la vez; ``add_messages`` recibe dos listas y aquí fallaría.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from langchain.agents import AgentState, create_agent
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.message import _messages_delta_reducer

from agente.middleware.aprobacion import middleware_aprobacion
from agente.middleware.errores import middleware_errores
from agente.middleware.limites import LimitesTurno
from agente.middleware.prompt_cliente import crear_prompt_cliente, prompt_cliente
from agente.middleware.respaldo import RespaldoConversacion
from agente.middleware.revalidacion import RevalidacionEfectos
from agente.middleware.salida_modelo import SalidaModelo
from agente.middleware.vigencia import VigenciaCandado
from herramientas import REGISTRO, Registro, crear_herramientas
from nucleo.contexto import ContextoCliente
from nucleo.operaciones import OPERACIONES
from politicas import DescripcionEncargado, PoliticaAprobacion, PoliticaTienda

DURABILIDAD = "sync"  # el tool_call_id solo es clave de idempotencia estable así
# Una foto entera cada tantos pasos: acota cuántos checkpoints se releen para rehacerla.
FOTO_CADA = 50


class EstadoAgente(AgentState):
    messages: Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=FOTO_CADA)]


def construir_agente(
    modelo,
    checkpointer: BaseCheckpointSaver,
    *,
    pool,
    pasarela,
    llamadas_modelo_turno: int = 8,
    llamadas_modelo_hilo: int = 60,
    pausa_reintentos: float = 0.2,
    politica: PoliticaAprobacion | None = None,
    registro: Registro = REGISTRO,
    vigencia: Callable[[str], None] | None = None,
    fuente_prompt=None,
    operaciones=OPERACIONES,
):
    """El agente de ``create_agent`` con las herramientas y reglas de ``registro``.

    Aquí se cruzan las dos capas que no se importan entre sí: la política elige regla por
    el ``regla`` de cada herramienta del registro, y las herramientas reciben de
    ``politicas/`` el texto de la política para el cliente (``PoliticaTienda``).

    ``vigencia``: ``thread_id -> None`` que lanza si la ejecución perdió el candado del
    hilo; se comprueba antes de cada herramienta con efectos (el primero de la lista:
    ningún otro middleware convierte ese error en un resultado para el modelo).
    ``fuente_prompt``: de dónde sale el prompt de sistema (``FuentePrompt``; None = integrado).
    ``operaciones``: las operaciones con efecto declaradas (la descripción para el encargado
    de una sin redacción propia sale de sus campos).
    """
    politica = politica or PoliticaAprobacion(pool=pool, reglas=registro.reglas())
    vigilancia = (
        [VigenciaCandado(comprobar=vigencia, con_efectos=registro.con_efectos())] if vigencia else []
    )
    descripcion = DescripcionEncargado(
        pool=pool,
        politica=politica,
        titulos={h.nombre: h.titulo_encargado for h in registro if h.titulo_encargado},
        operaciones=operaciones,
    )
    decisiones = registro.decisiones_permitidas()
    return create_agent(
        modelo,
        tools=crear_herramientas(
            pool=pool, pasarela=pasarela, registro=registro, politica=PoliticaTienda(pool=pool),
            revalidador=politica,
        ),
        middleware=[
            *vigilancia,
            # Fuera de los errores: un efecto que ya no sale sin firma pausa, no es un error.
            RevalidacionEfectos(politica=politica, descripcion=descripcion, decisiones=decisiones),
            crear_prompt_cliente(fuente_prompt) if fuente_prompt is not None else prompt_cliente,
            *middleware_errores(reintentables=registro.reintentables(), pausa_inicial=pausa_reintentos),
            # La guarda de la conversación, en el nodo de la firma: contesta lo que el
            # cliente no pidió antes de que se encole o se ejecute.
            middleware_aprobacion(decisiones=decisiones, politica=politica, descripcion=descripcion,
                                  respaldo=RespaldoConversacion(
                                      operaciones=operaciones, con_efectos=registro.con_efectos(),
                                      titulos={h.nombre: h.titulo_encargado for h in registro
                                               if h.titulo_encargado}).respuestas),
            LimitesTurno(
                llamadas_modelo_turno=llamadas_modelo_turno,
                llamadas_modelo_hilo=llamadas_modelo_hilo,
                max_por_herramienta=registro.maximos_por_turno(),
            ),
            SalidaModelo(),  # lo más cerca del modelo: sin U+0000 y un tool_call_id por llamada
        ],
        state_schema=EstadoAgente,
        context_schema=ContextoCliente,
        checkpointer=checkpointer,
    )
