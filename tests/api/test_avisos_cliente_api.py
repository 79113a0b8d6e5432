"""Por HTTP: el enlace de un aviso solo abre su conversación; la baja; y el flujo SSE abierto
cuenta como chat conectado (su presencia se borra al cerrarse)."""

from __future__ import annotations

import threading
import time

import httpx

from agente.web.app import crear_app
from nucleo.enlaces import token_de_baja, token_de_conversacion
from tests.apoyo.web_util import (
    SECRETO,
    abrir_conversacion,
    ajustes_web,
    cab,
    conversacion_en_pausa,
    servidor_en_hilo,
    sql,
    token,
)


def _enlace(cliente: str, hilo: str, tienda: str = "talavera", horas: float = 24) -> str:
    return token_de_conversacion(SECRETO, cliente_id=cliente, tienda=tienda, hilo=hilo, horas=horas)


def test_el_enlace_del_aviso_abre_su_conversacion_y_ninguna_otra_ruta(http, tok):
    hilo = conversacion_en_pausa(http, tok, "C-0001")
    otro = abrir_conversacion(http, tok, "C-0001")
    enlace = cab(_enlace("C-0001", hilo))
    r = http.get(f"/api/conversaciones/{hilo}", headers=enlace)
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "esperando_aprobacion"
    # La misma persona, pero otra conversación, sus pedidos, su lista o una nueva: 403.
    for metodo, ruta in [("get", f"/api/conversaciones/{otro}"), ("get", "/api/pedidos"),
                         ("get", "/api/conversaciones"), ("post", "/api/conversaciones")]:
        r = http.request(metodo.upper(), ruta, headers=enlace)
        assert r.status_code == 403, (ruta, r.text)
        assert "solo abre la conversación del aviso" in r.json()["detalle"]
    assert http.get(f"/api/conversaciones/{otro}/eventos", headers=enlace).status_code == 403
    # Un enlace a la conversación de otro cliente no la abre (el hilo no es suyo).
    assert http.get(f"/api/conversaciones/{hilo}", headers=cab(_enlace("C-0002", hilo))).status_code == 403


def test_el_enlace_caducado_ya_no_entra(http, tok):
    hilo = conversacion_en_pausa(http, tok, "C-0001")
    caducado = token_de_conversacion(SECRETO, cliente_id="C-0001", tienda="talavera", hilo=hilo, horas=-1)
    r = http.get(f"/api/conversaciones/{hilo}", headers=cab(caducado))
    assert r.status_code == 401


def test_la_baja_con_el_enlace_del_correo_y_nada_mas(http, ajustes):
    baja = token_de_baja(SECRETO, cliente_id="C-0001")
    r = http.post("/api/avisos-cliente/baja", json={"token": baja})
    assert r.status_code == 200, r.text
    assert r.json()["baja"] is True
    assert sql(ajustes.database_url, "SELECT avisos_baja IS NOT NULL AS b FROM clientes WHERE id = 'C-0001'")[0]["b"]
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM clientes WHERE avisos_baja IS NOT NULL")[0]["n"] == 1
    assert http.post("/api/avisos-cliente/baja", json={"token": baja}).status_code == 200  # repetir no cambia nada
    assert http.post("/api/avisos-cliente/baja", json={"token": "no-vale"}).status_code == 401
    otro_secreto = token_de_baja("x" * 64, cliente_id="C-0002")
    assert http.post("/api/avisos-cliente/baja", json={"token": otro_secreto}).status_code == 401
    # El token de baja no es una sesión.
    assert http.get("/api/pedidos", headers=cab(baja)).status_code == 401
    assert "Darme de baja" in http.get("/avisos").text


def test_el_flujo_sse_abierto_cuenta_como_chat_conectado_y_al_cerrarse_deja_de_contar(bd_url):
    ajustes = ajustes_web(bd_url, intervalo_tareas=0)

    with servidor_en_hilo(crear_app(ajustes)) as base, httpx.Client(base_url=base, timeout=30) as http:
        hilo = http.post("/api/conversaciones", headers=cab(token(ajustes, "C-0001"))).json()["thread_id"]
        presencias = lambda: sql(bd_url, "SELECT cliente_id, thread_id FROM presencia_chat")  # noqa: E731
        abierto, cerrar = threading.Event(), threading.Event()

        def escuchar():
            with httpx.stream("GET", f"{base}/api/conversaciones/{hilo}/eventos",
                              headers=cab(token(ajustes, "C-0001")), timeout=30) as r:
                assert r.status_code == 200
                abierto.set()
                cerrar.wait(30)

        hilo_sse = threading.Thread(target=escuchar, daemon=True)
        hilo_sse.start()
        assert abierto.wait(20)
        fin = time.monotonic() + 10
        while not presencias() and time.monotonic() < fin:
            time.sleep(0.05)
        assert presencias() == [{"cliente_id": "C-0001", "thread_id": hilo}]
        cerrar.set()
        hilo_sse.join(10)
        fin = time.monotonic() + 10
        while presencias() and time.monotonic() < fin:
            time.sleep(0.05)
        assert presencias() == []
