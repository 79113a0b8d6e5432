"""Lo que el chat enseña al cliente de sí mismo y de sus conversaciones: su nombre, el nombre
visible de su tienda, cuánto suele tardar (solo con bastantes decisiones), el estado verdadero
de cada conversación y su tema; y en la demo, el cargo y el escenario de cada identidad."""

from __future__ import annotations

import pytest

from agente.servicio.conversaciones.portal_cliente import MIN_DECISIONES_ESPERA, espera_en_texto
from tests.apoyo.web_util import EDITAR_A_90, abrir_conversacion, cab, conversacion_en_pausa, sql

COPIAR_DECISION_SQL = """
INSERT INTO decisiones_encargado (thread_id, interrupt_id, encargado_id, tienda, peticion, decisiones,
                                  decidida, espera_segundos)
SELECT thread_id, interrupt_id || '-copia-' || gen_random_uuid(), encargado_id, tienda, peticion, decisiones, decidida,
       %(espera)s
FROM decisiones_encargado, generate_series(1, %(n)s) AS n
WHERE thread_id = %(hilo)s AND interrupt_id NOT LIKE '%%-copia-%%'
"""


@pytest.mark.parametrize(("segundos", "texto"), [
    (240, "unos 5 min"), (1500, "unos 25 min"), (3500, "alrededor de una hora"),
    (7000, "unas 2 h"), (30 * 3600, "unas 30 h"), (3 * 86400, "unos 3 días"),
])
def test_la_espera_tipica_se_dice_redondeada(segundos, texto):
    assert espera_en_texto(segundos) == texto


def test_yo_da_el_nombre_la_tienda_visible_y_la_espera_solo_con_bastantes_decisiones(http, tok):
    r = http.get("/api/yo", headers=cab(tok("C-0001")))
    assert r.status_code == 200
    assert r.json() == {"cliente_id": "C-0001", "nombre": "Ana García López",
                        "tienda": {"id": "talavera", "nombre": "Talavera de la Reina"}, "espera_tipica": None}
    hilo = conversacion_en_pausa(http, tok)
    assert http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90,
                     headers=cab(tok("enc-talavera"))).status_code == 200
    url = http.app.state.ajustes.database_url
    sql(url, COPIAR_DECISION_SQL, {"hilo": hilo, "espera": 7200, "n": MIN_DECISIONES_ESPERA - 2})
    assert http.get("/api/yo", headers=cab(tok("C-0001"))).json()["espera_tipica"] is None  # 4: pocas
    sql(url, COPIAR_DECISION_SQL, {"hilo": hilo, "espera": 7200, "n": 1})
    assert http.get("/api/yo", headers=cab(tok("C-0001"))).json()["espera_tipica"] == "unas 2 h"
    # Las caducadas (las «decide» el sistema) no son esperas de una persona.
    sql(url, "UPDATE decisiones_encargado SET encargado_id = 'sistema' "
             "WHERE id = (SELECT max(id) FROM decisiones_encargado)")
    assert http.get("/api/yo", headers=cab(tok("C-0001"))).json()["espera_tipica"] is None
    assert http.get("/api/yo", headers=cab(tok("enc-talavera"))).status_code == 403


def test_las_conversaciones_dicen_su_estado_verdadero_y_su_tema(http, tok):
    vacia = abrir_conversacion(http, tok, "C-0001")
    resuelta = conversacion_en_pausa(http, tok)
    lista = {c["thread_id"]: c for c in http.get("/api/conversaciones", headers=cab(tok("C-0001"))).json()}
    assert lista[resuelta]["estado_cliente"] == "esperando_tienda"
    assert lista[resuelta]["tema"].startswith("Quiero devolver la cafetera")
    assert (lista[vacia]["estado_cliente"], lista[vacia]["mensajes"], lista[vacia]["tema"]) == ("abierta", 0, None)
    http.post(f"/api/aprobaciones/{resuelta}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    despues = {c["thread_id"]: c for c in http.get("/api/conversaciones", headers=cab(tok("C-0001"))).json()}
    assert despues[resuelta]["estado_cliente"] == "resuelta"  # antes decía «abierta»
    assert "modo sin conexión" not in despues[resuelta]["tema"]


def test_la_demo_ensena_el_cargo_de_cada_persona_y_el_escenario_de_cada_cliente(http):
    identidades = {i["id"]: i for i in http.get("/api/demo/identidades").json()}
    assert identidades["ger-talavera"]["cargo"] == "gerente"
    assert "1.000,00 EUR" in identidades["ger-talavera"]["escenario"]
    assert identidades["reg-centro"]["cargo"] == "regional"
    assert "Talavera de la Reina y Madrid-Centro" in identidades["reg-centro"]["escenario"]
    assert "De baja" in identidades["enc-talavera-baja"]["escenario"]
    clientes = [i for i in identidades.values() if i["rol"] == "cliente"]
    assert all(c["escenario"] and c["tienda_nombre"] for c in clientes)
    assert "dos firmas" in identidades["C-0006"]["escenario"]


def test_el_favicon_se_sirve(http):
    for ruta in ("/favicon.ico", "/estaticos/favicon.svg"):
        r = http.get(ruta)
        assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
        assert r.text.startswith("<svg")


def test_el_aviso_de_espera_de_un_cambio_nombra_los_productos_y_no_sus_skus(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cab(tok("C-0001")),
                  json={"texto": "Quiero cambiar la cafetera del pedido P-20260917-0041 por la CAF-004"})
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "esperando_aprobacion"
    (aviso,) = [m["texto"] for m in r.json()["mensajes"]]
    assert "el cambio de Cafetera de goteo Aroma 10 tazas por Cafetera superautomática Barista" in aviso
    assert "CAF-00" not in aviso


def test_cada_ejemplo_de_la_demo_lo_entiende_el_modelo_offline(http, tok):
    from agente.web.rutas.demo import EJEMPLOS

    for cliente, texto in EJEMPLOS.items():
        login = http.post("/api/demo/login", json={"rol": "cliente", "id": cliente}).json()
        hilo = http.post("/api/conversaciones", headers=cab(login["token"])).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(login["token"]))
        assert r.status_code == 200, (cliente, r.text)
        respuesta = " ".join(m["texto"] for m in r.json()["mensajes"])
        assert "modo sin conexión" not in respuesta and "no encontrado" not in respuesta.lower(), (cliente, respuesta)
