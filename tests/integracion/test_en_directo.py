"""El turno en directo del servicio: ``stream`` de LangGraph (modos messages y values).

Lo que la web convierte en eventos SSE (``agente.web.en_vivo.directo``) sale de aquí: los
trozos del nodo del modelo y los avisos de descartar; el resultado, el de ``conversar``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage

from agente.servicio.conversaciones.en_directo import recorrer
from agente.web.infra import metricas
from tests.apoyo.fabricas import uno
from tests.apoyo.web_util import DEVOLVER_CAFETERA, DONDE_ESTA


def _en_directo(servicio, cliente_id: str, texto: str, **opciones: Any):
    ctx = servicio.contexto_de_cliente(cliente_id)
    hilo = servicio.iniciar_conversacion(ctx)
    eventos: list[tuple[str, str]] = []
    respuesta = servicio.conversar_en_directo(hilo, texto, ctx, lambda t, v: eventos.append((t, v)), **opciones)
    return hilo, respuesta, eventos


class _Herramientas(BaseCallbackHandler):
    def __init__(self) -> None:
        self.empezadas: list[str] = []

    def on_tool_start(self, serialized, input_str, **kwargs) -> None:
        self.empezadas.append((serialized or {}).get("name") or kwargs.get("name"))


def test_los_trozos_son_los_del_modelo_y_la_respuesta_la_misma_que_sin_directo(servicio, bd_url):
    hilo, respuesta, eventos = _en_directo(servicio, "C-0004", DONDE_ESTA)
    assert respuesta.estado == "respondida"
    # El modelo pidió consultar_pedido: lo emitido hasta ahí se descarta; lo de la herramienta no sale.
    descartes = [i for i, (t, _) in enumerate(eventos) if t == "descartar"]
    assert descartes, eventos
    assert not any('"pedido"' in v for _, v in eventos)
    tokens = [v for t, v in eventos[descartes[-1] + 1:] if t == "token"]
    assert len(tokens) > 3  # el modelo offline emite por palabras: LangGraph activó su _stream
    assert "".join(tokens) == respuesta.mensaje_cliente
    assert uno(bd_url, "SELECT texto FROM mensajes_conversacion WHERE thread_id = %(h)s AND rol = 'agente' "
                       "ORDER BY id DESC LIMIT 1", {"h": hilo}) == respuesta.mensaje_cliente
    ctx = servicio.contexto_de_cliente("C-0004")
    otra = servicio.conversar(servicio.iniciar_conversacion(ctx), DONDE_ESTA, ctx)
    assert (otra.estado, otra.mensaje_cliente) == (respuesta.estado, respuesta.mensaje_cliente)


def test_una_pausa_en_directo_queda_en_la_cola_y_se_decide_como_siempre(servicio):
    herramientas = _Herramientas()
    hilo, respuesta, eventos = _en_directo(servicio, "C-0001", DEVOLVER_CAFETERA)
    assert respuesta.estado == "esperando_aprobacion"
    # El modelo solo pidió herramientas: nada que enseñar; el texto de la pausa lo pone la aplicación.
    assert eventos and {t for t, _ in eventos} == {"descartar"}
    assert servicio.aprobacion(hilo, tienda="talavera")["estado"] == "pendiente"
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}], callbacks=[herramientas])
    assert final.estado == "respondida"
    assert "reembolsar" in " ".join(herramientas.empezadas)  # el callback llegó a la reanudación


def test_los_callbacks_de_quien_llama_cuentan_los_errores_de_herramienta_en_directo(servicio):
    antes = metricas.ERRORES_HERRAMIENTA.labels(herramienta="consultar_pedido")._value.get()
    herramientas = _Herramientas()
    # Un pedido de otro cliente: consultar_pedido falla y el agente lo explica.
    _, respuesta, _ = _en_directo(servicio, "C-0001", DONDE_ESTA,
                                  callbacks=[metricas.ContadorErroresHerramienta(), herramientas])
    assert respuesta.estado == "respondida"
    assert herramientas.empezadas == ["consultar_pedido"]
    assert metricas.ERRORES_HERRAMIENTA.labels(herramienta="consultar_pedido")._value.get() == antes + 1


def _parte(tipo: str, dato: Any, ns: tuple[str, ...] = (), interrupciones: tuple = ()) -> dict[str, Any]:
    parte = {"type": tipo, "ns": ns, "data": dato}
    if tipo == "values":
        parte["interrupts"] = interrupciones
    return parte


def test_recorrer_solo_emite_el_nodo_del_modelo_y_guarda_el_ultimo_estado():
    modelo = {"langgraph_node": "model"}
    llamada = {"name": "consultar_pedido", "args": "{}", "id": "c1", "index": 0, "type": "tool_call_chunk"}
    partes = [
        _parte("messages", (AIMessageChunk(content="Miro "), modelo)),
        _parte("messages", (AIMessageChunk(content="", tool_call_chunks=[llamada]), modelo)),
        _parte("values", {"messages": ["a"]}),
        _parte("messages", (ToolMessage(content="dato interno", tool_call_id="c1"), {"langgraph_node": "tools"})),
        _parte("messages", (AIMessage(content="de un subgrafo"), modelo), ns=("sub:1",)),
        _parte("messages", (AIMessage(content="de otro nodo"), {"langgraph_node": "otro"})),
        _parte("values", {"messages": ["a", "b"]}),
        _parte("messages", (AIMessageChunk(content="Listo."), modelo)),
        _parte("values", {"messages": ["a", "b", "c"]}, interrupciones=("pausa",)),
    ]
    eventos: list[tuple[str, str]] = []
    ejecucion = recorrer(partes, lambda t, v: eventos.append((t, v)))
    assert eventos == [("token", "Miro "), ("descartar", ""), ("token", "Listo.")]
    assert ejecucion.valores == {"messages": ["a", "b", "c"]}
    assert ejecucion.pausa == "pausa"


def test_si_quien_escucha_falla_el_turno_sigue_y_no_se_le_llama_mas():
    modelo = {"langgraph_node": "model"}
    llamadas: list[str] = []

    def roto(tipo: str, texto: str) -> None:
        llamadas.append(texto)
        raise RuntimeError("Event loop is closed")

    partes = [_parte("messages", (AIMessageChunk(content=t), modelo)) for t in ("Uno ", "dos ", "tres.")]
    ejecucion = recorrer([*partes, _parte("values", {"messages": ["fin"]})], roto)
    assert llamadas == ["Uno "]
    assert ejecucion.valores == {"messages": ["fin"]}
