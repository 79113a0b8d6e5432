"""Entrada del personal por enlace de correo (issue 28, punto 2), con un SMTP real
(aiosmtpd): un enlace de un solo uso y 15 minutos, solo su hash en la base, la misma
respuesta exista o no la dirección y un límite de ritmo por dirección y por IP."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from agente.servicio.entrada import enlaces
from tests.apoyo.a_la_vez import a_la_vez
from tests.apoyo.web_util import ajustes_web, cab, cliente_http, sql

LUCIA = "enc-talavera@tienda.example"
JAVIER = "enc-madrid-centro@tienda.example"
PEDRO_BAJA = "enc-talavera-baja@tienda.example"


@pytest.fixture
def entorno(bd_url, smtp):
    ajustes = ajustes_web(bd_url, smtp_url=smtp.url, avisos_base_url="https://bandeja.tienda.example")
    with cliente_http(ajustes) as http:
        yield http, smtp


def _pedir(http, email: str):
    return http.post("/api/entrada/correo", json={"email": email})


def _enlace(smtp, email: str) -> tuple[str, str, str]:
    """(url, correo, token) del último correo de entrada que recibió ``email``."""
    correo = [c for c in smtp.correos if c.para == [email]][-1]
    assert correo.asunto == "Tu enlace para entrar en la bandeja"
    url = re.search(r"https://\S+", correo.texto).group(0)
    fragmento = parse_qs(urlsplit(url).fragment)
    return url, fragmento["correo"][0], fragmento["t"][0]


def _canjear(http, email: str, token: str):
    return http.post("/api/entrada/correo/canjear", json={"email": email, "token": token})


def test_el_enlace_entra_una_vez_y_el_segundo_uso_falla(entorno):
    http, smtp = entorno
    r = _pedir(http, LUCIA)
    assert r.status_code == 202
    url, correo, token = _enlace(smtp, LUCIA)
    # El token va en el fragmento: el navegador no lo envía al pedir la página.
    assert urlsplit(url).path == "/entrada/correo" and not urlsplit(url).query
    assert correo == LUCIA

    r = _canjear(http, correo, token)
    assert r.status_code == 200, r.text
    sesion = r.json()["token"]
    assert http.get("/api/aprobaciones", headers=cab(sesion)).status_code == 200

    r = _canjear(http, correo, token)
    assert r.status_code == 401
    assert "ya no vale" in r.json()["detalle"]


def test_en_la_base_solo_queda_el_hash_del_token(entorno):
    http, smtp = entorno
    _pedir(http, LUCIA)
    _, _, token = _enlace(smtp, LUCIA)
    filas = sql(http.app.state.ajustes.database_url, "SELECT * FROM enlaces_entrada")
    assert len(filas) == 1
    assert bytes(filas[0]["hash"]) == hashlib.sha256(token.encode()).digest()
    assert token not in repr(filas)


def test_un_enlace_caducado_no_vale(entorno):
    http, smtp = entorno
    _pedir(http, LUCIA)
    _, correo, token = _enlace(smtp, LUCIA)
    sql(http.app.state.ajustes.database_url,
        "UPDATE enlaces_entrada SET caduca = now() - interval '1 second'")
    assert _canjear(http, correo, token).status_code == 401


def test_el_enlace_caduca_a_los_15_minutos(entorno):
    http, smtp = entorno
    _pedir(http, LUCIA)
    fila = sql(http.app.state.ajustes.database_url, "SELECT caduca - creado AS vida FROM enlaces_entrada")[0]
    assert fila["vida"].total_seconds() == 15 * 60


def test_un_enlace_con_otra_direccion_no_vale_y_no_se_gasta(entorno):
    http, smtp = entorno
    _pedir(http, LUCIA)
    _, correo, token = _enlace(smtp, LUCIA)
    assert _canjear(http, JAVIER, token).status_code == 401
    assert _canjear(http, correo, token).status_code == 200


def test_la_respuesta_no_revela_si_la_direccion_existe(entorno):
    http, smtp = entorno
    respuestas = [_pedir(http, e) for e in (LUCIA, "nadie@tienda.example", PEDRO_BAJA)]
    assert {r.status_code for r in respuestas} == {202}
    assert len({r.text for r in respuestas}) == 1
    assert len({tuple(sorted((k, v) for k, v in r.headers.items() if k != "date")) for r in respuestas}) == 1
    # Solo le llega a quien es un encargado activo.
    assert [c.para for c in smtp.correos] == [[LUCIA]]


def test_el_limite_por_direccion_se_cumple_exista_o_no(entorno):
    http, smtp = entorno
    for email in (LUCIA, "nadie@tienda.example"):
        codigos = [_pedir(http, email).status_code for _ in range(enlaces.POR_DIRECCION + 1)]
        assert codigos == [202] * enlaces.POR_DIRECCION + [429]
    r = _pedir(http, LUCIA)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    assert len(smtp.correos) == enlaces.POR_DIRECCION


def test_el_limite_por_ip_se_cumple(entorno):
    http, _ = entorno
    codigos = [_pedir(http, f"persona{i}@tienda.example").status_code for i in range(enlaces.POR_IP + 1)]
    assert codigos == [202] * enlaces.POR_IP + [429]


def test_doce_peticiones_a_la_vez_para_una_direccion_envian_solo_tres_enlaces(entorno):
    # Antes, la cuenta y la anotación no se serializaban: 12 a la vez dejaban 6 enlaces.
    http, smtp = entorno
    codigos = [r.status_code for r in a_la_vez([lambda: _pedir(http, LUCIA)] * 12)]
    assert sorted(codigos) == [202] * enlaces.POR_DIRECCION + [429] * (12 - enlaces.POR_DIRECCION)
    filas = sql(http.app.state.ajustes.database_url, "SELECT count(*) AS n FROM enlaces_entrada")
    assert filas[0]["n"] == enlaces.POR_DIRECCION
    assert len([c for c in smtp.correos if c.para == [LUCIA]]) == enlaces.POR_DIRECCION


def test_veinte_peticiones_a_la_vez_desde_una_ip_pasan_solo_diez(entorno):
    http, _ = entorno
    pedir = [lambda i=i: _pedir(http, f"persona{i}@tienda.example") for i in range(20)]
    codigos = [r.status_code for r in a_la_vez(pedir)]
    assert sorted(codigos) == [202] * enlaces.POR_IP + [429] * (20 - enlaces.POR_IP)


def test_sin_smtp_no_hay_entrada_por_correo(bd_url):
    with cliente_http(ajustes_web(bd_url)) as http:
        assert http.get("/api/entrada/proveedores").json() == {"proveedores": [], "correo": False}
        assert _pedir(http, LUCIA).status_code == 404
