"""Movimientos (issue 43, punto 5): todo el dinero y la mercancía que se movieron, por la API
y en CSV, y un día de prueba cuyo CSV cuadra con el libro, con la pasarela y con la auditoría.

El día: un reembolso firmado (editado a 90 EUR), uno de dos firmas (encargado y gerente), una
cancelación automática, un cambio más caro firmado (su cobro), un vale y un reenvío automáticos,
y un reembolso automático que la pasarela rechaza (caída): queda fallido, sin «Importe final».
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import hallazgos, informe
from agente.servicio.auditoria.movimientos_csv import COLUMNAS_CSV, COLUMNAS_CSV_HOJA
from tests.apoyo.fabricas import crear_pedido
from tests.apoyo.firmas import PEDIDO_650, decidir_como, pausa_con, pausa_de_pedido
from tests.apoyo.web_util import DEVOLVER_CAFETERA, EDITAR_A_90, sql

D = Decimal
CANCELAR = "Cancela mi pedido P-20261008-0201, por favor"  # C-0002, talavera, 25 EUR: sola
VALE = "El pedido P-20261012-0099 llegó con un arañazo, no quiero devolverlo"  # C-0003, Madrid: 9,90 sola
SOLA = "P-20260920-0102"  # C-0002, talavera, 24,90 EUR: el reembolso sale solo (aquí la pasarela falla)
REENVIO = "Hola, no me ha llegado el pedido P-20261010-0300"  # C-0012, Madrid: reenvío solo


def _decir(http, como, cliente: str, texto: str) -> dict:
    r = http.post("/api/conversaciones", headers=como(cliente))
    assert r.status_code == 201, r.text
    r = http.post(f"/api/conversaciones/{r.json()['thread_id']}/mensajes", headers=como(cliente),
                  json={"texto": texto})
    assert r.status_code == 200, r.text
    return r.json()


def _pasarela(http):
    """La pasarela simulada de la app (dentro de la que registra cada llamada): la misma que
    usan las herramientas y la cola de movimientos; ``falla`` la tumba sin apuntar nada."""
    return http.app.state.servicio.pagos._pasarela.interna  # noqa: SLF001 - la de la app en proceso


@pytest.fixture
def dia(http, como, bd_url):
    """El día de prueba; devuelve el pedido del reembolso que falló en la pasarela."""
    hilo = pausa_con(http, como, "C-0001", DEVOLVER_CAFETERA)
    assert decidir_como(http, como, hilo, "enc-talavera", EDITAR_A_90["decisiones"]).status_code == 200
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"
    assert decidir_como(http, como, hilo, "ger-talavera").json()["estado"] == "aplicada"
    _pasarela(http).falla = True
    try:
        r = _decir(http, como, "C-0002", f"Quiero devolver el pedido {SOLA} porque llegó roto")
    finally:
        _pasarela(http).falla = False
    assert r["estado"] == "respondida", r
    assert _decir(http, como, "C-0002", CANCELAR)["estado"] == "respondida"
    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 1)])
    hilo = pausa_con(http, como, "C-0001", f"Quiero cambiar la cafetera del pedido {pedido} por la CAF-004")
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "aplicada"
    assert _decir(http, como, "C-0003", VALE)["estado"] == "respondida"
    assert _decir(http, como, "C-0012", REENVIO)["estado"] == "respondida"
    return SOLA


def _csv(http, como, quien="reg-centro", **params) -> list[dict]:
    r = http.get("/api/movimientos.csv", headers=como(quien), params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/csv")
    texto = r.content.decode("utf-8")
    if params.get("formato") == "maquina":
        assert texto.splitlines()[0] == ",".join(COLUMNAS_CSV)
        return list(csv.DictReader(io.StringIO(texto)))
    assert texto.startswith("\ufeff")
    filas = list(csv.DictReader(io.StringIO(texto[1:]), delimiter=";"))
    assert filas and list(filas[0]) == list(COLUMNAS_CSV_HOJA)
    return filas


def _euros(celda: str) -> Decimal:
    return D(celda.replace(",", ".")) if celda else D("0")


def _libro(bd_url: str) -> dict[str, Decimal]:
    """Lo que de verdad se movió, según las tablas del libro, por tipo de movimiento."""
    (fila,) = sql(bd_url, """
        SELECT (SELECT coalesce(sum(importe), 0) FROM reembolsos WHERE estado = 'emitido' AND concepto = 'devolucion') AS reembolso,
               (SELECT coalesce(sum(importe), 0) FROM reembolsos WHERE estado = 'emitido' AND concepto = 'diferencia') AS diferencia_devuelta,
               (SELECT coalesce(sum(importe), 0) FROM reembolsos WHERE estado = 'emitido' AND concepto = 'anulacion') AS cobro_devuelto,
               (SELECT coalesce(sum(importe), 0) FROM reembolsos WHERE estado = 'emitido' AND concepto = 'cancelacion') AS cancelacion,
               (SELECT coalesce(sum(importe), 0) FROM cobros WHERE estado = 'confirmado') AS cobro,
               (SELECT coalesce(sum(valor), 0) FROM reenvios) AS reenvio,
               (SELECT coalesce(sum(importe), 0) FROM vales WHERE estado <> 'anulado') AS vale,
               (SELECT coalesce(sum(importe), 0) FROM pasarela_movimientos WHERE tipo = 'reembolso') AS pasarela_sale,
               (SELECT coalesce(sum(importe), 0) FROM pasarela_movimientos WHERE tipo = 'cobro') AS pasarela_entra""")
    return fila


def _auditoria_limpia(bd_url: str) -> None:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        resultado = informe(c)
    assert hallazgos(resultado) == 0, resultado


def _sumas(filas: list[dict]) -> dict[str, Decimal]:
    sumas: dict[str, Decimal] = {}
    for f in filas:
        sumas[f["Tipo"]] = sumas.get(f["Tipo"], D("0")) + _euros(f["Importe final (EUR)"])
    return sumas


TITULOS = {"reembolso": "Reembolso", "cobro": "Cobro de diferencia de cambio", "cancelacion": "Cancelación",
           "reenvio": "Reenvío", "vale": "Vale"}


def test_el_csv_de_un_dia_cuadra_con_el_libro_con_la_pasarela_y_con_la_auditoria(http, como, bd_url, dia):
    filas = _csv(http, como)
    libro = _libro(bd_url)
    sumas = _sumas(filas)
    for tipo, titulo in TITULOS.items():
        assert sumas[titulo] == libro[tipo], (tipo, sumas, libro)
    assert libro["reembolso"] == D("90.00") + D("650.00") and libro["cobro"] == D("129.00")
    assert (libro["cancelacion"], libro["vale"]) == (D("25.00"), D("9.90"))
    # Lo que sale al cliente y lo que entra, fila a fila, es lo que movió la pasarela.
    sale = sum((_euros(f["Importe final (EUR)"]) for f in filas if f["Sentido"] == "al cliente"), D("0"))
    entra = sum((_euros(f["Importe final (EUR)"]) for f in filas if f["Sentido"] == "del cliente"), D("0"))
    assert (sale, entra) == (libro["pasarela_sale"], libro["pasarela_entra"])
    _auditoria_limpia(bd_url)

    # Los totales de la API son los del CSV.
    cuerpo = http.get("/api/movimientos", headers=como("reg-centro")).json()
    assert {t["titulo"]: D(t["importe_final"]) for t in cuerpo["totales"] if t["importe_final"]} == {
        k: v for k, v in sumas.items() if k != "Cambio de artículo"}
    assert cuerpo["total"] == len(filas) == 8  # 3 reembolsos, cancelación, cambio y su cobro, vale, reenvío


def test_quien_autorizo_cada_uno_y_el_que_fallo_no_tiene_importe_final(http, como, bd_url, dia):
    filas = {(f["Tipo"], f["Importe (EUR)"]): f for f in _csv(http, como)}
    editado = filas[("Reembolso", "90,00")]
    assert editado["Autorizado por"] == "Lucía Moreno (encargado)"
    assert editado["Veredicto de la política"].startswith("pedía firma")
    assert editado["Estado"] == "completado" and editado["Importe final (EUR)"] == "90,00"
    assert editado["Referencia en la pasarela"].startswith("RE-") and editado["Estado en la pasarela"] == "emitido"
    dos = filas[("Reembolso", "650,00")]
    assert dos["Autorizado por"] == "Lucía Moreno (encargado); Marta Jiménez (gerente)"
    for automatico in (filas[("Cancelación", "25,00")], filas[("Vale", "9,90")]):
        assert automatico["Autorizado por"] == "automático (política)"
        assert automatico["Veredicto de la política"] == "automático: dentro de la política"
    assert filas[("Cancelación", "25,00")]["Referencia en la pasarela"].startswith("RE-")
    assert filas[("Vale", "9,90")]["Referencia en la pasarela"] == ""
    cobro = filas[("Cobro de diferencia de cambio", "129,00")]
    assert cobro["Sentido"] == "del cliente" and cobro["Operación"].startswith("SU-")
    assert cobro["Estado en la pasarela"] == "confirmado"
    (cambio,) = [f for f in filas.values() if f["Tipo"] == "Cambio de artículo"]
    assert "a cargo del cliente: 129,00 EUR" in cambio["Detalle"] and cambio["Importe final (EUR)"] == ""

    (fallido,) = [f for f in filas.values() if f["Estado"] == "fallido"]
    assert (fallido["Tipo"], fallido["Pedido"], fallido["Importe final (EUR)"]) == ("Reembolso", dia, "")
    assert fallido["Estado en la pasarela"].startswith("falló 1 vez, se reintenta")
    assert fallido["Autorizado por"] == "automático (política)"
    r = http.get("/api/movimientos", headers=como("reg-centro"), params={"estado": "fallido"}).json()
    ((mov,), (total,)) = (r["movimientos"], r["totales"])
    assert (mov["importe"], mov["importe_final"], mov["pasarela"]["intentos"]) == ("24.90", None, 1)
    assert (total["tipo"], total["fallidos"], total["importe_final"]) == ("reembolso", 1, "0.00")

    # La pasarela vuelve, la bandeja lo completa: ahora sí tiene importe final, y todo sigue cuadrando.
    http.app.state.servicio.completar_movimientos(solo_vencidos=False)
    filas = _csv(http, como)
    assert not [f for f in filas if f["Estado"] == "fallido"]
    libro = _libro(bd_url)
    assert _sumas(filas)["Reembolso"] == libro["reembolso"] == libro["pasarela_sale"] - D("25.00")
    _auditoria_limpia(bd_url)


def test_filtros_tiendas_propias_y_formato_para_maquinas(http, como, dia):
    talavera = _csv(http, como, "enc-talavera", formato="maquina")
    assert {f["tienda"] for f in talavera} == {"talavera"}
    assert {f["tipo"] for f in talavera} == {"reembolso", "cancelacion", "cambio", "cobro"}
    assert all("." in f["importe"] for f in talavera if f["importe"])
    madrid = _csv(http, como, "enc-madrid-centro", formato="maquina")
    assert sorted(f["tipo"] for f in madrid) == ["reenvio", "vale"]
    r = http.get("/api/movimientos", headers=como("enc-talavera"), params={"tienda": "madrid-centro"})
    assert r.status_code == 403 and "tus tiendas" in r.json()["detalle"]
    r = http.get("/api/movimientos", headers=como("reg-centro"), params={"tipo": "vale", "por_pagina": 1})
    assert r.json()["total"] == 1 and r.json()["movimientos"][0]["numero"].startswith("VA-")
    r = http.get("/api/movimientos", headers=como("reg-centro"), params={"hasta": "2000-01-01T00:00:00Z"})
    assert r.json()["total"] == 0 and r.json()["totales"] == []
    assert http.get("/api/movimientos").status_code == 401
    assert http.get("/api/movimientos", headers=como("C-0001")).status_code == 403
    assert http.get("/api/movimientos", headers=como("reg-centro"), params={"tipo": "otro"}).status_code == 422


def test_la_cli_da_los_mismos_movimientos_y_totales_que_la_api(http, como, bd_url, dia):
    from typer.testing import CliRunner

    from agente.cli.principal import app

    def agente(*args: str):
        r = CliRunner().invoke(app, ["movimientos", *args], env={"DATABASE_URL": bd_url}, prog_name="agente")
        assert r.exit_code == 0, r.output
        return r.output

    api = _csv(http, como, formato="maquina")  # la regional ve las dos tiendas de la demo
    assert list(csv.DictReader(io.StringIO(agente("--csv", "-", "--formato", "maquina")))) == api
    assert "Reembolso" in agente() and "Vale" in agente("--tienda", "madrid-centro")
    assert "No hay movimientos" in agente("--tipo", "cobro_devuelto")
    r = CliRunner().invoke(app, ["movimientos", "--estado", "raro"], env={"DATABASE_URL": bd_url})
    assert r.exit_code != 0 and "estado de movimiento desconocido" in r.output
