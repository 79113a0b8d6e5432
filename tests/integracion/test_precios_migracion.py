"""Una base de antes del precio por tienda (sql/030) se migra con sus precios.

Se aplica el esquema hasta 030 sin incluirla, se carga la demo como la cargaba la versión
anterior (un solo productos.pvp), se apuntan cambios de precio como los dejaba la API de
ingesta de entonces y se migra.
"""

from __future__ import annotations

import shutil
from decimal import Decimal

import psycopg
import pytest
from psycopg.types.json import Jsonb

from agente.bd.migraciones import CARPETA_SQL, migrar
from agente.bd.pool import KWARGS_CONEXION
from agente.demo.carga import cargar_demo
from agente.demo.catalogo import PRODUCTOS, TIENDAS

D = Decimal
MIGRACION = "030_precios_tienda.sql"

# Lo que dejaba la ingesta de antes: la versión del registro y su cuerpo con el pvp.
VERSION_SQL = """
INSERT INTO ingesta_registros (tipo, tienda, id, version, huella)
VALUES ('producto', %(tienda)s, %(sku)s, %(version)s, %(huella)s)
ON CONFLICT (tipo, tienda, id) DO UPDATE SET version = EXCLUDED.version, huella = EXCLUDED.huella
"""
CUERPO_SQL = """
INSERT INTO ingesta_versiones (tipo, tienda, id, version, huella, datos)
VALUES ('producto', %(tienda)s, %(sku)s, %(version)s, %(huella)s, %(datos)s)
"""


@pytest.fixture
def base_anterior(bd_sin_migrar_url, tmp_path):
    anteriores = tmp_path / "sql"
    anteriores.mkdir()
    for ruta in sorted(CARPETA_SQL.glob("*.sql")):
        if ruta.name < MIGRACION:
            shutil.copy(ruta, anteriores / ruta.name)
    migrar(bd_sin_migrar_url, carpeta=anteriores)
    with psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as c:
        cargar_demo(c)
    return bd_sin_migrar_url


def _ingerido(c, tienda: str, sku: str, *pvps: str) -> None:
    """Las versiones que mandó la clave de ``tienda``, y el pvp común que dejó la última."""
    for version, pvp in enumerate(pvps, 1):
        huella = f"{tienda}-{sku}-{version}"
        c.execute(VERSION_SQL, {"tienda": tienda, "sku": sku, "version": version, "huella": huella})
        c.execute(CUERPO_SQL, {"tienda": tienda, "sku": sku, "version": version, "huella": huella,
                               "datos": Jsonb({"nombre": sku, "categoria": "cafeteras", "pvp": pvp})})
    c.execute("UPDATE productos SET pvp = %(pvp)s WHERE sku = %(sku)s", {"pvp": D(pvps[-1]), "sku": sku})


def _precios(c) -> dict[tuple[str, str], Decimal]:
    return {(f["tienda"], f["sku"]): f["pvp"] for f in c.execute("SELECT tienda, sku, pvp FROM precios_tienda")}


def test_cada_tienda_se_queda_con_el_precio_del_catalogo(base_anterior):
    with psycopg.connect(base_anterior, **KWARGS_CONEXION) as c:
        c.execute("UPDATE productos SET pvp = 130.00 WHERE sku = 'CAF-001'")  # un precio de hoy, no el de la demo
        antes = {f["sku"]: f["pvp"] for f in c.execute("SELECT sku, pvp FROM productos")}
    # La suya y las que vinieron después (el orden es el de los ficheros).
    assert migrar(base_anterior)[0] == MIGRACION.removesuffix(".sql")
    with psycopg.connect(base_anterior, **KWARGS_CONEXION) as c:
        precios = _precios(c)
        referencia = {f["sku"]: f["pvp_referencia"] for f in c.execute("SELECT sku, pvp_referencia FROM productos")}
    assert len(precios) == len(TIENDAS) * len(PRODUCTOS)
    assert precios == {(t, sku): pvp for t, _ in TIENDAS for sku, pvp in antes.items()}
    assert precios[("madrid-centro", "CAF-001")] == D("130.00")
    assert referencia == antes


def test_la_tienda_que_mando_su_precio_por_la_api_se_queda_con_el_suyo(base_anterior):
    with psycopg.connect(base_anterior, **KWARGS_CONEXION) as c:
        _ingerido(c, "madrid-centro", "CAF-002", "31.00")
        _ingerido(c, "talavera", "CAF-002", "35.00", "29.50")  # la última pisó el precio común
    migrar(base_anterior)
    with psycopg.connect(base_anterior, **KWARGS_CONEXION) as c:
        precios = _precios(c)
    assert (precios[("madrid-centro", "CAF-002")], precios[("talavera", "CAF-002")]) == (D("31.00"), D("29.50"))
    assert precios[("madrid-centro", "CAF-003")] == D("120.00")


def test_la_demo_se_carga_igual_antes_y_despues_de_migrar(base_anterior):
    migrar(base_anterior)
    with psycopg.connect(base_anterior, **KWARGS_CONEXION) as c:
        c.execute("UPDATE precios_tienda SET pvp = 1 WHERE tienda = 'talavera' AND sku = 'CAF-004'")
        cargar_demo(c)
        precios = _precios(c)
    # Los del catálogo de la demo; los de los ``demo.sql`` de las carpetas de operaciones, aparte.
    catalogo = {sku for sku, *_ in PRODUCTOS}
    assert {k: v for k, v in precios.items() if k[1] in catalogo} == {
        (t, sku): pvp for t, _ in TIENDAS for sku, _, _, pvp in PRODUCTOS}
