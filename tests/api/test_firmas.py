"""Firmas escalonadas por la API HTTP con el modelo offline: límites por rol, doble firma,
regionales, ediciones y la versión de la matriz con la que espera cada aprobación."""

from __future__ import annotations

from decimal import Decimal

import psycopg

from agente.bd.pool import KWARGS_CONEXION
from nucleo.operaciones import OPERACIONES
from tests.apoyo.firmas import PEDIDO_350, PEDIDO_650, decidir_como, pausa_de_pedido
from tests.apoyo.web_util import sql


def _reembolsos(url: str) -> list[Decimal]:
    return [f["importe"] for f in sql(url, "SELECT importe FROM reembolsos ORDER BY id")]


def test_350_lo_rechaza_el_encargado_con_su_limite_y_lo_aplica_el_gerente(http, como, ajustes):
    hilo = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    # La versión vigente de la matriz por defecto (cada operación nueva añade una con sus filas).
    vigente = sql(ajustes.database_url, "SELECT max(version) AS v FROM matrices_autoridad WHERE tienda IS NULL")[0]["v"]
    assert tarjeta["requisito"] == {"firmas_necesarias": 1, "rol_minimo": "gerente", "importe": "350.00",
                                    "texto": "necesita gerente", "version_matriz": vigente}
    assert tarjeta["firmas"] == []
    r = decidir_como(http, como, hilo, "enc-talavera")
    assert r.status_code == 403, r.text
    assert "300,00 EUR" in r.json()["detalle"] and "350,00 EUR" in r.json()["detalle"]
    # Nada cambió: ni firma, ni decisión, ni reembolso.
    assert http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()["firmas"] == []
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM firmas_aprobacion")[0]["n"] == 0
    assert _reembolsos(ajustes.database_url) == []
    r = decidir_como(http, como, hilo, "ger-talavera")
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada" and "350,00 EUR" in r.json()["mensaje_cliente"]
    assert set(r.json()) == {"estado", "mensaje_cliente"}
    assert _reembolsos(ajustes.database_url) == [Decimal("350.00")]


def test_650_necesita_encargado_y_gerente_y_la_misma_persona_no_firma_dos_veces(http, como, ajustes):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    assert tarjeta["requisito"]["texto"] == "2 firmas, una de gerente o regional"
    assert (tarjeta["requisito"]["firmas_necesarias"], tarjeta["requisito"]["importe"]) == (2, "650.00")
    r = decidir_como(http, como, hilo, "enc-talavera")
    assert r.status_code == 200, r.text
    assert r.json() == {"estado": "esperando_firmas", "firmas": 1, "firmas_necesarias": 2}
    otra_vez = decidir_como(http, como, hilo, "enc-talavera")
    assert otra_vez.status_code == 409, otra_vez.text
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("ger-talavera")).json()
    assert [(f["encargado"], f["rol"], f["decision"]) for f in tarjeta["firmas"]] == [
        ("enc-talavera", "encargado", "approve")]
    assert tarjeta["firmas"][0]["nombre"] and tarjeta["firmas"][0]["fecha"]
    assert tarjeta["estado"] == "pendiente" and _reembolsos(ajustes.database_url) == []
    r = decidir_como(http, como, hilo, "ger-talavera")
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"
    assert _reembolsos(ajustes.database_url) == [Decimal("650.00")]
    firmas = sql(ajustes.database_url, "SELECT encargado_id FROM firmas_aprobacion ORDER BY id")
    assert [f["encargado_id"] for f in firmas] == ["enc-talavera", "ger-talavera"]
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 1


def test_650_dos_encargados_no_bastan_y_la_regional_puede_ser_la_segunda(http, como, ajustes):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert decidir_como(http, como, hilo, "enc-talavera").status_code == 200
    r = decidir_como(http, como, hilo, "enc-talavera-2")
    assert r.status_code == 403, r.text
    assert "300,00 EUR" in r.json()["detalle"]
    assert _reembolsos(ajustes.database_url) == []
    r = decidir_como(http, como, hilo, "reg-centro")
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"
    assert _reembolsos(ajustes.database_url) == [Decimal("650.00")]


def test_un_rechazo_del_segundo_firmante_termina_la_aprobacion(http, como, ajustes):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"
    r = decidir_como(http, como, hilo, "ger-talavera", [{"type": "reject", "message": "Falta el ticket"}])
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"
    assert http.get(f"/api/aprobaciones/{hilo}", headers=como("ger-talavera")).status_code == 404
    assert _reembolsos(ajustes.database_url) == []


def test_editar_650_a_280_lo_aplica_un_encargado_con_una_firma(http, como, ajustes):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    args = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()["acciones"][0]["args"]
    r = decidir_como(http, como, hilo, "enc-talavera", [
        {"type": "edit", "edited_action": {"name": "reembolsar", "args": {**args, "importe": "280.00"}}}])
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada" and "280,00 EUR" in r.json()["mensaje_cliente"]
    assert _reembolsos(ajustes.database_url) == [Decimal("280.00")]


def test_la_regional_ve_y_filtra_las_colas_de_sus_dos_tiendas(http, como):
    talavera = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    madrid = pausa_de_pedido(http, como, "C-0003", "P-20260801-0007")
    todas = http.get("/api/aprobaciones", headers=como("reg-centro")).json()
    assert {a["thread_id"] for a in todas} == {talavera, madrid}
    solo = http.get("/api/aprobaciones?tienda=talavera", headers=como("reg-centro")).json()
    assert [a["thread_id"] for a in solo] == [talavera]
    assert http.get(f"/api/aprobaciones/{madrid}", headers=como("reg-centro")).status_code == 200
    # Los demás siguen viendo solo la suya.
    assert [a["thread_id"] for a in http.get("/api/aprobaciones", headers=como("enc-talavera")).json()] == [talavera]
    assert http.get("/api/aprobaciones?tienda=madrid-centro", headers=como("ger-talavera")).status_code == 403
    assert decidir_como(http, como, madrid, "ger-talavera").status_code == 403


def test_una_aprobacion_que_espera_bajo_la_version_1_se_decide_bajo_la_1(http, como, ajustes):
    from agente.servicio.politica.gestion_autoridad import fijar_matriz

    hilo = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        nueva = fijar_matriz(
            c, tienda="talavera", autor="ger-talavera", motivo="temporada",
            limites={r: {"encargado": Decimal("400"), "gerente": Decimal("1000"), "regional": None}
                     for r in (op.regla for op in OPERACIONES)},
            dos_firmas_por_encima={op.regla: op.matriz.dos_firmas_por_encima for op in OPERACIONES},
        )
    assert nueva.version == 1 and nueva.tienda == "talavera"  # la primera propia de la tienda
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    assert tarjeta["requisito"]["rol_minimo"] == "gerente"
    assert decidir_como(http, como, hilo, "enc-talavera").status_code == 403  # decide la versión de la pausa
    # Mientras espera, otra petición por las mismas unidades no abre tarjeta: se rechaza antes.
    rechazo = [{"type": "reject", "message": "otra vez"}]
    assert decidir_como(http, como, hilo, "ger-talavera", rechazo).status_code == 200
    # Una pausa nueva ya usa la versión nueva: la firma el encargado.
    otra = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    assert http.get(f"/api/aprobaciones/{otra}", headers=como("enc-talavera")).json()["requisito"]["rol_minimo"] == "encargado"


def test_la_auditoria_marca_una_firma_borrada_y_un_requisito_rebajado(http, como, ajustes):
    from agente.servicio.auditoria.informe import hallazgos, informe

    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    assert decidir_como(http, como, hilo, "enc-talavera").status_code == 200
    assert decidir_como(http, como, hilo, "ger-talavera").json()["estado"] == "aplicada"
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        limpio = informe(c)
        assert (limpio["firmas"], limpio["sin_firma"]) == ([], [])
        with c.transaction(force_rollback=True):
            c.execute("DELETE FROM firmas_aprobacion WHERE encargado_id = 'ger-talavera'")
            encontrados = informe(c)
            assert [(f["hallazgo"], f["thread_id"]) for f in encontrados["firmas"]] == [
                ("firmas_insuficientes", hilo)]
            assert "2 firmas" in encontrados["firmas"][0]["detalle"]
            assert hallazgos(encontrados) == 1
        with c.transaction(force_rollback=True):
            c.execute("UPDATE evaluaciones_politica SET autoridad_firmas = 1, autoridad_rol = 'encargado' "
                      "WHERE thread_id = %s", (hilo,))
            assert [f["hallazgo"] for f in informe(c)["firmas"]] == ["requisito_alterado"]
        assert informe(c)["firmas"] == []


def test_la_politica_la_ve_y_cambia_el_gerente_con_versiones_y_un_encargado_no(http, como, ajustes):
    assert http.get("/api/politica/talavera", headers=como("enc-talavera")).status_code == 403
    assert http.get("/api/politica/talavera", headers=como("reg-centro")).status_code == 200
    assert http.get("/api/politica/madrid-centro", headers=como("ger-talavera")).status_code == 403
    antes = http.get("/api/politica/talavera", headers=como("ger-talavera")).json()
    assert antes["matriz"]["propia"] is False
    assert antes["matriz"]["reglas"]["reembolso"]["limites"]["encargado"] == "300.00"
    # Sube el reembolso automático y el límite del encargado: amplía, firma la regional.
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"), json={
        "umbrales": {"limite_reembolso": "80"}, "limites": {"reembolso": {"encargado": "400.00"}},
        "motivo": "temporada alta"})
    assert r.status_code == 202, r.text
    r = http.post(f"/api/solicitudes-politica/{r.json()['id']}/decision", headers=como("reg-centro"),
                  json={"decision": "aprobar"})
    assert r.status_code == 200, r.text
    despues = http.get("/api/politica/talavera", headers=como("ger-talavera")).json()
    assert despues["version"] == antes["version"] + 1 and despues["umbrales"]["limite_reembolso"] == "80.00"
    assert [(v["version"], v["creada_por"], v["motivo"], v["firmada_por"]) for v in despues["historial"]][-1] == (
        despues["version"], "ger-talavera", "temporada alta", "reg-centro")
    assert despues["matriz"]["propia"] is True
    assert despues["matriz"]["reglas"]["reembolso"]["limites"]["encargado"] == "400.00"
    assert despues["matriz"]["reglas"]["sustitucion"]["limites"]["encargado"] == "300.00"
    assert [v["creada_por"] for v in despues["historial_matriz"]] == ["ger-talavera"]
    incoherente = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                            json={"limites": {"reembolso": {"gerente": "100.00"}}})
    assert incoherente.status_code == 422, incoherente.text
    assert http.post("/api/politica/talavera", headers=como("enc-talavera"),
                     json={"umbrales": {"limite_reembolso": "1"}}).status_code == 403


def test_la_cli_ve_y_fija_la_politica_como_quien_ha_entrado(ajustes, bd_url, monkeypatch, tmp_path):
    from agente.web.app import crear_app
    from nucleo.ajustes import ajustes as leer_ajustes
    from tests.apoyo.cli_sesion import Terminal
    from tests.apoyo.web_util import servidor_en_hilo

    monkeypatch.setenv("DATABASE_URL", bd_url)  # «politica ver» es local: lee la base
    leer_ajustes.cache_clear()
    with servidor_en_hilo(crear_app(ajustes)) as base:
        cli = Terminal(base, tmp_path / "config")
        ver = cli("politica", "ver", "--tienda", "talavera")
        assert ver.exit_code == 0, ver.output
        assert "encargado 300,00 EUR" in ver.output and "dos firmas por encima de: 500,00 EUR" in ver.output
        # Endurecer se aplica al momento.
        cli.entrar("reg-centro")
        fijar = cli("politica", "fijar", "--tienda", "talavera", "--limite", "reembolso.encargado=250",
                    "--dos-firmas", "reembolso=400", "--motivo", "prueba")
        assert fijar.exit_code == 0, fijar.output
        assert "encargado 250,00 EUR" in fijar.output and "por reg-centro (prueba)" in fijar.output
        # Ampliar queda como solicitud; el gerente la propone y la regional la firma.
        cli.entrar("ger-talavera")
        pide = cli("politica", "fijar", "--tienda", "talavera", "--dos-firmas", "reembolso=600")
        assert pide.exit_code == 0 and "no se aplica hasta que lo firme" in pide.output, pide.output
        assert "400,00 EUR → 600,00 EUR" in pide.output
        propia = cli("politica", "firmar", "1")
        assert propia.exit_code != 0 and "propio cambio" in propia.output
        cli.entrar("reg-centro")
        lista = cli("politica", "solicitudes")
        assert lista.exit_code == 0 and "Solicitud 1 · talavera · pendiente" in lista.output, lista.output
        firma = cli("politica", "firmar", "1")
        assert firma.exit_code == 0 and "firmado y aplicado" in firma.output, firma.output
        ver = cli("politica", "ver", "--tienda", "talavera")
        assert "dos firmas por encima de: 600,00 EUR" in ver.output and "firmada por reg-centro" in ver.output
        cli.entrar("enc-talavera")
        prohibido = cli("politica", "fijar", "--tienda", "talavera", "--umbral", "limite_reembolso=90")
        assert prohibido.exit_code != 0 and "gerente o un regional" in prohibido.output
    leer_ajustes.cache_clear()


def test_la_cli_recoge_firmas_y_la_regional_decide_en_talavera(http, como, ajustes, monkeypatch, tmp_path):
    from agente.web.app import crear_app
    from nucleo.ajustes import ajustes as leer_ajustes
    from tests.apoyo.cli_sesion import Terminal
    from tests.apoyo.web_util import servidor_en_hilo

    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    monkeypatch.setenv("DATABASE_URL", ajustes.database_url)
    monkeypatch.setenv("AGENTE_MODELO", "offline")
    leer_ajustes.cache_clear()
    try:
        with servidor_en_hilo(crear_app(ajustes)) as base:
            cli = Terminal(base, tmp_path / "config")
            lista = cli("aprobaciones", "--tienda", "talavera")
            assert lista.exit_code == 0 and hilo[:12] in lista.output, lista.output
            cli.entrar("enc-talavera")
            primera = cli("decidir", hilo, "aprobar")
            assert primera.exit_code == 0, primera.output
            assert "Firma registrada (1 de 2)" in primera.output
            otra_vez = cli("decidir", hilo, "aprobar")
            assert otra_vez.exit_code == 2 and "ya has firmado" in otra_vez.output, otra_vez.output
            cli.entrar("reg-centro")
            segunda = cli("decidir", hilo, "aprobar")
            assert segunda.exit_code == 0, segunda.output
            assert "aplicada" in segunda.output and "650,00 EUR" in segunda.output
    finally:
        leer_ajustes.cache_clear()
    assert _reembolsos(ajustes.database_url) == [Decimal("650.00")]


def test_dos_firmas_a_la_vez_se_recogen_las_dos_y_se_aplica_una_sola_vez(http, como, ajustes):
    import threading

    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    servicio = http.app.state.servicio
    barrera, resultados = threading.Barrier(2), {}

    def firmar(quien: str) -> None:
        barrera.wait()
        resultados[quien] = servicio.decidir(hilo, quien, [{"type": "approve"}]).estado

    hilos = [threading.Thread(target=firmar, args=(q,)) for q in ("enc-talavera", "ger-talavera")]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(60)
    assert sorted(resultados.values()) == ["esperando_firmas", "respondida"], resultados
    assert _reembolsos(ajustes.database_url) == [Decimal("650.00")]
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM firmas_aprobacion")[0]["n"] == 2
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 1


def test_el_historial_el_csv_y_la_cli_ensenan_las_dos_firmas_de_650(http, como, ajustes, monkeypatch):
    import csv
    import io
    from datetime import datetime

    from typer.testing import CliRunner

    from agente.cli import app
    from nucleo.ajustes import ajustes as leer_ajustes

    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    args = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()["acciones"][0]["args"]
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "esperando_firmas"
    r = decidir_como(http, como, hilo, "ger-talavera", [
        {"type": "edit", "edited_action": {"name": "reembolsar", "args": {**args, "importe": "600.00"}}}])
    assert r.json()["estado"] == "aplicada", r.text

    # La API: las dos firmas, en orden, con nombre, rol, hora y lo que decidió cada una.
    (decision,) = http.get("/api/decisiones", headers=como("enc-talavera")).json()["decisiones"]
    firmas = decision["firmas"]
    assert [(f["encargado"], f["nombre"], f["rol"], f["decision"]) for f in firmas] == [
        ("enc-talavera", "Lucía Moreno", "encargado", "approve"),
        ("ger-talavera", "Marta Jiménez", "gerente", "edit")]
    assert [f["acciones"] for f in firmas] == [
        [{"tipo": "approve", "importe": None, "motivo": None}],
        [{"tipo": "edit", "importe": "600.00", "motivo": None}]]
    assert datetime.fromisoformat(firmas[0]["fecha"]) <= datetime.fromisoformat(firmas[1]["fecha"])
    assert decision["encargado"]["id"] == "ger-talavera"  # quien la completó
    # Filtrar por quien firmó primero también la encuentra.
    por_lucia = http.get("/api/decisiones", params={"encargado": "enc-talavera"}, headers=como("enc-talavera"))
    assert [d["thread_id"] for d in por_lucia.json()["decisiones"]] == [hilo]

    # El CSV: las dos firmas en la fila de la operación.
    texto = http.get("/api/decisiones.csv?formato=maquina", headers=como("ger-talavera")).text
    (fila,) = list(csv.DictReader(io.StringIO(texto)))
    assert fila["firmas"].startswith("Lucía Moreno (enc-talavera, encargado) ")
    assert " approve; Marta Jiménez (ger-talavera, gerente) " in fila["firmas"]
    assert fila["firmas"].endswith(" edit 600.00")

    # La CLI.
    monkeypatch.setenv("DATABASE_URL", ajustes.database_url)
    monkeypatch.setenv("AGENTE_MODELO", "offline")
    leer_ajustes.cache_clear()
    try:
        salida = CliRunner().invoke(app, ["aprobaciones", "--historial", "--tienda", "talavera"])
    finally:
        leer_ajustes.cache_clear()
    assert salida.exit_code == 0, salida.output
    # La tabla parte las celdas en líneas: cada palabra de cada firma, por separado.
    for dato in ("Lucía", "(enc-talavera,", "encargado)", "aprobó", "Marta", "(ger-talavera,", "gerente)",
                 "editó", "600,00"):
        assert dato in salida.output, (dato, salida.output)
