"""Logs JSON para el operador: una línea por petición con sus ids, una por decisión y por
movimiento de la pasarela; sin datos personales; nivel con AGENTE_LOG_NIVEL."""

from __future__ import annotations

import io
import json
import logging

import httpx
import pytest
from fastapi.testclient import TestClient

from agente.demo.catalogo import CLIENTES
from agente.web.app import crear_app
from nucleo.registro_log import FormatoJson, anotar, contexto_registro, evento
from tests.apoyo.web_util import (
    DEVOLVER_BATIDORA,
    DEVOLVER_CAFETERA,
    ServidorEnProceso,
    ajustes_web,
    cab,
    token,
)

MOTIVO_RECHAZO = "Lo siento, Ana: la garantía no cubre golpes"


@pytest.fixture
def lineas():
    """Las líneas JSON que escribe el proceso mientras dura la prueba."""
    salida = io.StringIO()
    manejador = logging.StreamHandler(salida)
    manejador.setFormatter(FormatoJson())
    raiz = logging.getLogger()
    nivel = raiz.level
    raiz.addHandler(manejador)
    raiz.setLevel(logging.INFO)
    try:
        yield lambda: [json.loads(linea) for linea in salida.getvalue().splitlines()]
    finally:
        raiz.removeHandler(manejador)
        raiz.setLevel(nivel)


def test_una_linea_json_con_el_contexto_y_los_campos_del_evento(lineas):
    registro = logging.getLogger("agente.prueba")
    with contexto_registro() as datos:
        anotar(thread_id="h-1", trace_id=None)
        evento(registro, "algo", importe="1.50", n=2)
    evento(registro, "fuera")
    dentro, fuera = lineas()
    assert dentro["evento"] == "algo" and dentro["nivel"] == "INFO" and dentro["origen"] == "agente.prueba"
    assert (dentro["thread_id"], dentro["importe"], dentro["n"]) == ("h-1", "1.50", 2)
    assert "trace_id" not in dentro  # los None no se anotan
    assert dentro["peticion_id"] == datos["peticion_id"] and dentro["momento"].endswith("+00:00")
    assert "thread_id" not in fuera and "peticion_id" not in fuera


def test_peticiones_decisiones_y_pasarela_dejan_su_linea_sin_datos_personales(bd_url, lineas):
    ajustes = ajustes_web(bd_url)
    with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
        cliente, encargado = cab(token(ajustes, "C-0001")), cab(token(ajustes, "enc-talavera"))
        hilo = http.post("/api/conversaciones", headers=cliente).json()["thread_id"]
        turno = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA}, headers=cliente)
        assert turno.json()["estado"] == "esperando_aprobacion"
        assert http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                         headers=encargado).status_code == 200
        # Otra conversación, rechazada con un motivo que menciona a la clienta por su nombre.
        otra_clienta = cab(token(ajustes, "C-0005"))
        otro = http.post("/api/conversaciones", headers=otra_clienta).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{otro}/mensajes", json={"texto": DEVOLVER_BATIDORA}, headers=otra_clienta)
        assert r.json()["estado"] == "esperando_aprobacion"
        assert http.post(f"/api/aprobaciones/{otro}/decision", headers=encargado,
                         json={"decisiones": [{"type": "reject", "message": MOTIVO_RECHAZO}]}).status_code == 200
        assert http.get(f"/api/conversaciones/{hilo}", headers=cliente).status_code == 200
    registros = lineas()
    peticiones = [r for r in registros if r.get("evento") == "peticion"]
    (mensaje,) = [p for p in peticiones if p["ruta"] == "/api/conversaciones/{thread_id}/mensajes"
                  and p["thread_id"] == hilo]
    assert mensaje["metodo"] == "POST" and mensaje["estado"] == 200 and mensaje["duracion_ms"] > 0
    assert len(mensaje["trace_id"]) == 32  # el del turno: el mismo que guarda la cola
    (decision_http,) = [p for p in peticiones if p["ruta"] == "/api/aprobaciones/{thread_id}/decision"
                        and p["thread_id"] == hilo]
    assert decision_http["trace_id"] == mensaje["trace_id"]  # la decisión sigue la misma traza
    assert any(p["ruta"] == "/api/conversaciones" and p["estado"] == 201 for p in peticiones)

    decisiones = [r for r in registros if r.get("evento") == "decision"]
    assert [(d["thread_id"], d["tipos"], d["encargado_id"]) for d in decisiones] == [
        (hilo, ["approve"], "enc-talavera"), (otro, ["reject"], "enc-talavera")]
    assert decisiones[0]["trace_id"] == mensaje["trace_id"] and decisiones[0]["espera_segundos"] >= 0
    aplicadas = [r for r in registros if r.get("evento") == "decision_aplicada"]
    assert {a["thread_id"] for a in aplicadas} == {hilo, otro}
    (movimiento,) = [r for r in registros if r.get("evento") == "movimiento_pasarela"]
    assert movimiento["importe"] == "120.00" and movimiento["nuevo"] is True
    assert movimiento["thread_id"] == hilo and movimiento["trace_id"] == mensaje["trace_id"]

    texto = json.dumps(registros, ensure_ascii=False)
    personales = [dato for c, _, nombre, email, tel in CLIENTES if c in ("C-0001", "C-0005")
                  for dato in (nombre, email, tel)]
    for personal in (DEVOLVER_CAFETERA, DEVOLVER_BATIDORA, "gotea", MOTIVO_RECHAZO, "testclient", *personales):
        assert personal not in texto, personal


@pytest.mark.lento
@pytest.mark.parametrize(("nivel", "con_peticiones"), [("INFO", True), ("warning", False)])
def test_el_servidor_escribe_json_por_linea_al_nivel_de_agente_log_nivel(bd_url, nivel, con_peticiones):
    ajustes = ajustes_web(bd_url)
    with ServidorEnProceso(bd_url, AGENTE_LOG_NIVEL=nivel) as servidor:
        base = servidor.esperar()
        hilo = httpx.post(f"{base}/api/conversaciones", headers=cab(token(ajustes, "C-0004"))).json()["thread_id"]
        assert httpx.get(f"{base}/api/conversaciones/{hilo}", headers=cab(token(ajustes, "C-0003"))).status_code == 403
        servidor.proceso.terminate()
        servidor.proceso.wait(timeout=30)
        with open(servidor.log.name, encoding="utf-8") as log:
            salida = log.read().splitlines()
    registros = [json.loads(linea) for linea in salida if not linea.startswith("Sirviendo en ")]
    assert registros == [] or all({"momento", "nivel", "origen", "mensaje"} <= set(r) for r in registros)
    peticiones = [r for r in registros if r.get("evento") == "peticion"]
    if con_peticiones:
        assert {(p["ruta"], p["estado"]) for p in peticiones} >= {
            ("/api/conversaciones", 201), ("/api/conversaciones/{thread_id}", 403)}
        assert any(r["origen"].startswith("uvicorn") for r in registros)  # uvicorn también en JSON
        assert not any("127.0.0.1" in json.dumps(r) for r in peticiones)  # sin IP del cliente
    else:
        assert peticiones == [] and all(r["nivel"] in ("WARNING", "ERROR") for r in registros)
