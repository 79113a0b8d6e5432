"""El protocolo de LangGraph (``/langgraph``) con el SDK oficial de Python, síncrono y
asíncrono, contra el servidor de verdad (uvicorn en un hilo): la conversación del cliente
hasta la pausa, quien firma la encuentra y la reanuda, y el flujo del cliente ve el
desenlace; las firmas escalonadas; y lo que el producto no admite, rechazado por el SDK."""

from __future__ import annotations

import asyncio
import os
import queue
import subprocess
import sys
import threading
from decimal import Decimal

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client

from agente.web.app import crear_app
from agente.web.entrada.auth import emitir_token
from tests.apoyo.firmas import PEDIDO_650, TIENDA_DE
from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import DEVOLVER_CAFETERA, servidor_en_hilo, sql

EDITAR_A_90 = {"type": "edit", "edited_action": {
    "name": "reembolsar", "args": {"pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"}}}


@pytest.fixture
def base(ajustes):
    with servidor_en_hilo(crear_app(ajustes)) as url:
        yield f"{url}/langgraph"


def _tok(ajustes, sujeto: str) -> str:
    """El token de un cliente (``C-*``) o de un firmante de cualquier rol, de su tienda."""
    rol = "cliente" if sujeto.startswith("C-") else "encargado"
    return emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=TIENDA_DE[sujeto])


def _sync(base, ajustes, sujeto):
    return get_sync_client(url=base, api_key=_tok(ajustes, sujeto))


def _reembolsos(url: str) -> list[Decimal]:
    return [f["importe"] for f in sql(url, "SELECT importe FROM reembolsos ORDER BY id")]


def _rechazo(llamada) -> tuple[int, str]:
    """El código y el ``detail`` del error con el que el SDK rechaza ``llamada`` (sus errores
    tipados y los de ``runs.wait``, que deja el de httpx: todos son ``HTTPStatusError``)."""
    with pytest.raises(httpx.HTTPStatusError) as exc:
        llamada()
    respuesta = exc.value.response
    return respuesta.status_code, respuesta.json()["detail"]


def _seguir_hilo(cliente, thread_id: str, hasta: str) -> queue.Queue:
    """El flujo del hilo (``threads.join_stream``) en un hilo de fondo: deja en la cola los
    ``values`` hasta que un mensaje contiene ``hasta``."""
    salida: queue.Queue = queue.Queue()

    def seguir():
        try:
            for parte in cliente.threads.join_stream(thread_id):
                salida.put(parte)
                if parte.event == "values" and any(hasta in m["content"] for m in parte.data["messages"]):
                    return
        except Exception as exc:  # la prueba lo verá en la cola
            salida.put(exc)

    threading.Thread(target=seguir, daemon=True).start()
    return salida


def test_el_sdk_lleva_al_cliente_a_la_pausa_y_quien_firma_la_reanuda_con_una_edicion(base, ajustes):
    cliente = _sync(base, ajustes, "C-0001")
    assert cliente.assistants.search(graph_id="agente")[0]["graph_id"] == "agente"
    hilo = cliente.threads.create()
    partes = list(cliente.runs.stream(
        hilo["thread_id"], "agente", input={"messages": [{"role": "user", "content": DEVOLVER_CAFETERA}]},
        stream_mode=["values", "updates", "messages-tuple"]))
    tipos = [p.event for p in partes]
    assert tipos[0] == "metadata" and {"messages", "updates", "values"} <= set(tipos), tipos
    run_id = partes[0].data["run_id"]
    final = [p.data for p in partes if p.event == "values"][-1]
    assert [m["type"] for m in final["messages"]] == ["human", "ai"]
    assert "encargado" in final["messages"][-1]["content"]
    assert "__interrupt__" not in final  # la petición de firma no es para el cliente
    tupla = next(p.data for p in partes if p.event == "messages")
    assert tupla[0]["type"] == "ai" and tupla[1]["run_id"] == run_id
    assert cliente.runs.get(hilo["thread_id"], run_id)["status"] == "interrupted"
    assert cliente.threads.get(hilo["thread_id"])["status"] == "interrupted"
    vistos = _seguir_hilo(cliente, hilo["thread_id"], "90,00 EUR")

    async def firmar():
        encargado = get_client(url=base, headers={"Authorization": f"Bearer {_tok(ajustes, 'enc-talavera')}"})
        pendientes = await encargado.threads.search(status="interrupted")
        assert [h["thread_id"] for h in pendientes] == [hilo["thread_id"]]
        (interrupciones,) = pendientes[0]["interrupts"].values()
        peticion = interrupciones[0]["value"]
        assert peticion["action_requests"][0]["name"] == "reembolsar"
        assert peticion["review_configs"][0]["action_name"] == "reembolsar"
        estado = await encargado.threads.get_state(hilo["thread_id"])
        assert estado["interrupts"] == interrupciones and estado["next"]
        return await encargado.runs.wait(hilo["thread_id"], "agente", command={
            "resume": {interrupciones[0]["id"]: {"decisions": [EDITAR_A_90]}}})

    valores = asyncio.run(firmar())
    assert "__interrupt__" not in valores and "90,00 EUR" in valores["messages"][-1]["content"]
    assert _reembolsos(ajustes.database_url) == [Decimal("90.00")]
    # El flujo del cliente, abierto antes de la firma, ve el desenlace.
    ultimo = None
    while ultimo is None or not any("90,00 EUR" in m["content"] for m in ultimo["messages"]):
        parte = vistos.get(timeout=30)
        assert not isinstance(parte, Exception), parte
        ultimo = parte.data
    assert cliente.threads.get(hilo["thread_id"])["status"] == "idle"
    assert cliente.runs.join(hilo["thread_id"], run_id)["messages"][-1]["content"] == ultimo["messages"][-1]["content"]


def test_650_por_el_sdk_una_firma_de_encargado_espera_y_la_del_gerente_aplica_una_vez(base, ajustes):
    cliente = _sync(base, ajustes, "C-0006")
    hilo = cliente.threads.create()["thread_id"]
    cliente.runs.wait(hilo, "agente", input={"messages": [
        {"role": "human", "content": f"Quiero devolver el pedido {PEDIDO_650} porque llegó roto"}]})
    aprobar = {"resume": {"decisions": [{"type": "approve"}]}}
    codigo, detalle = _rechazo(lambda: cliente.runs.wait(hilo, "agente", command=aprobar))
    assert codigo == 403 and "firmar" in detalle

    encargado = _sync(base, ajustes, "enc-talavera")
    partes = list(encargado.runs.stream(hilo, "agente", command=aprobar, stream_mode="values"))
    valores = partes[-1].data
    assert valores["__firmas__"] == {"estado": "esperando_firmas", "firmas": 1, "firmas_necesarias": 2}
    assert valores["__interrupt__"], valores
    assert encargado.threads.get(hilo)["status"] == "interrupted"
    assert encargado.runs.get(hilo, partes[0].data["run_id"])["status"] == "interrupted"
    # La misma persona no firma dos veces.
    assert _rechazo(lambda: encargado.runs.wait(hilo, "agente", command=aprobar))[0] == 409
    assert _reembolsos(ajustes.database_url) == []

    gerente = _sync(base, ajustes, "ger-talavera")
    valores = gerente.runs.wait(hilo, "agente", command=aprobar)
    assert "__interrupt__" not in valores and "650,00 EUR" in valores["messages"][-1]["content"]
    # Ya no queda nada que firmar: se aplicó una vez.
    assert _rechazo(lambda: gerente.runs.wait(hilo, "agente", command=aprobar))[0] == 404
    assert _reembolsos(ajustes.database_url) == [Decimal("650.00")]
    firmas = sql(ajustes.database_url, "SELECT encargado_id, canal FROM firmas_aprobacion ORDER BY id")
    assert [(f["encargado_id"], f["canal"]) for f in firmas] == [("enc-talavera", "protocolo"), ("ger-talavera", "protocolo")]
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 1
    auditoria = subprocess.run(
        [sys.executable, "-m", "agente.cli", "auditoria"], cwd=RAIZ, capture_output=True, text=True,
        env={**os.environ, "DATABASE_URL": ajustes.database_url, "AGENTE_MODELO": "offline"}, timeout=120)
    assert auditoria.returncode == 0, auditoria.stdout + auditoria.stderr


def test_el_mensaje_de_la_tienda_sale_en_la_transcripcion_del_sdk_en_su_orden(base, ajustes):
    """«Escribir al cliente» con la pausa pendiente: el SDK lo ve como un ``ai`` más, con el
    nombre de quien firma, en el estado, la historia y el flujo del hilo; la aprobación sigue
    igual y, al firmarla, la respuesta final va detrás."""
    cliente = _sync(base, ajustes, "C-0001")
    hilo = cliente.threads.create()["thread_id"]
    cliente.runs.wait(hilo, "agente", input={"messages": [{"role": "user", "content": DEVOLVER_CAFETERA}]})
    texto = "Hola Ana, soy Marta, la gerente: reviso tu cafetera esta tarde."
    vistos = _seguir_hilo(cliente, hilo, texto)
    app = base.removesuffix("/langgraph")
    r = httpx.post(f"{app}/api/personal/conversaciones/{hilo}/mensajes", json={"texto": texto},
                   headers={"Authorization": f"Bearer {_tok(ajustes, 'ger-talavera')}"})
    assert r.status_code == 201, r.text

    de_la_tienda = {"rol": "tienda", "autor": "Marta Jiménez"}
    mensajes = cliente.threads.get_state(hilo)["values"]["messages"]
    assert [(m["type"], m["name"], m["additional_kwargs"]) for m in mensajes] == [
        ("human", None, {}), ("ai", None, {}), ("ai", "Marta Jiménez", de_la_tienda)]
    assert mensajes[-1]["content"] == texto and mensajes[-1]["id"] == f"m-{r.json()['id']}"
    assert cliente.threads.get_history(hilo)[0]["values"]["messages"] == mensajes
    assert cliente.threads.get(hilo)["values"]["messages"] == mensajes
    parte = vistos.get(timeout=30)  # el flujo del hilo, abierto antes, lo ve llegar
    while not isinstance(parte, Exception) and not any(m["content"] == texto for m in parte.data["messages"]):
        parte = vistos.get(timeout=30)
    assert not isinstance(parte, Exception), parte
    assert parte.data["messages"] == mensajes
    # La aprobación no cambió: quien firma la reanuda y la respuesta va detrás.
    encargado = _sync(base, ajustes, "enc-talavera")
    assert encargado.threads.get(hilo)["status"] == "interrupted"
    valores = encargado.runs.wait(hilo, "agente", command={"resume": {"decisions": [{"type": "approve"}]}})
    assert "__interrupt__" not in valores
    assert [m["additional_kwargs"].get("rol") for m in valores["messages"]] == [None, None, "tienda", None]
    assert "120,00 EUR" in valores["messages"][-1]["content"]
    assert _reembolsos(ajustes.database_url) == [Decimal("120.00")]


def test_lo_que_el_producto_no_admite_lo_rechaza_el_sdk_con_un_detail_en_espanol(base, ajustes):
    cliente = _sync(base, ajustes, "C-0001")
    hilo = cliente.threads.create()["thread_id"]
    cliente.runs.wait(hilo, "agente", input={"messages": [{"role": "user", "content": DEVOLVER_CAFETERA}]})
    encargado = _sync(base, ajustes, "enc-talavera")
    rechazos = {
        "update_state": lambda: encargado.threads.update_state(hilo, {"messages": []}),
        "as_node": lambda: encargado.threads.update_state(hilo, {"messages": []}, as_node="tools"),
        "bifurcar": lambda: encargado.runs.wait(hilo, "agente", command={"resume": {"decisions": [
            {"type": "approve"}]}}, checkpoint_id="1ef0"),
        "interrupt_before": lambda: cliente.runs.wait(hilo, "agente", input={"messages": [
            {"role": "user", "content": "hola"}]}, interrupt_before="*"),
        "goto": lambda: encargado.runs.wait(hilo, "agente", command={"goto": "tools"}),
        "reanudar como cliente": lambda: cliente.runs.wait(hilo, "agente", command={
            "resume": {"decisions": [{"type": "approve"}]}}),
        "firmante que escribe": lambda: encargado.runs.wait(hilo, "agente", input={"messages": [
            {"role": "user", "content": "aprobado"}]}),
        "otro cliente": lambda: _sync(base, ajustes, "C-0003").threads.get(hilo),
        "otra tienda": lambda: _sync(base, ajustes, "enc-madrid-centro").threads.get_state(hilo),
    }
    detalles = {nombre: _rechazo(llamada) for nombre, llamada in rechazos.items()}
    assert {nombre: codigo for nombre, (codigo, _) in detalles.items()} == dict.fromkeys(rechazos, 403)
    assert "a mano" in detalles["update_state"][1] and "as_node" in detalles["as_node"][1]
    assert "checkpoint pasado" in detalles["bifurcar"][1]
    assert "no es tuya" in detalles["otro cliente"][1] and "otra tienda" in detalles["otra tienda"][1]
    # Un mensaje mientras espera firmas: un turno de cliente con sus reglas (se guarda, 409).
    codigo, detalle = _rechazo(lambda: cliente.runs.wait(
        hilo, "agente", input={"messages": [{"role": "user", "content": "¿Cómo va?"}]}))
    assert codigo == 409 and "encargado" in detalle
    retenidos = sql(ajustes.database_url, "SELECT texto FROM mensajes_conversacion WHERE retenido")
    assert [f["texto"] for f in retenidos] == ["¿Cómo va?"]
    assert cliente.threads.get(hilo)["status"] == "interrupted"
    assert _reembolsos(ajustes.database_url) == []
    assert cliente.threads.search(status="interrupted")[0]["interrupts"] == {}
    # Cada cual ve lo suyo: otro cliente no ve este hilo; otra tienda no lo ve en su bandeja.
    assert hilo not in [h["thread_id"] for h in _sync(base, ajustes, "C-0003").threads.search(limit=100)]
    assert _sync(base, ajustes, "enc-madrid-centro").threads.search(status="interrupted") == []
    assert [h["thread_id"] for h in encargado.threads.search(status="interrupted")] == [hilo]
    # Las ejecuciones quedan guardadas; ninguna se cancela (acabada, o moviendo dinero).
    runs = cliente.runs.list(hilo)
    assert [r["status"] for r in runs] == ["error", "interrupted"]  # el retenido, y el turno
    codigo, detalle = _rechazo(lambda: cliente.runs.cancel(hilo, runs[-1]["run_id"]))
    assert codigo == 409 and "cancelar" in detalle
    assert len(cliente.threads.get_history(hilo)) == 1  # solo el estado actual
    assert _rechazo(lambda: cliente.threads.get("h-no-existe"))[0] == 404
    assert _rechazo(lambda: get_sync_client(url=base, api_key="no-es-un-token").threads.search())[0] == 401
