"""Las rutas de ingesta de la tienda (``/api/tienda/v1``) cumplen su OpenAPI con una clave de
API válida: Schemathesis (todas las comprobaciones, datos válidos y no válidos) contra el
servidor de verdad. Con la clave llega al servicio y a la base: lo que responde es del
dominio (200, 409, 422...), nunca un 500 ni un código sin declarar, y un cuerpo válido según
el esquema no es un 422 (lo que no cuadra con la base es 409)."""

from __future__ import annotations

import uuid

import psycopg
import pytest
import schemathesis

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.ingesta import crear_clave
from agente.web.app import crear_app
from tests.apoyo.bases import borrar_base, crear_base
from tests.apoyo.contrato import COMPROBACIONES, operaciones, probar_operaciones
from tests.apoyo.web_util import ajustes_web, servidor_en_hilo

pytestmark = pytest.mark.lento

# La autenticación (sin ``ignored_auth`` en COMPROBACIONES) la prueban test_ingesta_tienda.py
# (401 revocada, 403 sin alcance) y el caso sin clave de abajo.


@pytest.fixture(scope="module")
def servidor(url_admin, plantillas):
    nombre = f"t_tienda_{uuid.uuid4().hex[:8]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["demo"])
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        clave = crear_clave(c, tienda="talavera", nombre="schemathesis",
                                           alcances=["clientes", "productos", "stock", "pedidos", "estados"]).secreto
    with servidor_en_hilo(crear_app(ajustes_web(url))) as base:
        yield {"base": base, "url": url, "clave": clave}
    borrar_base(url_admin, nombre)


def test_las_rutas_de_la_tienda_cumplen_su_openapi_con_una_clave_valida(servidor):
    esquema = schemathesis.openapi.from_url(f"{servidor['base']}/openapi.json")
    estados = set()

    def llamar(case):
        case.headers = {**(case.headers or {}), "X-Clave-API": servidor["clave"]}
        estados.add(case.call_and_validate(checks=COMPROBACIONES, timeout=60).status_code)

    fallos = probar_operaciones(operaciones(esquema, "/api/tienda/v1/"), llamar, ejemplos=30)
    assert fallos == [], "\n\n".join(fallos)
    # Pasó la clave y llegó al servicio y a la base.
    assert {200, 409, 422} <= estados, estados


def test_sin_clave_las_rutas_de_la_tienda_dan_401(servidor):
    import httpx

    for metodo, ruta in [("PUT", "/clientes/C-1"), ("PUT", "/pedidos/P-20261101-0001"), ("POST", "/lotes"),
                         ("POST", "/pedidos/P-20261101-0001/estado")]:
        r = httpx.request(metodo, f"{servidor['base']}/api/tienda/v1{ruta}", json={}, timeout=10)
        assert r.status_code == 401, (ruta, r.text)
