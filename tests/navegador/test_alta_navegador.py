"""La pestaña «Alta» de ``/encargado`` (issue 43, punto 1) en Chromium, con axe-core a 1280
y 390 px: un administrador ve tiendas y personas, da de alta a una encargada (queda anotado
con su nombre y por la web) y lee en español por qué el servidor rechaza un alta; a un
encargado la pestaña no se le enseña."""

from __future__ import annotations

import pytest

from agente.web.entrada.auth import emitir_token
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import ajustes_web, sql

pytestmark = pytest.mark.navegador

ADMIN_SQL = """
INSERT INTO encargados (id, nombre, email, rol, tienda, administrador)
VALUES ('adm', 'Ana Ruiz', 'adm@mitienda.es', 'regional', NULL, true)
"""


def _abrir(navegador, base, bd_url, sujeto: str, tienda: str) -> Pagina:
    p = Pagina(navegador, base)
    token = emitir_token(ajustes_web(bd_url), rol="encargado", sujeto=sujeto, tienda=tienda)
    p.pagina.goto(f"{base}/encargado#token={token}")
    return p


def test_el_administrador_da_de_alta_a_una_encargada_en_la_pestana_alta(navegador, base, bd_url):
    sql(bd_url, ADMIN_SQL)
    p = _abrir(navegador, base, bd_url, "adm", "")
    expect, pagina = p.expect, p.pagina
    expect(pagina.locator("#sesion")).to_have_text("Ana Ruiz · Administrador", timeout=ESPERA_MS)
    pagina.get_by_role("tab", name="Alta").click()
    tiendas = pagina.get_by_role("region", name="Tiendas")
    expect(tiendas).to_contain_text("Talavera de la Reina", timeout=ESPERA_MS)
    expect(tiendas).to_contain_text("Madrid-Centro")
    p.accesible("alta-administrador")

    pagina.get_by_label("Id (p. ej. enc-mi-tienda)").fill("enc-nueva")
    pagina.get_by_label("Nombre y apellidos").fill("Eva Sanz")
    pagina.get_by_label("Correo (con él entra)").fill("eva.sanz@mitienda.es")
    pagina.get_by_label("Rol", exact=True).select_option("encargado")
    pagina.get_by_label("Tienda (encargado y gerente)").select_option("talavera")
    pagina.get_by_role("button", name="Dar de alta a la persona").click()
    expect(pagina.locator("#aviso-alta")).to_have_text("Eva Sanz dada de alta: ya puede entrar con su correo.",
                                                       timeout=ESPERA_MS)
    expect(pagina.get_by_role("region", name="Personas")).to_contain_text("eva.sanz@mitienda.es")
    assert sql(bd_url, "SELECT quien, canal, objeto_id FROM cambios_alta") == [
        {"quien": "adm", "canal": "web", "objeto_id": "enc-nueva"}]

    # El mismo correo otra vez: el motivo del servidor, tal cual.
    pagina.get_by_label("Id (p. ej. enc-mi-tienda)").fill("enc-otra")
    pagina.get_by_label("Nombre y apellidos").fill("Eva Otra")
    pagina.get_by_label("Correo (con él entra)").fill("eva.sanz@mitienda.es")
    pagina.get_by_label("Tienda (encargado y gerente)").select_option("talavera")
    pagina.get_by_role("button", name="Dar de alta a la persona").click()
    expect(pagina.locator("#aviso-alta")).to_have_text("Ya hay otra persona con el correo eva.sanz@mitienda.es.",
                                                       timeout=ESPERA_MS)
    assert p.errores_js == []
    p.contexto.close()


def test_a_un_encargado_no_se_le_ensena_la_pestana_alta(navegador, base, bd_url):
    p = _abrir(navegador, base, bd_url, "enc-talavera", "talavera")
    # La pestaña se decide al leer la sesión: cuando el nombre está, ya está decidida.
    p.expect(p.pagina.locator("#sesion")).to_have_text("Lucía Moreno · Encargado · Talavera de la Reina",
                                                       timeout=ESPERA_MS)
    p.expect(p.pagina.get_by_role("tab", name="Alta")).to_be_hidden()
    p.contexto.close()
