"""``/demo`` y ``docs/demo.md`` cuentan lo mismo (issue 43, punto 6): cada cliente al que la
tabla de la demo da un pedido tiene en ``/api/demo/identidades`` un escenario y una frase de
ejemplo; y la frase de C-0008 y de C-0011 hace lo que dice la tabla."""

from __future__ import annotations

import re

from tests.apoyo.rutas import RAIZ


def _clientes_con_caso() -> set[str]:
    tabla = (RAIZ / "docs" / "demo.md").read_text()
    return set(re.findall(r"^\| `P-\d{8}-\d{4}` \| (C-\d{4})", tabla, flags=re.M))


def test_cada_cliente_con_caso_en_la_documentacion_tiene_escenario_y_ejemplo(http):
    con_caso = _clientes_con_caso()
    assert {"C-0008", "C-0011"} <= con_caso
    clientes = {i["id"]: i for i in http.get("/api/demo/identidades").json() if i["rol"] == "cliente"}
    for cliente_id in sorted(con_caso):
        escenario, ejemplo = clientes[cliente_id]["escenario"], clientes[cliente_id]["ejemplo"]
        assert escenario and "Sin caso preparado" not in escenario, cliente_id
        assert ejemplo and re.search(r"P-\d{8}-\d{4}", ejemplo), cliente_id


def _ejemplo(http, como, cliente_id: str) -> dict:
    ejemplo = next(i["ejemplo"] for i in http.get("/api/demo/identidades").json() if i["id"] == cliente_id)
    hilo = http.post("/api/conversaciones", headers=como(cliente_id)).json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=como(cliente_id), json={"texto": ejemplo})
    assert r.status_code == 200, r.text
    return r.json()


def test_el_ejemplo_de_c0008_no_reenvia_unos_cuchillos_enviados_ayer(http, como):
    respuesta = _ejemplo(http, como, "C-0008")
    assert respuesta["estado"] == "respondida", respuesta
    pendientes = http.get("/api/aprobaciones", headers=como("enc-madrid-centro")).json()
    assert pendientes == []


def test_el_ejemplo_de_c0011_espera_la_firma_de_un_gerente(http, como):
    respuesta = _ejemplo(http, como, "C-0011")
    assert respuesta["estado"] != "respondida", respuesta
    pendientes = http.get("/api/aprobaciones", headers=como("ger-talavera")).json()
    assert [p["cliente"]["id"] for p in pendientes] == ["C-0011"], pendientes


def test_el_ejemplo_de_c0010_devuelve_una_sola_sarten(http, como):
    respuesta = _ejemplo(http, como, "C-0010")
    assert respuesta["estado"] == "respondida", respuesta
    assert "24,90" in respuesta["mensajes"][-1]["texto"], respuesta
