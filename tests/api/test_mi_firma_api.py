"""La bandeja dice, a quien pregunta, si su firma contaría y por qué no (issue 30, punto 3), con
la misma comprobación que la decisión; y, para una regional con varias tiendas (punto 4), quién
ha entrado (rol y tiendas por su nombre), la tienda de cada tarjeta y de cada fila del historial,
y el historial y su CSV filtrados por tienda."""

from __future__ import annotations

import csv
import io

from tests.apoyo.firmas import PEDIDO_350, PEDIDO_650, decidir_como, pausa_de_pedido

FALTA_GERENTE = "1 firma (gerente o regional)"


def _mi_firma(http, como, hilo: str, quien: str) -> dict:
    """La de la ficha, que es la misma que la de su fila en la bandeja."""
    ficha = http.get(f"/api/aprobaciones/{hilo}", headers=como(quien)).json()
    fila = next(a for a in http.get("/api/aprobaciones", headers=como(quien)).json() if a["thread_id"] == hilo)
    assert fila["mi_firma"] == ficha["mi_firma"]
    return ficha["mi_firma"]


def test_650_cada_firmante_sabe_antes_de_pulsar_si_su_firma_cuenta(http, como):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert _mi_firma(http, como, hilo, "enc-talavera") == {
        "puede": True, "motivo": None, "ya_firmada": False, "falta": None}
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"

    # Quien ya firmó: no puede firmar otra vez, y sabe lo que falta.
    primera = _mi_firma(http, como, hilo, "enc-talavera")
    assert primera["ya_firmada"] is True and primera["puede"] is False
    assert primera["falta"] == FALTA_GERENTE
    r = decidir_como(http, como, hilo, "enc-talavera")
    assert r.status_code == 409 and r.json()["detalle"] == primera["motivo"]

    # Otra encargada: su firma no cuenta (mismo rol, límite de 300,00 EUR), con el motivo exacto
    # que daría la decisión (403), sin haber pulsado nada.
    segunda = _mi_firma(http, como, hilo, "enc-talavera-2")
    assert (segunda["puede"], segunda["ya_firmada"], segunda["falta"]) == (False, False, FALTA_GERENTE)
    assert "300,00 EUR" in segunda["motivo"] and "650,00 EUR" in segunda["motivo"]
    r = decidir_como(http, como, hilo, "enc-talavera-2")
    assert r.status_code == 403 and r.json()["detalle"] == segunda["motivo"]

    # El gerente y la regional sí completan.
    for quien in ("ger-talavera", "reg-centro"):
        assert _mi_firma(http, como, hilo, quien) == {
            "puede": True, "motivo": None, "ya_firmada": False, "falta": FALTA_GERENTE}
    assert decidir_como(http, como, hilo, "ger-talavera").json()["estado"] == "aplicada"
    assert http.get("/api/aprobaciones", headers=como("enc-talavera")).json() == []


def test_650_si_firma_antes_el_gerente_la_segunda_puede_ser_de_cualquiera(http, como):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert decidir_como(http, como, hilo, "ger-talavera").json()["estado"] == "esperando_firmas"
    assert _mi_firma(http, como, hilo, "enc-talavera") == {
        "puede": True, "motivo": None, "ya_firmada": False, "falta": "1 firma"}
    assert _mi_firma(http, como, hilo, "ger-talavera")["falta"] == "1 firma"
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "aplicada"


def test_350_el_encargado_ve_su_limite_y_el_gerente_puede(http, como):
    hilo = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    mia = _mi_firma(http, como, hilo, "enc-talavera")
    assert (mia["puede"], mia["ya_firmada"], mia["falta"]) == (False, False, None)
    r = decidir_como(http, como, hilo, "enc-talavera")
    assert r.status_code == 403 and r.json()["detalle"] == mia["motivo"]
    assert _mi_firma(http, como, hilo, "ger-talavera")["puede"] is True


def test_quien_ha_entrado_con_su_rol_y_sus_tiendas_por_nombre(http, como):
    regional = http.get("/api/sesion", headers=como("reg-centro"))
    assert regional.status_code == 200, regional.text
    assert regional.json() == {
        "id": "reg-centro", "nombre": "Beatriz Romero", "rol": "regional", "administrador": False,
        "tienda": {"id": "madrid-centro", "nombre": "Madrid-Centro"},
        "tiendas": [{"id": "madrid-centro", "nombre": "Madrid-Centro"},
                    {"id": "talavera", "nombre": "Talavera de la Reina"}],
    }
    gerente = http.get("/api/sesion", headers=como("ger-talavera")).json()
    assert (gerente["rol"], [t["nombre"] for t in gerente["tiendas"]]) == ("gerente", ["Talavera de la Reina"])
    assert http.get("/api/sesion").status_code == 401
    assert http.get("/api/sesion", headers=como("C-0001")).status_code == 403


def _pausa_en_cada_tienda(http, como) -> tuple[str, str]:
    return (pausa_de_pedido(http, como, "C-0009", PEDIDO_350),
            pausa_de_pedido(http, como, "C-0003", "P-20260801-0007"))


def _la_regional_las_aprueba(http, como, *hilos: str) -> None:
    for hilo in hilos:
        assert decidir_como(http, como, hilo, "reg-centro").json()["estado"] == "aplicada"


def test_tarjetas_e_historial_dicen_la_tienda_y_el_historial_filtra_por_ella(http, como):
    talavera, madrid = _pausa_en_cada_tienda(http, como)
    tarjetas = {a["thread_id"]: a["tienda_nombre"] for a in http.get("/api/aprobaciones", headers=como("reg-centro")).json()}
    assert tarjetas == {talavera: "Talavera de la Reina", madrid: "Madrid-Centro"}
    _la_regional_las_aprueba(http, como, talavera, madrid)

    todas = http.get("/api/decisiones", headers=como("reg-centro")).json()
    assert {d["thread_id"]: d["tienda_nombre"] for d in todas["decisiones"]} == tarjetas
    solo = http.get("/api/decisiones", params={"tienda": "madrid-centro"}, headers=como("reg-centro")).json()
    assert (solo["total"], [d["thread_id"] for d in solo["decisiones"]]) == (1, [madrid])
    # Una tienda que no es suya: 403, también en el CSV.
    assert http.get("/api/decisiones", params={"tienda": "madrid-centro"}, headers=como("ger-talavera")).status_code == 403
    assert http.get("/api/decisiones.csv", params={"tienda": "madrid-centro"}, headers=como("ger-talavera")).status_code == 403


def test_el_csv_filtra_por_tienda_en_los_dos_formatos(http, como):
    talavera, madrid = _pausa_en_cada_tienda(http, como)
    _la_regional_las_aprueba(http, como, talavera, madrid)
    maquina = http.get("/api/decisiones.csv", params={"tienda": "talavera", "formato": "maquina"},
                       headers=como("reg-centro"))
    filas = list(csv.DictReader(io.StringIO(maquina.text)))
    assert [(f["tienda"], f["hilo"]) for f in filas] == [("talavera", talavera)]
    hoja = http.get("/api/decisiones.csv", params={"tienda": "madrid-centro"}, headers=como("reg-centro"))
    filas = list(csv.DictReader(io.StringIO(hoja.content.decode("utf-8-sig")), delimiter=";"))
    assert [(f["Tienda"], f["Hilo"]) for f in filas] == [("madrid-centro", madrid)]
    todas = http.get("/api/decisiones.csv", params={"formato": "maquina"}, headers=como("reg-centro"))
    assert {f["hilo"] for f in csv.DictReader(io.StringIO(todas.text))} == {talavera, madrid}
