"""Una sesión entera de bandeja en Chromium con entrada por enlace de correo (SMTP real,
aiosmtpd) y el registro de accesos del servidor leído al final (issue 28, puntos 2 y 3):
ningún token portador (el de sesión, el del enlace, ningún JWT) aparece en ninguna URL
que el servidor registra ni que el navegador pide."""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from agente.web.app import crear_app
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import (
    DEVOLVER_CAFETERA,
    ajustes_web,
    cab,
    puerto_libre,
    servidor_en_hilo,
    token,
)

pytestmark = pytest.mark.navegador

LUCIA = "enc-talavera@tienda.example"
JWT = re.compile(r"eyJ[\w-]+\.[\w-]+\.[\w-]+")


class _Registro(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lineas: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lineas.append(record.getMessage())


def test_una_sesion_de_bandeja_por_enlace_de_correo_no_deja_tokens_en_ninguna_url(navegador, bd_url, smtp):
    puerto = puerto_libre()
    base = f"http://127.0.0.1:{puerto}"
    ajustes = ajustes_web(bd_url, demo=False, smtp_url=smtp.url, avisos_base_url=base)
    registro = _Registro()
    accesos = [logging.getLogger("uvicorn.access"), logging.getLogger("agente.web.peticiones")]
    with servidor_en_hilo(crear_app(ajustes), puerto=puerto, log_level="info") as base:
        for logger in accesos:
            logger.addHandler(registro)
        try:
            cliente = cab(token(ajustes, "C-0001"))
            hilo = httpx.post(f"{base}/api/conversaciones", headers=cliente).json()["thread_id"]
            httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=cliente, timeout=60,
                       json={"texto": DEVOLVER_CAFETERA})

            p = Pagina(navegador, base)
            pedidas: list[str] = []
            p.pagina.on("request", lambda r: pedidas.append(r.url))
            p.pagina.goto(f"{base}/encargado")
            p.pagina.get_by_label("Tu correo de encargado: te enviamos un enlace para entrar").fill(LUCIA)
            p.pagina.get_by_role("button", name="Enviarme un enlace").click()
            p.expect(p.pagina.locator("#aviso-correo")).to_contain_text("le hemos enviado un enlace",
                                                                         timeout=ESPERA_MS)
            # El correo llega al SMTP real; se abre el enlace como lo abriría la persona.
            for _ in range(100):
                if smtp.correos:
                    break
                p.pagina.wait_for_timeout(100)
            enlace = re.search(r"http://\S+", smtp.correos[-1].texto).group(0)
            token_enlace = parse_qs(urlsplit(enlace).fragment)["t"][0]
            p.pagina.goto(enlace)
            p.pagina.get_by_role("button", name="Entrar en la bandeja").click()
            p.pagina.wait_for_url(f"{base}/encargado", timeout=ESPERA_MS)
            p.expect(p.pagina.locator("#sesion")).to_have_text("Lucía Moreno · Encargado · Talavera de la Reina",
                                                                timeout=ESPERA_MS)
            sesion = p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')")

            # La bandeja en directo: la tarjeta llega por el flujo; se decide.
            tarjeta = p.pagina.locator("article.tarjeta", has_text="Ana García López")
            p.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
            tarjeta.get_by_role("button", name="Aprobar").click()
            tarjeta.get_by_role("button", name="Enviar decisión").click()
            p.expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
            p.pagina.get_by_role("tab", name="Historial").click()
            p.expect(p.pagina.locator("#estado-historial")).to_contain_text("1 decisiones", timeout=ESPERA_MS)
            # Renovar el token, como hace la pestaña a media vida.
            renovado = p.pagina.evaluate("""async () => {
              const t = sessionStorage.getItem('agente.token.encargado');
              const r = await fetch('/api/sesion/renovar', {method: 'POST', headers: {Authorization: 'Bearer ' + t}});
              return (await r.json()).token;
            }""")
            p.pagina.get_by_role("button", name="Cerrar sesión").click()
            p.expect(p.pagina.locator("#sin-sesion")).to_be_visible(timeout=ESPERA_MS)
            assert p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')") is None
            # El enlace ya se gastó: abrirlo otra vez no entra.
            p.pagina.goto(enlace)
            p.pagina.get_by_role("button", name="Entrar en la bandeja").click()
            p.expect(p.pagina.locator("#estado-enlace")).to_contain_text("ya no vale", timeout=ESPERA_MS)
            assert p.errores_js == []
            p.contexto.close()
        finally:
            for logger in accesos:
                logger.removeHandler(registro)

    # El log de accesos de uvicorn (la URL entera, con su query) tiene la sesión entera.
    urls = [linea for linea in registro.lineas if " HTTP/1.1\" " in linea]
    assert any('"GET /api/aprobaciones/eventos HTTP/1.1" 200' in linea for linea in urls), urls
    assert any('"POST /api/entrada/correo/canjear HTTP/1.1" 200' in linea for linea in urls), urls
    assert any('"GET /api/decisiones?' in linea for linea in urls), urls
    propias = [u for u in pedidas if u.startswith(base)]
    for texto in registro.lineas + propias:
        assert "token=" not in texto, texto
        assert not JWT.search(texto), texto
        for secreto in (sesion, renovado, token_enlace):
            assert secreto not in texto, texto
