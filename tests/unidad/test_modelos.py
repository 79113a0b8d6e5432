"""Elección del modelo (AGENTE_MODELO) e ida y vuelta con un proveedor compatible con OpenAI."""

from __future__ import annotations

import json
import sys

import openai
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agente.modelo_offline import ModeloOffline
from agente.modelos import crear_modelo, juntar_argumentos
from nucleo.errores import ErrorConfiguracion
from tests.apoyo.servidor_openai import ServidorOpenAI


@tool
def consultar_pedido(pedido: str) -> str:
    """Consulta un pedido del cliente por su número."""
    return json.dumps({"pedido": pedido, "estado": "entregado"})


@tool
def reembolsar(pedido: str, importe: str, motivo: str) -> str:
    """Emite un reembolso del pedido."""
    return json.dumps({"reembolso": "RE-000001", "pedido": pedido, "importe": importe,
                       "estado": "emitido", "repetido": False})


@pytest.fixture
def servidor():
    with ServidorOpenAI() as arrancado:
        yield arrancado


@pytest.fixture
def sin_claves(monkeypatch):
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)


# ------------------------------------------------------------------ elección


@pytest.mark.parametrize("nombre", ["offline", " OFFLINE "])
def test_offline_da_el_modelo_de_reglas(nombre):
    assert isinstance(crear_modelo(nombre), ModeloOffline)


@pytest.mark.parametrize("nombre", ["gpt-4o-mini", "openai:", ":gpt-4o", ""])
def test_nombre_sin_proveedor_y_modelo_es_error_de_configuracion(nombre):
    with pytest.raises(ErrorConfiguracion, match="no es válido: usa 'offline'"):
        crear_modelo(nombre)


def test_proveedor_desconocido_es_error_de_configuracion():
    with pytest.raises(ErrorConfiguracion, match="Proveedor de modelo desconocido.*'patata'") as exc:
        crear_modelo("patata:grande")
    assert exc.value.estado_http == 500


@pytest.mark.parametrize(("proveedor", "paquete"), [("anthropic", "langchain_anthropic"), ("ollama", "langchain_ollama")])
def test_paquete_sin_instalar_nombra_el_extra(monkeypatch, proveedor, paquete):
    monkeypatch.setitem(sys.modules, paquete, None)  # la importación falla como si no estuviera
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-prueba")
    with pytest.raises(ErrorConfiguracion) as exc:
        crear_modelo(f"{proveedor}:algo")
    assert f'pip install "agente-tienda[{proveedor}]"' in exc.value.mensaje
    assert "no está instalado" in exc.value.mensaje


def test_proveedor_sin_extra_propio_nombra_su_paquete(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_groq", None)
    with pytest.raises(ErrorConfiguracion, match="pip install langchain-groq"):
        crear_modelo("groq:llama-3.1-8b")


@pytest.mark.usefixtures("sin_claves")
def test_falta_la_clave_nombra_la_variable():
    with pytest.raises(ErrorConfiguracion) as exc:
        crear_modelo("openai:gpt-4o-mini")
    assert "OPENAI_API_KEY" in exc.value.mensaje
    assert "AGENTE_MODELO=offline" in exc.value.mensaje


def test_sin_reintentos_timeout_y_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-prueba")
    modelo = crear_modelo(
        "openai:gpt-4o-mini", base_url="http://127.0.0.1:9/v1", sin_reintentos=True, timeout=7.5
    )
    assert modelo.max_retries == 0
    assert modelo.request_timeout == 7.5
    assert modelo.openai_api_base == "http://127.0.0.1:9/v1"
    assert crear_modelo("openai:gpt-4o-mini").max_retries != 0


@pytest.mark.usefixtures("sin_claves")
def test_servidor_propio_compatible_no_exige_clave():
    modelo = crear_modelo("openai:local", base_url="http://127.0.0.1:9/v1")
    assert modelo.openai_api_key.get_secret_value() == "sin-clave"


# ------------------------------------------------------------------ ida y vuelta


@pytest.mark.usefixtures("sin_claves")
def test_ida_y_vuelta_con_llamada_guionizada(servidor):
    [id_llamada] = servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-20260917-0041"}))
    servidor.responder_texto("Tu pedido está entregado.")
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    enlazado = modelo.bind_tools([consultar_pedido, reembolsar])

    historial = [HumanMessage("¿dónde está mi pedido P-20260917-0041?")]
    respuesta = enlazado.invoke(historial)
    assert respuesta.tool_calls == [
        {"name": "consultar_pedido", "args": {"pedido": "P-20260917-0041"}, "id": id_llamada,
         "type": "tool_call"}
    ]
    primera = servidor.peticiones[0]
    assert primera.ruta == "/v1/chat/completions"
    esquemas = primera.herramientas()
    assert set(esquemas) == {"consultar_pedido", "reembolsar"}
    assert esquemas["reembolsar"]["required"] == ["pedido", "importe", "motivo"]

    historial += [respuesta, ToolMessage('{"estado": "entregado"}', tool_call_id=id_llamada)]
    final = enlazado.invoke(historial)
    assert final.content == "Tu pedido está entregado."
    segunda = servidor.peticiones[1]
    assert segunda.llamadas_sin_respuesta() == []
    assert segunda.respuestas_huerfanas() == []
    assert segunda.mensajes[-1] == {"role": "tool", "tool_call_id": id_llamada,
                                    "content": '{"estado": "entregado"}'}


def test_streaming_sse_texto_y_llamadas(servidor):
    servidor.responder_texto("Hola, ¿en qué puedo ayudarte hoy?")
    ids = servidor.responder_llamadas(
        ("consultar_pedido", {"pedido": "P-1"}), ("reembolsar", {"pedido": "P-1", "importe": "1.00",
                                                                  "motivo": "roto"})
    )
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    enlazado = modelo.bind_tools([consultar_pedido, reembolsar])

    trozos = list(enlazado.stream([HumanMessage("hola")]))
    assert len([t for t in trozos if t.content]) > 3
    assert "".join(t.content for t in trozos) == "Hola, ¿en qué puedo ayudarte hoy?"
    assert servidor.peticiones[0].cuerpo["stream"] is True

    completo = None
    for trozo in enlazado.stream([HumanMessage("devuélvelo")]):
        completo = trozo if completo is None else completo + trozo
    assert [(c["id"], c["name"]) for c in completo.tool_calls] == [
        (ids[0], "consultar_pedido"), (ids[1], "reembolsar")
    ]
    assert completo.tool_calls[1]["args"] == {"pedido": "P-1", "importe": "1.00", "motivo": "roto"}


@pytest.mark.usefixtures("sin_claves")
def test_en_streaming_los_trozos_no_se_construyen_como_modelos_del_sdk(servidor, monkeypatch):
    """Cada trozo llega a langchain-openai como el dict del JSON: el constructor del SDK
    (≈ 0,5 ms por trozo) no se llama, y el mensaje sale igual: texto, llamadas y uso."""
    from openai.types.chat import ChatCompletionChunk

    construidos = []
    original = ChatCompletionChunk.construct.__func__

    def contar(cls, *args, **kwargs):
        construidos.append(cls)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(ChatCompletionChunk, "construct", classmethod(contar))
    servidor.responder_texto("Tu pedido sale mañana por la tarde.")
    [id_llamada] = servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-7"}))
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    enlazado = modelo.bind_tools([consultar_pedido, reembolsar])

    texto = None
    for trozo in enlazado.stream([HumanMessage("¿cuándo llega?")], stream_usage=True):
        texto = trozo if texto is None else texto + trozo
    llamada = None
    for trozo in enlazado.stream([HumanMessage("¿y el P-7?")], extra_headers={"X-Tienda": "T1"},
                                 extra_body={"user": "cliente-7"}):
        llamada = trozo if llamada is None else llamada + trozo

    assert construidos == []
    # La petición es la de create(): clave, cabeceras y cuerpo extra incluidos.
    segunda = servidor.peticiones[1]
    cabeceras = {k.lower(): v for k, v in segunda.cabeceras.items()}
    assert cabeceras["authorization"] == "Bearer sin-clave"
    assert cabeceras["x-tienda"] == "T1"
    assert segunda.cuerpo["user"] == "cliente-7" and segunda.cuerpo["stream"] is True
    assert "extra_headers" not in segunda.cuerpo and "extra_body" not in segunda.cuerpo
    assert texto.content == "Tu pedido sale mañana por la tarde."
    assert texto.usage_metadata["total_tokens"] == 15
    assert texto.response_metadata["finish_reason"] == "stop"
    assert llamada.tool_calls == [{"name": "consultar_pedido", "args": {"pedido": "P-7"},
                                   "id": id_llamada, "type": "tool_call"}]


def test_en_streaming_asincrono_los_trozos_tampoco_se_construyen(servidor, monkeypatch):
    import asyncio

    from openai.types.chat import ChatCompletionChunk

    def prohibido(cls, *args, **kwargs):
        raise AssertionError("ChatCompletionChunk construido")

    monkeypatch.setattr(ChatCompletionChunk, "construct", classmethod(prohibido))
    servidor.responder_texto("Ya está en reparto.")
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)

    async def leer() -> str:
        return "".join([t.content async for t in modelo.astream([HumanMessage("¿y mi pedido?")])])

    assert asyncio.run(leer()) == "Ya está en reparto."


def test_tras_un_streaming_la_conexion_vuelve_al_pool(monkeypatch):
    """openai/openai-python#3440: sin leer el terminador tras ``[DONE]``, cada llamada en
    streaming abría una conexión nueva (con un proveedor real, un apretón TLS más)."""
    import socket

    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnHilo

    abiertas = []
    crear = socket.create_connection

    def contar(*args, **kwargs):
        abiertas.append(args[0])
        return crear(*args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", contar)
    with ProveedorEnHilo(Latencia(primer_token=0.0, tokens_por_segundo=1000.0)) as proveedor:
        modelo = crear_modelo("openai:prueba", base_url=proveedor.url, sin_reintentos=True)
        textos = ["".join(t.content for t in modelo.stream([HumanMessage("hola")])) for _ in range(4)]
    assert all(textos) and len(set(textos)) == 1
    assert len(abiertas) == 1


def _trozo(delta, fin=None, **extra):
    return {"id": "c-1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": fin}], **extra}


def _fragmento(indice, argumentos):
    return _trozo({"tool_calls": [{"index": indice, "function": {"arguments": argumentos}}]})


def _inicio(indice, nombre):
    return _trozo({"tool_calls": [{"index": indice, "id": f"call_{indice}", "type": "function",
                                   "function": {"name": nombre, "arguments": ""}}]})


def test_los_fragmentos_de_argumentos_de_una_llamada_se_juntan_y_lo_demas_pasa_tal_cual():
    recibidos = [
        _trozo({"role": "assistant", "content": ""}),
        _trozo({"content": "Lo "}), _trozo({"content": "miro."}),
        _inicio(0, "consultar_pedido"), _fragmento(0, '{"pedido"'), _fragmento(0, ': "P-7"}'),
        _inicio(1, "reembolsar"), _fragmento(1, '{"importe": '), _fragmento(1, '"19.90"}'),
        _trozo({}, "tool_calls"),
        {"id": "c-1", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}},
    ]
    copia = json.loads(json.dumps(recibidos))
    salida = list(juntar_argumentos(iter(recibidos)))

    assert recibidos == copia  # los trozos recibidos no se tocan
    assert salida[:3] == recibidos[:3]  # el texto sigue saliendo trozo a trozo
    assert salida[5:] == recibidos[-2:]  # el fin y el uso, tal cual y en orden
    llamadas = [t["choices"][0]["delta"]["tool_calls"][0] for t in salida[3:5]]
    assert llamadas == [
        {"index": 0, "id": "call_0", "type": "function",
         "function": {"name": "consultar_pedido", "arguments": '{"pedido": "P-7"}'}},
        {"index": 1, "id": "call_1", "type": "function",
         "function": {"name": "reembolsar", "arguments": '{"importe": "19.90"}'}},
    ]


def test_un_fragmento_con_texto_o_fin_no_se_junta():
    # Un trozo que trae algo más que el fragmento (texto, fin) corta lo pendiente y pasa entero.
    con_texto = _trozo({"content": "y", "tool_calls": [{"index": 0, "function": {"arguments": "}"}}]})
    con_fin = _trozo({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}, "tool_calls")
    for raro in (con_texto, con_fin):
        recibidos = [_inicio(0, "consultar_pedido"), _fragmento(0, "{"), raro]
        salida = list(juntar_argumentos(iter(recibidos)))
        assert len(salida) == 2 and salida[1] is raro
        assert salida[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] == "{"


def test_en_streaming_langchain_recibe_cada_llamada_en_un_trozo_y_el_mensaje_no_cambia(servidor):
    """El servidor de prueba manda los argumentos de cada llamada en dos mitades: a LangChain
    le llega un trozo por llamada, y las llamadas que salen son las mismas."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Contar(BaseCallbackHandler):
        def __init__(self):
            self.trozos = []

        def on_llm_new_token(self, token, *, chunk=None, **kwargs):
            self.trozos.append(chunk)

    ids = servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-7"}),
                                      ("reembolsar", {"pedido": "P-7", "importe": "19.90", "motivo": "roto"}))
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    modelo.streaming = True
    contar = Contar()
    mensaje = modelo.bind_tools([consultar_pedido, reembolsar]).invoke(
        [HumanMessage("¿y el P-7?")], config={"callbacks": [contar]})

    con_llamada = [t for t in contar.trozos if t.message.tool_call_chunks]
    assert len(con_llamada) == 2  # sin juntar: 6 (el inicio y dos mitades por llamada)
    # Lo mismo por el cliente asíncrono.
    import asyncio

    otra = servidor.responder_llamadas(("consultar_pedido", {"pedido": "P-8"}))
    asincrono = Contar()
    leido = asyncio.run(modelo.bind_tools([consultar_pedido]).ainvoke(
        [HumanMessage("¿y el P-8?")], config={"callbacks": [asincrono]}))
    assert len([t for t in asincrono.trozos if t.message.tool_call_chunks]) == 1
    assert leido.tool_calls[0]["args"] == {"pedido": "P-8"} and leido.tool_calls[0]["id"] == otra[0]
    assert mensaje.tool_calls == [
        {"name": "consultar_pedido", "args": {"pedido": "P-7"}, "id": ids[0], "type": "tool_call"},
        {"name": "reembolsar", "args": {"pedido": "P-7", "importe": "19.90", "motivo": "roto"},
         "id": ids[1], "type": "tool_call"},
    ]


def test_en_streaming_un_error_http_del_proveedor_sale_como_el_del_sdk(servidor):
    servidor.responder_error(500)
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    with pytest.raises(openai.InternalServerError):
        list(modelo.stream([HumanMessage("hola")]))
    assert len(servidor.peticiones) == 1


def test_sin_reintentos_un_error_del_proveedor_hace_una_sola_peticion(servidor):
    servidor.responder_error(500)
    servidor.responder_texto("no debería pedirse")
    modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
    with pytest.raises(openai.InternalServerError):
        modelo.invoke([HumanMessage("hola")])
    assert len(servidor.peticiones) == 1
    assert servidor.pendientes == 1


def test_servidor_sin_guion_responde_error():
    with ServidorOpenAI() as servidor:
        modelo = crear_modelo("openai:prueba", base_url=servidor.base_url, sin_reintentos=True)
        with pytest.raises(openai.InternalServerError, match="no tiene más respuestas"):
            modelo.invoke([HumanMessage("hola")])


# ------------------------------------------------------------------ con create_agent y firma


def _agente(base_url):
    return create_agent(
        crear_modelo("openai:prueba", base_url=base_url, sin_reintentos=True),
        tools=[consultar_pedido, reembolsar],
        middleware=[
            HumanInTheLoopMiddleware(
                {"reembolsar": {"allowed_decisions": ["approve", "edit", "reject"]}},
                edit_notice="Aviso: un encargado modificó esta operación antes de ejecutarla.",
            )
        ],
        checkpointer=InMemorySaver(),
    )


@pytest.mark.parametrize(
    ("decision", "en_la_respuesta"),
    [
        ({"type": "reject", "message": "Fuera de plazo"},
         "User rejected the tool call for `reembolsar` with reason: Fuera de plazo"),
        ({"type": "edit", "edited_action": {"name": "reembolsar", "args": {
            "pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"}}},
         '"importe": "90.00"'),
    ],
)
def test_tras_rechazo_o_edicion_el_proveedor_recibe_un_historial_valido(
    servidor, decision, en_la_respuesta
):
    [id_propuesta] = servidor.responder_llamadas(
        ("reembolsar", {"pedido": "P-20260917-0041", "importe": "120.00", "motivo": "gotea"})
    )
    servidor.responder_texto("Hecho.")
    agente = _agente(servidor.base_url)
    config = {"configurable": {"thread_id": "t"}}
    salida = agente.invoke({"messages": [HumanMessage("devuelve la cafetera")]}, config, version="v2")
    assert salida.interrupts
    salida = agente.invoke(Command(resume={"decisions": [decision]}), config, version="v2")
    assert salida.value["messages"][-1].content == "Hecho."

    segunda = servidor.peticiones[1]
    assert segunda.llamadas_sin_respuesta() == []
    assert segunda.respuestas_huerfanas() == []
    [respuesta] = [m for m in segunda.mensajes if m.get("role") == "tool"]
    assert respuesta["tool_call_id"] == id_propuesta
    assert en_la_respuesta in respuesta["content"]
