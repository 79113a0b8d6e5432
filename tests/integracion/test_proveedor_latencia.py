"""El proveedor con latencia (``tests/apoyo/proveedor_latencia.py``, también del bench): se comporta como un LLM.

Con el cliente real ``langchain-openai``: decide con las reglas del producto, responde con
``tool_calls`` o texto, emite tokens espaciados en streaming, espera lo configurado y
atiende cientos de flujos a la vez. Y el producto entero funciona contra él.
"""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from agente.modelos import crear_modelo
from agente.servicio.fabrica import crear_servicio
from tests.apoyo.fabricas import PEDIDO_GRANDE, PEDIDO_PEQUENO, ajustes_prueba, conversacion, uno
from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnHilo, ProveedorEnProceso, trozos

RAPIDA = Latencia(primer_token=0.01, tokens_por_segundo=2000)


def _chat(url: str, **kw) -> ChatOpenAI:
    return ChatOpenAI(model="latencia", base_url=url, api_key="sk-test", max_retries=0, **kw)


def test_el_producto_consulta_reembolsa_y_pausa_contra_el_proveedor(bd_url, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ProveedorEnHilo(RAPIDA) as proveedor:
        modelo = crear_modelo("openai:latencia", base_url=proveedor.url, sin_reintentos=True)
        servicio = crear_servicio(ajustes_prueba(bd_url), url=bd_url, modelo=modelo, pausa_reintentos=0.01)
        try:
            _, consulta = conversacion(servicio, "C-0002", f"¿Dónde está mi pedido {PEDIDO_PEQUENO}? [ref m1]")
            hilo, pausa = conversacion(
                servicio, "C-0001", f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea [ref m2]"
            )
            final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
        finally:
            servicio.cerrar()
        marcas = [m for m, _, _ in proveedor.registro.peticiones]
    assert consulta.estado == "respondida" and PEDIDO_PEQUENO in consulta.mensaje_cliente
    assert pausa.estado == "esperando_aprobacion"
    assert "RE-" in final.mensaje_cliente
    assert uno(bd_url, "SELECT importe FROM reembolsos WHERE pedido_id = %(p)s", {"p": PEDIDO_GRANDE}) == 120
    # consulta: pedido + respuesta; reembolso: pedido + reembolso (pausa) + respuesta tras aprobar
    assert marcas.count("m1") == 2 and marcas.count("m2") == 3
    assert proveedor.registro.errores == 0


def test_el_streaming_espera_el_primer_token_y_espacia_los_siguientes():
    latencia = Latencia(primer_token=0.3, tokens_por_segundo=50)
    with ProveedorEnHilo(latencia) as proveedor:
        inicio = time.perf_counter()
        llegadas, texto = [], ""
        for trozo in _chat(proveedor.url).stream([HumanMessage("hola")]):
            if trozo.content:
                llegadas.append(time.perf_counter() - inicio)
                texto += trozo.content
    n = len(trozos(texto))
    assert n > 20
    assert llegadas[0] >= 0.3
    # n tokens a 50/s: al menos (n - 1) / 50 s entre el primero y el último
    assert llegadas[-1] - llegadas[0] >= 0.9 * (n - 1) / 50


def test_sin_streaming_responde_de_golpe_tras_la_generacion_entera_con_llamadas():
    latencia = Latencia(primer_token=0.2, tokens_por_segundo=20)
    with ProveedorEnHilo(latencia) as proveedor:
        from langchain_core.tools import tool

        @tool
        def consultar_pedido(pedido: str) -> str:
            """Consulta un pedido."""
            return pedido

        inicio = time.perf_counter()
        mensaje = _chat(proveedor.url).bind_tools([consultar_pedido]).invoke(
            [HumanMessage(f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?")]
        )
        segundos = time.perf_counter() - inicio
    [llamada] = mensaje.tool_calls
    assert llamada["name"] == "consultar_pedido" and llamada["args"] == {"pedido": PEDIDO_PEQUENO}
    tokens = 1 + len(trozos(f'{{"pedido": "{PEDIDO_PEQUENO}"}}'))
    assert segundos >= latencia.generacion(tokens) * 0.95


def test_atiende_doscientos_flujos_a_la_vez():
    latencia = Latencia(primer_token=0.5, tokens_por_segundo=100)

    async def muchos(url: str) -> list[int]:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=300)) as http:
            async def uno_(i: int) -> int:
                cuerpo = {"model": "x", "stream": True, "messages": [{"role": "user", "content": f"hola [ref f{i}]"}]}
                async with http.stream("POST", f"{url}/chat/completions", json=cuerpo, timeout=60) as r:
                    return sum([1 async for linea in r.aiter_lines() if linea.startswith("data:")])
            return await asyncio.gather(*[uno_(i) for i in range(200)])

    with ProveedorEnHilo(latencia) as proveedor:
        inicio = time.perf_counter()
        eventos = asyncio.run(muchos(proveedor.url))
        segundos = time.perf_counter() - inicio
        duraciones = [d for _, _, d in proveedor.registro.peticiones]
    assert len(duraciones) == 200 and all(e > 10 for e in eventos)
    # Uno solo tarda ~0,5 s + sus tokens; en serie serían 200 veces eso.
    assert segundos < 10 * max(duraciones)
    assert min(duraciones) >= 0.5


@pytest.mark.parametrize("cuerpo", [b"{no es json", b'{"messages": [{"role": "nadie"}]}'])
def test_una_peticion_mal_formada_es_un_400_y_el_servidor_sigue(cuerpo):
    with ProveedorEnHilo(RAPIDA) as proveedor:
        r = httpx.post(f"{proveedor.url}/chat/completions", content=cuerpo, timeout=10)
        despues = _chat(proveedor.url).invoke([HumanMessage("hola")])
        assert r.status_code == 400 and proveedor.registro.errores == 1
    assert despues.content


def test_la_latencia_se_cambia_en_marcha_sin_reiniciar_el_proceso():
    # bench.pares mide con el modelo instantáneo y después con 1,2 s contra los mismos servidores.
    def primer_token(url: str) -> float:
        inicio = time.perf_counter()
        for trozo in _chat(url).stream([HumanMessage("hola")]):
            if trozo.content:
                return time.perf_counter() - inicio
        raise AssertionError("sin texto")

    with ProveedorEnProceso(Latencia(primer_token=0.0, tokens_por_segundo=1e6)) as proveedor:
        primer_token(proveedor.url)  # la primera importa el modelo de reglas en el proveedor
        rapido = primer_token(proveedor.url)
        proveedor.fijar_latencia(Latencia(primer_token=1.5, tokens_por_segundo=1e6))
        lento = primer_token(proveedor.url)
    assert lento >= 1.5
    assert rapido < lento - 1.0
