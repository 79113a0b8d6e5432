"""La CLI firma como la persona que ha entrado (issue 39, punto 1), contra un servidor de
verdad (la app servida en un hilo): ``agente entrar`` guarda la sesión (0600), ``agente
salir`` la borra, lo que hace una persona pasa por la API del servidor (su pasarela, no el
entorno de la terminal) y cada firma guarda su canal."""

from __future__ import annotations

import json
import re
import stat
from datetime import UTC, datetime, timedelta

import pytest

from agente.web.app import crear_app
from agente.web.entrada.auth import emitir_token
from tests.apoyo.cli_sesion import EnlaceDelCorreo, Terminal
from tests.apoyo.servidor_stripe import CLAVE, SECRETO_WEBHOOK, servidor_stripe
from tests.apoyo.web_util import (
    ajustes_web,
    cliente_http,
    conversacion_en_pausa,
    puerto_libre,
    servidor_en_hilo,
    sql,
)


@pytest.fixture
def servidor(ajustes):
    with servidor_en_hilo(crear_app(ajustes)) as base:
        yield base


@pytest.fixture
def terminal(servidor, tmp_path):
    return Terminal(servidor, tmp_path / "config")


def _solicitud(salida: str) -> str:
    return re.search(r"Solicitud (\d+) ·", salida).group(1)


def test_proponer_y_firmar_una_ampliacion_desde_la_cli_necesita_que_entren_dos_personas(terminal, bd_url):
    terminal.entrar("ger-talavera")
    pide = terminal("politica", "fijar", "--tienda", "talavera", "--umbral", "limite_cancelacion=900")
    assert pide.exit_code == 0 and "no se aplica hasta que lo firme" in pide.output, pide.output
    numero = _solicitud(pide.output)

    misma = terminal("politica", "firmar", numero)
    assert misma.exit_code == 2, misma.output
    assert "Error: nadie firma su propio cambio de política" in misma.output
    otra = terminal("politica", "firmar", numero, "--firmante", "reg-centro")
    assert otra.exit_code == 2 and "--firmante reg-centro no elige quién actúa" in otra.output, otra.output
    assert sql(bd_url, "SELECT estado FROM solicitudes_politica")[0]["estado"] == "pendiente"

    assert "Has entrado como" in terminal.entrar("reg-centro").output
    firma = terminal("politica", "firmar", numero)
    assert firma.exit_code == 0 and "Cambio firmado y aplicado" in firma.output, firma.output
    (fila,) = sql(bd_url, "SELECT autor, decidida_por, canal, canal_decision FROM solicitudes_politica")
    assert fila == {"autor": "ger-talavera", "decidida_por": "reg-centro", "canal": "cli", "canal_decision": "cli"}


def test_decidir_actua_como_quien_ha_entrado_y_una_opcion_no_lo_cambia(terminal, http, tok, bd_url, monkeypatch):
    hilo = conversacion_en_pausa(http, tok)
    terminal.entrar("enc-talavera")
    otro = terminal("decidir", hilo, "aprobar", "--encargado", "enc-madrid-centro")
    assert otro.exit_code == 2 and "no elige quién actúa" in otro.output, otro.output
    assert sql(bd_url, "SELECT count(*) AS n FROM firmas_aprobacion")[0]["n"] == 0

    r = terminal("decidir", hilo[:10], "editar", "--importe", "90,50", "--nota", "gracias por esperar")
    assert r.exit_code == 0 and "Decisión registrada y aplicada" in r.output, r.output
    assert "90,50 EUR" in r.output and "gracias por esperar" in r.output
    assert sql(bd_url, "SELECT encargado_id FROM decisiones_encargado") == [{"encargado_id": "enc-talavera"}]
    assert sql(bd_url, "SELECT encargado_id, canal FROM firmas_aprobacion") == [
        {"encargado_id": "enc-talavera", "canal": "cli"}]

    from nucleo.ajustes import ajustes as leer_ajustes

    monkeypatch.setenv("DATABASE_URL", bd_url)
    leer_ajustes.cache_clear()
    try:
        historial = terminal("aprobaciones", "--historial")
        auditoria = terminal("auditoria")
    finally:
        leer_ajustes.cache_clear()
    assert "por la CLI" in historial.output, historial.output
    assert "Firmas por canal" in auditoria.output and "cli" in auditoria.output, auditoria.output


def test_una_firma_por_la_web_queda_con_su_canal(http, tok, bd_url):
    from tests.apoyo.web_util import cab

    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    assert sql(bd_url, "SELECT canal FROM firmas_aprobacion") == [{"canal": "web"}]


def test_la_decision_de_la_cli_sale_por_la_pasarela_del_servidor_no_por_la_de_la_terminal(bd_url, tmp_path):
    with servidor_stripe() as stripe:
        stripe.pagos["pi_demo_p_20260917_0041"] = 12000
        ajustes = ajustes_web(bd_url, pasarela="stripe", stripe_clave=CLAVE,
                              stripe_secreto_webhook=SECRETO_WEBHOOK, stripe_api_base=stripe.base)
        with cliente_http(ajustes) as http, servidor_en_hilo(crear_app(ajustes)) as base:
            hilo = conversacion_en_pausa(http, lambda s: emitir_token(
                ajustes, rol="cliente", sujeto=s, tienda="talavera"))
            terminal = Terminal(base, tmp_path / "config")
            terminal.entrar("enc-talavera")
            # La terminal no sabe nada de Stripe: si decidiera ella, saldría por la simulada.
            r = terminal("decidir", hilo, "aprobar", AGENTE_PASARELA="simulada")
            assert r.exit_code == 0, r.output
        assert len(stripe.reembolsos) == 1
        (reembolso,) = stripe.reembolsos.values()
    assert reembolso["amount"] == 12000


def test_la_sesion_se_guarda_solo_para_su_dueno_y_salir_la_borra(terminal):
    r = terminal.entrar("enc-talavera")
    assert "Lucía" in r.output or "enc-talavera" in r.output
    assert stat.S_IMODE(terminal.fichero.stat().st_mode) == 0o600
    assert stat.S_IMODE(terminal.fichero.parent.stat().st_mode) == 0o700
    guardada = json.loads(terminal.fichero.read_text())
    assert guardada["persona"]["id"] == "enc-talavera" and guardada["token"]

    salir = terminal("salir")
    assert salir.exit_code == 0 and "Sesión cerrada" in salir.output
    assert not terminal.fichero.exists()
    sin_sesion = terminal("politica", "solicitudes")
    assert sin_sesion.exit_code == 2 and "no has entrado" in sin_sesion.output
    assert "agente entrar" in sin_sesion.output


def _guardar_token(terminal: Terminal, token: str) -> None:
    terminal.fichero.parent.mkdir(parents=True, exist_ok=True)
    terminal.fichero.write_text(json.dumps({"servidor": terminal.servidor, "token": token,
                                            "persona": {"id": "ger-talavera", "rol": "gerente"}}))


def test_una_sesion_caducada_o_falsa_da_un_error_claro_y_codigo_distinto_de_cero(terminal, ajustes):
    _guardar_token(terminal, "esto-no-es-un-token")
    falsa = terminal("politica", "solicitudes")
    assert falsa.exit_code == 2, falsa.output
    assert "Error: token no válido (vuelve a entrar con «agente entrar»)" in falsa.output
    assert "Traceback" not in falsa.output

    hace_un_rato = datetime.now(UTC) - timedelta(hours=1)
    caducado = emitir_token(ajustes, rol="encargado", sujeto="ger-talavera", tienda="talavera", horas=0.25,
                            ahora=hace_un_rato, extra={"ent": "demo", "ini": int(hace_un_rato.timestamp()), "can": "cli"})
    _guardar_token(terminal, caducado)
    r = terminal("politica", "solicitudes")
    assert r.exit_code == 2 and "tu sesión ha caducado: vuelve a entrar con «agente entrar»" in r.output, r.output


def test_la_sesion_se_renueva_a_media_vida_como_la_de_la_web(terminal, ajustes):
    hace_diez = datetime.now(UTC) - timedelta(minutes=10)
    viejo = emitir_token(ajustes, rol="encargado", sujeto="ger-talavera", tienda="talavera", horas=0.25,
                         ahora=hace_diez, extra={"ent": "demo", "ini": int(hace_diez.timestamp()), "can": "cli"})
    _guardar_token(terminal, viejo)
    r = terminal("politica", "solicitudes")
    assert r.exit_code == 0, r.output
    nuevo = json.loads(terminal.fichero.read_text())["token"]
    assert nuevo != viejo
    import jwt

    datos = jwt.decode(nuevo, options={"verify_signature": False})
    assert datos["can"] == "cli" and datos["ini"] == int(hace_diez.timestamp())
    assert stat.S_IMODE(terminal.fichero.stat().st_mode) == 0o600


def test_entrar_con_el_enlace_del_correo_pegado_en_la_terminal(bd_url, smtp, tmp_path, monkeypatch):
    ajustes = ajustes_web(bd_url, smtp_url=smtp.url, avisos_base_url="https://bandeja.tienda.example")
    with servidor_en_hilo(crear_app(ajustes)) as base:
        terminal = Terminal(base, tmp_path / "config")
        correo = "ger-talavera@tienda.example"
        pega = EnlaceDelCorreo(smtp, correo)
        monkeypatch.setattr("typer.prompt", pega)
        r = terminal("entrar", "--correo", correo)
        assert r.exit_code == 0, r.output
        assert pega.preguntas == ["Pega aquí el enlace del correo"]
        assert "Has entrado como" in r.output and "ger-talavera, gerente" in r.output
        assert "https://" not in r.output  # el enlace pegado no se repite en la pantalla
        assert terminal("politica", "solicitudes").exit_code == 0
        datos = json.loads(terminal.fichero.read_text())
    import jwt

    assert jwt.decode(datos["token"], options={"verify_signature": False})["can"] == "cli"


def test_entrar_en_la_demo_con_un_servidor_que_no_es_demo_lo_dice(bd_url, tmp_path):
    from tests.apoyo.web_util import SECRETO

    ajustes = ajustes_web(bd_url, demo=False, secreto=SECRETO)
    with servidor_en_hilo(crear_app(ajustes)) as base:
        r = Terminal(base, tmp_path / "config")("entrar", "--demo", "enc-talavera")
    assert r.exit_code == 2 and "no está en modo demo (AGENTE_DEMO)" in r.output, r.output


def test_sin_servidor_la_cli_dice_como_arrancarlo(tmp_path):
    r = Terminal(f"http://127.0.0.1:{puerto_libre()}", tmp_path / "config")("entrar", "--demo", "enc-talavera")
    assert r.exit_code == 2 and "no se puede hablar con el servidor" in r.output and "agente serve" in r.output
