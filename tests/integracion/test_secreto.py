"""Fuera del modo demo el secreto de los tokens debe ser fuerte; ``agente secreto`` da uno."""

from __future__ import annotations

import string

import pytest
from typer.testing import CliRunner

from agente.web.app import crear_app
from nucleo.ajustes import SECRETO_DEMO
from nucleo.errores import ErrorConfiguracion
from nucleo.secretos import defecto_del_secreto
from tests.apoyo.web_util import SECRETO, ajustes_web

DEBILES = {
    "vacío": "",
    "una letra": "x",
    "un espacio": " ",
    "de la demo": SECRETO_DEMO,
    "corto": "Kf8#qL2!vZ9@",
    "un carácter repetido": "s" * 64,
    "dos caracteres alternos": "ab" * 32,
    "un bloque repetido": "abcdefghij" * 4,
    "hexadecimal de 16 bytes": "62c6d365acff191da21f0c9a7e2b61d8",
    "con un espacio delante": " " + SECRETO,
    "con salto de línea detrás": SECRETO + "\n",
}


@pytest.mark.parametrize("secreto", DEBILES.values(), ids=DEBILES.keys())
def test_fuera_de_demo_un_secreto_debil_impide_arrancar_con_una_linea_que_nombra_el_ajuste(
    bd_url, secreto, monkeypatch
):
    with pytest.raises(ErrorConfiguracion, match="^AGENTE_SECRETO: el secreto "):
        crear_app(ajustes_web(bd_url, demo=False, secreto=secreto))
    from agente.cli import app as cli

    monkeypatch.setenv("AGENTE_SECRETO", secreto)
    monkeypatch.setenv("AGENTE_DEMO", "0")
    monkeypatch.setenv("DATABASE_URL", bd_url)
    for orden in (["serve", "--port", "1"], ["token", "encargado", "enc-talavera"]):
        resultado = CliRunner().invoke(cli, orden)
        assert resultado.exit_code == 2, orden
        lineas = resultado.output.strip().splitlines()
        assert len(lineas) == 1, lineas
        assert lineas[0].startswith("Error: AGENTE_SECRETO: el secreto ")
        assert "agente secreto" in lineas[0]
        assert "eyJ" not in resultado.output  # no se ha emitido ningún token


def test_en_modo_demo_vale_el_secreto_de_la_demo(bd_url):
    assert crear_app(ajustes_web(bd_url, demo=True, secreto=SECRETO_DEMO))


def test_agente_secreto_imprime_uno_nuevo_que_pasa_la_comprobacion_y_arranca(bd_url):
    from agente.cli import app as cli

    vistos = set()
    for _ in range(3):
        resultado = CliRunner().invoke(cli, ["secreto"])
        assert resultado.exit_code == 0
        secreto = resultado.output.strip()
        assert len(secreto) == 64 and set(secreto) <= set(string.hexdigits.lower())
        assert defecto_del_secreto(secreto) is None
        vistos.add(secreto)
    assert len(vistos) == 3  # aleatorio: nunca el mismo
    assert crear_app(ajustes_web(bd_url, demo=False, secreto=vistos.pop()))


@pytest.mark.parametrize("secreto", [SECRETO, "Xq7#mP2v!Lr9@Tz4$Kw8&Nb3*Hs6^Jd1", "mZ3v0Qe9Lr2sT8yKc1Wb7NfXh4Jd6Pu5gA0oRtEiYwM"])
def test_un_secreto_largo_y_variado_vale(secreto):
    assert defecto_del_secreto(secreto) is None
