"""La API de ingesta (``/api/tienda/v1``) ante datos hostiles: nunca un 500 (issue 39, punto 4).

Hypothesis parte de un cuerpo válido de cada ruta y le cambia uno o varios campos (también
anidados: una línea, la dirección) por valores extremos de todos los tipos (fechas que no
caben en UTC, números enormes o negativos, textos largos, unicode, el carácter nulo,
basura anidada) o le añade campos; o manda basura entera. Contra la app de verdad
(TestClient) con una clave con todos los alcances: la respuesta es un código declarado
(200, 404, 409, 413, 422), nunca 500. Los lotes, igual, línea a línea.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.ingesta import crear_clave

pytestmark = pytest.mark.lento

DECLARADOS = {200, 404, 409, 413, 422}
AHORA = datetime.now(UTC).replace(microsecond=0)
PEDIDO = "P-20261101-0001"


def _hace(dias: float) -> str:
    return (AHORA - timedelta(days=dias)).isoformat()


VALIDOS = {
    "cliente": ("PUT", "/api/tienda/v1/clientes/C-9001", {
        "nombre": "Lucía Hostil", "email": "lucia@example.com", "telefono": "+34 600 000 000",
        "direccion": {"calle": "Calle Mayor 5", "codigo_postal": "45600", "localidad": "Talavera"}}),
    "producto": ("PUT", "/api/tienda/v1/productos/MEN-001",
                 {"nombre": "Sartén", "categoria": "menaje", "pvp": "24.90"}),
    "stock": ("PUT", "/api/tienda/v1/stock/MEN-001", {"unidades": 5}),
    "pedido": ("PUT", f"/api/tienda/v1/pedidos/{PEDIDO}", {
        "cliente_id": "C-0001", "fecha": _hace(5), "estado": "entregado", "enviado_en": _hace(4),
        "entregado_en": _hace(2), "referencia_pago": "pi_3Phostil",
        "lineas": [{"linea": 1, "sku": "MEN-001", "unidades": 1, "precio_unitario": "24.90"},
                   {"linea": 2, "sku": "TEX-001", "unidades": 2, "precio_unitario": "15.00"}],
        "direccion_envio": {"calle": "Calle Mayor 5", "codigo_postal": "45600", "localidad": "Talavera"}}),
    "estado": ("POST", f"/api/tienda/v1/pedidos/{PEDIDO}/estado", {"estado": "entregado", "fecha": _hace(1)}),
}

FECHAS_EXTREMAS = st.sampled_from([
    "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "2026-02-30T10:00:00Z",
    "2026-10-01T10:00:00+24:00", "2026-10-01T10:00:00", "+275760-09-13T00:00:00Z", "2026-W40-1",
]) | st.datetimes(timezones=st.timezones()).map(lambda f: f.isoformat())
NUMEROS = st.integers(min_value=-(10**40), max_value=10**40) | st.floats(allow_nan=True, allow_infinity=True) \
    | st.sampled_from(["9999999999.99", "99999999999999999999.99", "-1", "1e309", "NaN", "0.001", "٣"])
TEXTOS = st.text(max_size=300) | st.sampled_from(["", "\u0000", "a\u0000b", "x" * 20_000, "🙂" * 300,
                                                  "\ud800", "P-20261101-0001\n", "<script>", " "])
HOSTILES = st.recursive(
    st.none() | st.booleans() | NUMEROS | TEXTOS | FECHAS_EXTREMAS,
    lambda hijos: st.lists(hijos, max_size=4) | st.dictionaries(st.text(max_size=12), hijos, max_size=4),
    max_leaves=10,
)


def _caminos(nodo, prefijo=()):
    """Cada sitio del cuerpo donde se puede poner otro valor (claves de objetos e índices de listas)."""
    yield prefijo
    if isinstance(nodo, dict):
        for clave, valor in nodo.items():
            yield from _caminos(valor, (*prefijo, clave))
    elif isinstance(nodo, list):
        for i, valor in enumerate(nodo):
            yield from _caminos(valor, (*prefijo, i))


def _poner(nodo, camino, valor):
    if not camino:
        return valor
    copia = json.loads(json.dumps(nodo))
    destino = copia
    for paso in camino[:-1]:
        destino = destino[paso]
    if valor is _QUITAR:
        del destino[camino[-1]]
    else:
        destino[camino[-1]] = valor
    return copia


_QUITAR = object()


@st.composite
def cuerpos_hostiles(draw, base):
    cuerpo = base
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        caminos = list(_caminos(cuerpo)) if isinstance(cuerpo, dict | list) else [()]
        camino = draw(st.sampled_from(caminos))
        valor = draw(HOSTILES | st.just(_QUITAR)) if camino else draw(HOSTILES)
        cuerpo = _poner(cuerpo, camino, valor)
    return cuerpo


@pytest.fixture
def clave(bd_url):
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        return crear_clave(c, tienda="talavera", nombre="hostil", alcances=[
            "clientes", "productos", "stock", "pedidos", "estados"]).secreto


def _json(cuerpo) -> bytes:
    return json.dumps(cuerpo, ensure_ascii=False, allow_nan=True).encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("tipo", list(VALIDOS))
def test_ningun_cuerpo_hostil_da_500_en_la_api_de_ingesta(http, clave, tipo):
    metodo, ruta, base = VALIDOS[tipo]

    @given(cuerpo=cuerpos_hostiles(base))
    @example(cuerpo={**base, "fecha": "0001-01-01T00:00:00+14:00"})
    @example(cuerpo={**base, "fecha": "9999-12-31T23:59:59-14:00"})
    @example(cuerpo=[base])
    @settings(max_examples=120, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    def probar(cuerpo):
        r = http.request(metodo, ruta, content=_json(cuerpo),
                         headers={"X-Clave-API": clave, "Content-Type": "application/json"})
        assert r.status_code in DECLARADOS, (r.status_code, r.text, _json(cuerpo)[:400])
        assert r.json().get("detalle") or r.status_code == 200

    probar()


def test_un_pedido_con_un_importe_que_no_cabe_en_el_libro_no_da_500(http, clave):
    """100.000 unidades a 9.999.999.999,99: cada campo vale, la suma no cabe en numeric(12,2)."""
    metodo, ruta, base = VALIDOS["pedido"]
    cuerpo = {**base, "lineas": [{"linea": 1, "sku": "MEN-001", "unidades": 100_000, "precio_unitario": "9999999999.99"}]}
    r = http.request(metodo, ruta, json=cuerpo, headers={"X-Clave-API": clave})
    assert r.status_code == 409 and r.json()["detalle"].startswith("lineas: el importe del pedido"), r.text


ID_EN_LOTE = {"cliente": {"id": "C-9001"}, "producto": {"sku": "MEN-001"}, "stock": {"sku": "MEN-001"},
              "pedido": {"id": PEDIDO}, "estado": {"id": PEDIDO}}


@given(lineas=st.lists(st.sampled_from(list(VALIDOS)).flatmap(
    lambda tipo: cuerpos_hostiles({**VALIDOS[tipo][2], "tipo": tipo, **ID_EN_LOTE[tipo]})),
    min_size=1, max_size=5))
@example(lineas=[{**VALIDOS["estado"][2], "tipo": "estado", "id": PEDIDO, "fecha": "0001-01-01T00:00:00+14:00"},
                 {**VALIDOS["cliente"][2], "tipo": "cliente", "id": "C-9001"}])
@settings(max_examples=60, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_ningun_lote_hostil_da_500_y_cada_linea_mala_sale_con_su_numero(http, clave, lineas):
    cuerpo = b"\n".join(_json(linea) for linea in lineas)
    r = http.post("/api/tienda/v1/lotes", content=cuerpo,
                  headers={"X-Clave-API": clave, "Content-Type": "application/x-ndjson"})
    assert r.status_code in DECLARADOS, (r.status_code, r.text, cuerpo[:400])
    if r.status_code == 200:
        informe = r.json()
        assert informe["invalidos"] == len(informe["fallos"])
        assert all(1 <= f["linea"] <= len(lineas) and f["estado"] in {403, 404, 409, 422} for f in informe["fallos"])
