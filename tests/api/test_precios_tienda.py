"""Precio por tienda (issue 38, punto 4): la clave de API de una tienda fija el precio de
venta solo en su tienda. Lo que se liquida o se enseña de un cambio de producto (la
diferencia, las alternativas, el hecho de la política, la tarjeta y el texto del encargado)
usa el precio de la tienda del pedido.

El caso reportado: una clave de talavera puso CAF-003 a 60,01 y un cliente de madrid-centro
que cambió su cafetera de 120,00 por ella cobró 59,99 EUR.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from psycopg.types.json import Jsonb

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.ingesta import crear_clave
from caja.pasarela import PasarelaSimulada
from herramientas.pedidos import stock_alternativas
from nucleo.errores import ErrorDominio
from operaciones.sustitucion.declaracion import TARJETA_CAMBIO_SQL
from operaciones.sustitucion.herramienta import sustituir
from politicas import DescripcionEncargado
from tests.apoyo.fabricas import consultar, crear_pedido
from tests.apoyo.llamadas import runtime_grafo
from tests.apoyo.politica import ANA, CARMEN, nueva_politica, veredicto

CAFETERA_ESPRESSO = {"nombre": "Cafetera espresso Crema 15 bar", "categoria": "cafeteras"}


def _clave(bd_url: str, tienda: str) -> dict[str, str]:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        secreto = crear_clave(c, tienda=tienda, nombre="ERP", alcances=["productos", "stock"]).secreto
    return {"X-Clave-API": secreto}


def _poner_producto(http, bd_url: str, tienda: str, sku: str, pvp: str, **datos) -> None:
    r = http.put(f"/api/tienda/v1/productos/{sku}", json={**CAFETERA_ESPRESSO, **datos, "pvp": pvp},
                 headers=_clave(bd_url, tienda))
    assert r.status_code == 200, r.text


def _cambiar(pool, contexto, pedido: str, sku_nuevo: str, *, tool_call_id: str = "call-cambio") -> dict:
    return sustituir(pool, contexto=contexto, thread_id="hilo-precios", tool_call_id=tool_call_id,
                     pedido=pedido, sku_original="CAF-001", sku_nuevo=sku_nuevo,
                     pasarela=PasarelaSimulada(pool=pool))


def _reembolsos(bd_url: str, pedido: str) -> list[dict]:
    return consultar(bd_url, "SELECT importe, concepto FROM reembolsos WHERE pedido_id = %(p)s", {"p": pedido})


def _alternativa(pool, contexto, sku: str) -> dict | None:
    datos = stock_alternativas(pool, contexto=contexto, sku="CAF-001")
    return next((a for a in datos["alternativas"] if a["sku"] == sku), None)


def test_una_clave_de_talavera_no_cambia_lo_que_se_liquida_en_madrid_centro(http, bd_url, pool):
    _poner_producto(http, bd_url, "talavera", "CAF-003", "60.01")
    pedido = crear_pedido(bd_url, CARMEN.cliente_id, [("CAF-001", 1)])  # madrid-centro, 120,00

    # Lo que la política ve al evaluar el cambio: los precios de madrid-centro.
    args = {"pedido": pedido, "sku_original": "CAF-001", "sku_nuevo": "CAF-003"}
    v = veredicto(nueva_politica(pool), "sustituir", args, CARMEN, id="call-politica")
    assert (v.umbrales["pvp_original"], v.umbrales["pvp_nuevo"]) == ("120.00", "120.00")

    # Lo que el cliente lee en las alternativas.
    assert _alternativa(pool, CARMEN, "CAF-003") == {
        "sku": "CAF-003", "nombre": CAFETERA_ESPRESSO["nombre"], "pvp": "120.00", "diferencia": "0.00",
        "unidades": 8}

    # Lo que se liquida: nada, porque en madrid-centro cuesta lo mismo que pagó.
    resultado = _cambiar(pool, CARMEN, pedido, "CAF-003")
    assert (resultado["diferencia"], resultado["liquidacion"]) == ("0.00", {"tipo": "ninguna"})
    assert _reembolsos(bd_url, pedido) == []


def test_la_tarjeta_y_el_texto_del_encargado_dan_el_precio_de_la_tienda_del_pedido(http, bd_url, pool):
    _poner_producto(http, bd_url, "talavera", "CAF-003", "60.01")
    pedido = crear_pedido(bd_url, CARMEN.cliente_id, [("CAF-001", 1)])
    args = {"pedido": pedido, "sku_original": "CAF-001", "sku_nuevo": "CAF-003"}
    with pool.connection() as c:
        tarjeta = c.execute(TARJETA_CAMBIO_SQL, {"args": Jsonb(args), "cliente": CARMEN.cliente_id}).fetchone()
    assert (str(tarjeta["Precio del nuevo"]), str(tarjeta["Diferencia"])) == ("120.00", "0.00")
    assert tarjeta["Quién paga la diferencia"] == "ninguna: mismo precio"
    llamada = {"name": "sustituir", "args": args, "id": "call-tarjeta", "type": "tool_call"}
    texto = DescripcionEncargado(pool=pool, politica=nueva_politica(pool))(llamada, {}, runtime_grafo(CARMEN))
    assert "Nuevo: Cafetera espresso Crema 15 bar (CAF-003), 120,00 EUR." in texto
    assert "Diferencia de precio: ninguna (mismo precio)." in texto


def test_el_precio_que_fija_una_tienda_si_liquida_sus_propios_cambios(http, bd_url, pool):
    _poner_producto(http, bd_url, "talavera", "CAF-003", "60.01")
    pedido = crear_pedido(bd_url, ANA.cliente_id, [("CAF-001", 1)])  # talavera, 120,00

    v = veredicto(nueva_politica(pool), "sustituir",
                  {"pedido": pedido, "sku_original": "CAF-001", "sku_nuevo": "CAF-003"}, ANA, id="call-politica")
    assert (v.umbrales["pvp_original"], v.umbrales["pvp_nuevo"]) == ("120.00", "60.01")
    assert _alternativa(pool, ANA, "CAF-003")["diferencia"] == "-59.99"

    resultado = _cambiar(pool, ANA, pedido, "CAF-003")
    assert (resultado["diferencia"], resultado["liquidacion"]["tipo"]) == ("-59.99", "reembolso")
    assert [(str(r["importe"]), r["concepto"]) for r in _reembolsos(bd_url, pedido)] == [("59.99", "diferencia")]


def test_el_precio_de_una_tienda_queda_en_su_fila_y_el_catalogo_no_cambia(http, bd_url):
    _poner_producto(http, bd_url, "talavera", "CAF-003", "60.01", nombre="Cafetera espresso Crema")
    # Por un lote, igual: la tienda es la de la clave, nunca la del cuerpo.
    lote = json.dumps({"tipo": "producto", "sku": "CAF-002", "tienda": "talavera", "nombre": "Moka",
                       "categoria": "cafeteras", "pvp": "9.99"})
    r = http.post("/api/tienda/v1/lotes", content=lote.encode() + b"\n", headers=_clave(bd_url, "madrid-centro"))
    assert r.json()["invalidos"] == 1  # «tienda» no es un campo del registro
    lote = json.dumps({"tipo": "producto", "sku": "CAF-002", "nombre": "Moka", "categoria": "cafeteras", "pvp": "9.99"})
    r = http.post("/api/tienda/v1/lotes", content=lote.encode() + b"\n", headers=_clave(bd_url, "madrid-centro"))
    assert r.json()["actualizados"] == 0 and r.json()["creados"] == 1, r.text  # registro nuevo de madrid-centro
    precios = consultar(bd_url, "SELECT tienda, sku, pvp FROM precios_tienda WHERE sku IN ('CAF-002', 'CAF-003') "
                                "ORDER BY sku, tienda")
    assert [(p["tienda"], p["sku"], str(p["pvp"])) for p in precios] == [
        ("madrid-centro", "CAF-002", "9.99"), ("talavera", "CAF-002", "29.90"),
        ("madrid-centro", "CAF-003", "120.00"), ("talavera", "CAF-003", "60.01")]
    (producto,) = consultar(bd_url, "SELECT nombre, pvp_referencia FROM productos WHERE sku = 'CAF-003'")
    # El nombre es del catálogo común; el precio de referencia no lo cambia ninguna tienda.
    assert (producto["nombre"], str(producto["pvp_referencia"])) == ("Cafetera espresso Crema", "120.00")


def test_un_producto_que_solo_vende_otra_tienda_no_se_ofrece_ni_se_cambia(http, bd_url, pool):
    _poner_producto(http, bd_url, "talavera", "CAF-009", "80.00", nombre="Cafetera nueva")
    for tienda in ("talavera", "madrid-centro"):  # con stock en las dos
        r = http.put("/api/tienda/v1/stock/CAF-009", json={"unidades": 5}, headers=_clave(bd_url, tienda))
        assert r.status_code == 200, r.text
    assert _alternativa(pool, ANA, "CAF-009")["pvp"] == "80.00"
    assert _alternativa(pool, CARMEN, "CAF-009") is None

    pedido = crear_pedido(bd_url, CARMEN.cliente_id, [("CAF-001", 1)])
    v = veredicto(nueva_politica(pool), "sustituir",
                  {"pedido": pedido, "sku_original": "CAF-001", "sku_nuevo": "CAF-009"}, CARMEN, id="call-politica")
    assert v.umbrales["pvp_nuevo"] is None and v.requiere_encargado
    with pytest.raises(ErrorDominio, match="CAF-009 no tiene precio en la tienda del pedido"):
        _cambiar(pool, CARMEN, pedido, "CAF-009")
    assert _reembolsos(bd_url, pedido) == []
