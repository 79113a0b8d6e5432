"""La bandeja renueva el token de vida corta de una sesión del personal mientras la pestaña
sigue abierta (issue 28), con el reloj de la página adelantado (Playwright ``clock``)."""

from __future__ import annotations

import time

import jwt
import pytest

from agente.servicio.resultados import Encargado
from agente.web.app import crear_app
from agente.web.entrada.auth import emitir_sesion
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import ajustes_web, servidor_en_hilo

pytestmark = pytest.mark.navegador

LUCIA = Encargado(encargado_id="enc-talavera", tienda="talavera", nombre="Lucía Moreno", rol="encargado",
                  tiendas=("talavera",))
LEER = "sessionStorage.getItem('agente.token.encargado')"


def test_la_bandeja_renueva_el_token_de_la_sesion_a_media_vida(navegador, bd_url):
    ajustes = ajustes_web(bd_url, demo=False, sesion_minutos=2)
    with servidor_en_hilo(crear_app(ajustes)) as base:
        p = Pagina(navegador, base)
        p.pagina.clock.install()
        inicial = emitir_sesion(ajustes, LUCIA, "correo")
        p.pagina.goto(f"{base}/encargado#token={inicial}")
        p.expect(p.pagina.locator("#sesion")).to_have_text("Lucía Moreno · Encargado · Talavera de la Reina",
                                                            timeout=ESPERA_MS)
        assert p.pagina.evaluate(LEER) == inicial
        p.pagina.clock.run_for(30_000)
        assert p.pagina.evaluate(LEER) == inicial  # aún no: a media vida (60 s)
        p.pagina.clock.run_for(35_000)
        # Sondeo desde Python: wait_for_function con texto usa eval, que la CSP de la página prohíbe.
        limite = time.monotonic() + ESPERA_MS / 1000
        while p.pagina.evaluate(LEER) == inicial and time.monotonic() < limite:
            p.pagina.wait_for_timeout(100)
        renovado = p.pagina.evaluate(LEER)
        datos = jwt.decode(renovado, ajustes.secreto.get_secret_value(), algorithms=["HS256"])
        assert (datos["encargado_id"], datos["ent"]) == ("enc-talavera", "correo")
        assert p.errores_js == []
        p.contexto.close()
