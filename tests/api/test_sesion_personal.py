"""La sesión del personal abierta por OIDC o por enlace (issue 28): el mismo token firmado
de la bandeja, de vida corta, renovado mientras la pestaña está abierta y nunca más allá
de ``AGENTE_TOKEN_HORAS`` desde que se entró ni para quien se dio de baja."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jwt

from agente.servicio.resultados import Encargado
from agente.web.entrada.auth import emitir_sesion
from tests.apoyo.web_util import cab, sql

LUCIA = Encargado(encargado_id="enc-talavera", tienda="talavera", nombre="Lucía Moreno", rol="encargado",
                  tiendas=("talavera",))


def _datos(ajustes, token):
    return jwt.decode(token, ajustes.secreto.get_secret_value(), algorithms=["HS256"])


def test_el_token_de_sesion_es_de_vida_corta_y_se_renueva(http, ajustes):
    token = emitir_sesion(ajustes, LUCIA, "correo")
    datos = _datos(ajustes, token)
    assert datos["exp"] - datos["iat"] == ajustes.sesion_minutos * 60
    r = http.post("/api/sesion/renovar", headers=cab(token))
    assert r.status_code == 200, r.text
    nuevo = _datos(ajustes, r.json()["token"])
    assert (nuevo["encargado_id"], nuevo["tienda"], nuevo["ent"], nuevo["ini"]) == (
        "enc-talavera", "talavera", "correo", datos["ini"])
    assert nuevo["exp"] >= datos["exp"]


def test_un_token_de_la_cli_no_se_renueva(http, tok):
    r = http.post("/api/sesion/renovar", headers=cab(tok("enc-talavera")))
    assert r.status_code == 403


def test_una_baja_corta_la_renovacion(http, ajustes):
    token = emitir_sesion(ajustes, LUCIA, "correo")
    sql(ajustes.database_url, "UPDATE encargados SET activo = false WHERE id = 'enc-talavera'")
    assert http.post("/api/sesion/renovar", headers=cab(token)).status_code == 403


def test_la_sesion_no_se_renueva_mas_alla_del_maximo(http, ajustes):
    inicio = datetime.now(UTC) - timedelta(hours=ajustes.token_horas, minutes=1)
    token = emitir_sesion(ajustes, LUCIA, "correo", inicio=inicio)
    r = http.post("/api/sesion/renovar", headers=cab(token))
    assert r.status_code == 401
    assert "máximo" in r.json()["detalle"]
