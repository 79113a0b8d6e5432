"""``/api/tiendas``, ``/api/regiones`` y ``/api/personas`` (issue 43, punto 1): códigos 4xx
precisos con el motivo en español y la separación de funciones por HTTP, sobre la demo
(un administrador añadido: la demo no tiene)."""

from __future__ import annotations

import pytest

from agente.web.entrada.auth import emitir_token
from tests.apoyo.web_util import cab, sql

ADMIN_SQL = """
INSERT INTO encargados (id, nombre, email, rol, tienda, administrador)
VALUES ('adm', 'Ana Ruiz', 'adm@mitienda.es', 'regional', NULL, true)
"""


@pytest.fixture
def admin(bd_url, ajustes):
    sql(bd_url, ADMIN_SQL)
    return cab(emitir_token(ajustes, rol="encargado", sujeto="adm", tienda=""))


def test_sin_token_401_y_quien_no_gestiona_tiendas_403_con_el_motivo(http, como):
    assert http.get("/api/personas").status_code == 401
    for quien in ("enc-talavera", "ger-talavera", "reg-centro"):  # reg-centro no tiene región (la demo)
        r = http.post("/api/tiendas", headers=como(quien), json={"id": "nueva", "nombre": "Nueva"})
        assert r.status_code == 403, r.text
        assert r.json()["detalle"] == "Solo un regional (en su región) o un administrador da de alta o cambia tiendas."
    r = http.post("/api/regiones", headers=como("reg-centro"), json={"id": "sur", "nombre": "Sur"})
    assert (r.status_code, r.json()["detalle"]) == (403, "Solo un administrador da de alta o cambia regiones.")


def test_un_gerente_no_se_hace_regional_ni_crea_uno(http, como, bd_url):
    r = http.patch("/api/personas/ger-talavera", headers=como("ger-talavera"), json={"rol": "regional"})
    assert r.status_code == 403
    assert r.json()["detalle"].startswith("Nadie cambia su propio rol, su tienda, su región ni su alta")
    r = http.post("/api/personas", headers=como("ger-talavera"), json={
        "id": "reg-nuevo", "nombre": "Rosa", "email": "rosa@mitienda.es", "rol": "regional", "region": "centro"})
    assert (r.status_code, r.json()["detalle"]) == (
        403, "No puedes dar el rol de regional: es más alto que el tuyo (gerente).")
    assert sql(bd_url, "SELECT rol FROM encargados WHERE id = 'ger-talavera'") == [{"rol": "gerente"}]
    assert sql(bd_url, "SELECT count(*) AS n FROM cambios_alta")[0]["n"] == 0
    # Lo suyo sí: un encargado de su tienda, anotado con quién y por dónde.
    r = http.post("/api/personas", headers=como("ger-talavera"), json={
        "id": "enc-nuevo", "nombre": "Eva Sanz", "email": "eva@mitienda.es", "rol": "encargado", "tienda": "talavera"})
    assert r.status_code == 201, r.text
    assert sql(bd_url, "SELECT quien, canal, accion FROM cambios_alta") == [
        {"quien": "ger-talavera", "canal": "web", "accion": "crear"}]


def test_un_encargado_no_se_anade_tiendas(http, como, bd_url):
    r = http.patch("/api/personas/enc-talavera", headers=como("enc-talavera"), json={"tienda": "madrid-centro"})
    assert (r.status_code, r.json()["detalle"]) == (
        403, "Un encargado no da de alta ni cambia a nadie: pídeselo a tu gerente.")
    assert http.get("/api/sesion", headers=como("enc-talavera")).json()["tiendas"] == [
        {"id": "talavera", "nombre": "Talavera de la Reina"}]
    assert sql(bd_url, "SELECT tienda FROM encargados WHERE id = 'enc-talavera'") == [{"tienda": "talavera"}]


def test_el_administrador_da_de_alta_y_cada_error_es_un_4xx_preciso(http, admin, bd_url):
    sesion = http.get("/api/sesion", headers=admin).json()
    assert (sesion["tienda"], sesion["tiendas"], sesion["administrador"]) == (None, [], True)
    assert http.post("/api/regiones", headers=admin, json={"id": "sur", "nombre": "Sur"}).status_code == 201
    tienda = {"id": "sevilla", "nombre": "Sevilla", "region": "sur", "codigo_postal": "41001", "zona_horaria": "Europe/Madrid"}
    r = http.post("/api/tiendas", headers=admin, json=tienda)
    assert r.status_code == 201, r.text
    assert (r.json()["provincia"], r.json()["activa"]) == ("Sevilla", True)
    casos = [
        (http.post("/api/tiendas", headers=admin, json=tienda), 409, "Ya hay una tienda sevilla."),
        (http.post("/api/tiendas", headers=admin, json={**tienda, "id": "cadiz", "region": "oeste"}), 404,
         "No hay ninguna región oeste: créala antes con «agente regiones crear»."),
        (http.post("/api/tiendas", headers=admin, json={**tienda, "id": "cadiz", "zona_horaria": "Marte/Olimpo"}), 409,
         "La zona horaria Marte/Olimpo no existe (p. ej. «Europe/Madrid» o «Atlantic/Canary»)."),
        (http.patch("/api/tiendas/nadie", headers=admin, json={"nombre": "X"}), 404, "No hay ninguna tienda nadie."),
        (http.post("/api/regiones/sur/desactivar", headers=admin), 409,
         "La región sur aún tiene tiendas activas (sevilla): pásalas a otra región o desactívalas antes."),
        (http.post("/api/personas", headers=admin, json={"id": "enc-sev", "nombre": "Pepe", "email": "ENC-TALAVERA@tienda.example",
                                                         "rol": "encargado", "tienda": "sevilla"}), 409,
         "Ya hay otra persona con el correo ENC-TALAVERA@tienda.example."),
        (http.post("/api/personas", headers=admin, json={"id": "enc-sev", "nombre": "Pepe", "email": "pepe@mitienda.es",
                                                         "rol": "encargado"}), 409,
         "Un encargado tiene una tienda (--tienda) y no una región."),
    ]
    for respuesta, codigo, detalle in casos:
        assert (respuesta.status_code, respuesta.json()["detalle"]) == (codigo, detalle)
    # La demo es de antes de las regiones: su regional (con tienda, sin región) se puede dar de baja.
    r = http.post("/api/personas/reg-centro/desactivar", headers=admin)
    assert (r.status_code, r.json()["activo"]) == (200, False)
    r = http.post("/api/tiendas", headers=admin, json={**tienda, "id": "Mi Tienda"})
    assert r.status_code == 422 and "id" in r.json()["detalle"]
    r = http.post("/api/personas", headers=admin, json={"id": "reg-sur", "nombre": "Rosa Gil", "email": "rosa@mitienda.es",
                                                        "rol": "regional", "region": "sur"})
    assert r.status_code == 201, r.text
    assert sql(bd_url, "SELECT tienda FROM tiendas_regionales WHERE encargado_id = 'reg-sur'") == [{"tienda": "sevilla"}]
    assert [f["accion"] for f in sql(bd_url, "SELECT accion FROM cambios_alta WHERE quien = 'adm' ORDER BY id")] == [
        "crear", "crear", "desactivar", "crear"]
