"""El carácter nulo (U+0000) se rechaza en la puerta: 404 en un id, 422 en textos y query."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from agente.web.app import crear_app
from nucleo.errores import TextoNoValido
from nucleo.texto import contiene_nulo, rechazar_nulos
from tests.apoyo.web_util import DEVOLVER_CAFETERA, ajustes_web, cab, sql, token

NULO_422 = {"detalle": "el texto no puede contener el carácter nulo (\\u0000)"}


@pytest.fixture
def entorno(bd_url):
    ajustes = ajustes_web(bd_url)
    with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
        cliente = cab(token(ajustes, "C-0001"))
        hilo = http.post("/api/conversaciones", headers=cliente).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA}, headers=cliente)
        assert r.json()["estado"] == "esperando_aprobacion"
        yield http, hilo, cliente, cab(token(ajustes, "enc-talavera")), bd_url


IDS = ["/api/conversaciones/%00", "/api/conversaciones/h-%00x/eventos", "/api/aprobaciones/%00"]


@pytest.mark.parametrize("ruta", IDS)
def test_un_id_con_nulo_da_404(entorno, ruta, caplog):
    http, _, cliente, encargado, _ = entorno
    cabeceras = encargado if "aprobaciones" in ruta else cliente
    with caplog.at_level(logging.ERROR):
        r = http.get(ruta, headers=cabeceras)
    assert (r.status_code, r.json()) == (404, {"detalle": "no encontrado"})
    assert [m for m in caplog.messages] == []


def test_un_id_con_nulo_en_un_post_da_404(entorno):
    http, _, cliente, encargado, _ = entorno
    assert http.post("/api/conversaciones/%00/mensajes", json={"texto": "hola"}, headers=cliente).status_code == 404
    assert http.post("/api/aprobaciones/x%00/decision", json={"decisiones": [{"type": "approve"}]},
                     headers=encargado).status_code == 404


def test_un_mensaje_con_nulo_da_422_y_no_se_guarda(entorno, caplog):
    http, hilo, cliente, _, bd_url = entorno
    antes = sql(bd_url, "SELECT count(*) AS n FROM mensajes_conversacion")[0]["n"]
    with caplog.at_level(logging.ERROR):
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "hola\u0000"}, headers=cliente)
    assert (r.status_code, r.json()) == (422, NULO_422)
    assert sql(bd_url, "SELECT count(*) AS n FROM mensajes_conversacion")[0]["n"] == antes
    assert caplog.messages == []


DECISIONES_CON_NULO = {
    "motivo de rechazo": [{"type": "reject", "message": "no\u0000 procede"}],
    "arg editado": [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {
        "pedido": "P-20260917-0041", "importe": "90.00", "motivo": "got\u0000ea"}}}],
    "clave de un arg": [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {
        "pedido": "P-20260917-0041", "importe\u0000": "90.00"}}}],
    "nombre de la herramienta": [{"type": "edit", "edited_action": {"name": "reembolsar\u0000", "args": {}}}],
}


@pytest.mark.parametrize("decisiones", DECISIONES_CON_NULO.values(), ids=DECISIONES_CON_NULO.keys())
def test_una_decision_con_nulo_da_422_y_la_aprobacion_sigue_pendiente(entorno, decisiones):
    http, hilo, _, encargado, bd_url = entorno
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": decisiones}, headers=encargado)
    assert (r.status_code, r.json()) == (422, NULO_422)
    assert http.get(f"/api/aprobaciones/{hilo}", headers=encargado).json()["estado"] == "pendiente"
    assert sql(bd_url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 0


@pytest.mark.parametrize("query", ["tienda=%00", "tienda=tala%00vera", "limite=1%00"])
def test_un_parametro_de_query_con_nulo_da_422(entorno, query):
    http, _, _, encargado, _ = entorno
    r = http.get(f"/api/aprobaciones?{query}", headers=encargado)
    assert (r.status_code, r.json()) == (422, NULO_422)


def test_la_query_de_eventos_con_nulo_da_422(entorno):
    http, hilo, _, _, _ = entorno
    assert http.get(f"/api/conversaciones/{hilo}/eventos?desde=1%00").status_code == 422


def test_el_login_de_demo_con_nulo_da_422(entorno):
    http, *_ = entorno
    r = http.post("/api/demo/login", json={"rol": "cliente", "id": "C-0001\u0000"})
    assert (r.status_code, r.json()) == (422, NULO_422)


def test_una_barra_invertida_seguida_de_u0000_no_es_un_nulo_y_pasa(entorno):
    http, _, cliente, _, _ = entorno
    otro = http.post("/api/conversaciones", headers=cliente).json()["thread_id"]
    # En JSON "\\u0000" son seis caracteres normales (\, u, 0, 0, 0, 0): no es un nulo.
    r = http.post(f"/api/conversaciones/{otro}/mensajes", content=b'{"texto": "C:\\\\u0000 hola"}',
                  headers={**cliente, "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    assert http.get(f"/api/conversaciones/{otro}", headers=cliente).json()["mensajes"][0]["texto"] == "C:\\u0000 hola"


def test_el_validador_del_nucleo_mira_claves_y_valores_a_cualquier_profundidad():
    assert not contiene_nulo({"a": ["b", {"c": "d"}], "e": 1, "f": None})
    assert contiene_nulo({"a": ["b", {"c": "d\x00"}]})
    assert contiene_nulo({"a": [{"c\x00": "d"}]})
    assert contiene_nulo(("x", "\x00"))
    with pytest.raises(TextoNoValido, match="motivo: no puede contener el carácter nulo") as error:
        rechazar_nulos(["ok", "mal\x00"], campo="motivo")
    assert error.value.estado_http == 422
    rechazar_nulos("sin nulos")
