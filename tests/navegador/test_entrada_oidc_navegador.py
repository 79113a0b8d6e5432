"""La entrada del personal por OpenID Connect (issue 28), en Chromium y contra un proveedor
real (npm ``oidc-provider``) con sus páginas de login: entra, llega a la bandeja de su
tienda, decide y cierra sesión (también en el proveedor); lo que no debe entrar se rechaza
con una página en español y sin crear nada."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest

from agente.web.app import crear_app
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.oidc_real import CLIENTE, SECRETO_CLIENTE
from tests.apoyo.web_util import DEVOLVER_CAFETERA, ajustes_web, cab, servidor_en_hilo, sql, token

pytestmark = pytest.mark.navegador


def _ajustes(bd_url, oidc_real, **extra):
    proveedor = {"nombre": "pruebas", "titulo": "Proveedor de pruebas", "emisor": oidc_real.emisor,
                 "client_id": CLIENTE, "client_secret": SECRETO_CLIENTE, "dominios": ["tienda.example"]}
    return ajustes_web(bd_url, demo=False, oidc_proveedores=[proveedor], avisos_base_url=oidc_real.base_app,
                       **extra)


@pytest.fixture
def app_oidc(bd_url, oidc_real):
    ajustes = _ajustes(bd_url, oidc_real)
    with servidor_en_hilo(crear_app(ajustes), puerto=oidc_real.puerto_app) as base:
        yield base, ajustes


def _cambiar_parametro(url: str, nombre: str, valor: str) -> str:
    partes = urlsplit(url)
    consulta = [(k, valor if k == nombre else v) for k, v in parse_qsl(partes.query, keep_blank_values=True)]
    return urlunsplit(partes._replace(query=urlencode(consulta)))


def _manipular_ida(p: Pagina, parametro: str, valor: str) -> None:
    """Quien se interpone cambia un parámetro de la ida al proveedor (la redirección de la
    app); Playwright no intercepta los saltos de una redirección, así que se reescribe esta."""
    def manejar(ruta):
        respuesta = ruta.fetch(max_redirects=0)
        cabeceras = {**respuesta.headers}
        cabeceras["location"] = _cambiar_parametro(cabeceras["location"], parametro, valor)
        ruta.fulfill(response=respuesta, headers=cabeceras)

    p.pagina.route(f"{p.base}/entrada/oidc/pruebas", manejar)


def _login_en_el_proveedor(pagina, oidc_real, login: str) -> None:
    """Las páginas de login y consentimiento del proveedor, como las recorre una persona."""
    pagina.wait_for_url(re.compile(re.escape(oidc_real.emisor) + r"/interaction/.*"), timeout=ESPERA_MS)
    pagina.locator("input[name=login]").fill(login)
    pagina.locator("input[name=password]").fill("cualquier-clave")
    pagina.get_by_role("button", name="Sign-in").click()
    pagina.get_by_role("button", name="Continue").click(timeout=ESPERA_MS)


def _accesible(p: Pagina) -> None:
    """axe-core no encuentra nada serio ni crítico (escritorio y 390 px)."""
    from axe_playwright_python.sync_playwright import Axe

    from tests.apoyo.navegador import ESCRITORIO, MOVIL

    for tamano in (ESCRITORIO, MOVIL):
        p.pagina.set_viewport_size(tamano)
        graves = [(v["id"], v["impact"]) for v in Axe().run(p.pagina).response["violations"]
                  if v["impact"] in ("serious", "critical")]
        assert graves == [], (p.pagina.url, tamano, graves)
    p.pagina.set_viewport_size(ESCRITORIO)


def _empezar(p: Pagina) -> None:
    p.pagina.goto(f"{p.base}/encargado")
    p.pagina.get_by_role("link", name="Entrar con Proveedor de pruebas").click(timeout=ESPERA_MS)


def test_un_encargado_entra_por_oidc_decide_en_su_bandeja_y_cierra_sesion(navegador, app_oidc, oidc_real):
    base, ajustes = app_oidc
    cliente = cab(token(ajustes, "C-0001"))
    hilo = httpx.post(f"{base}/api/conversaciones", headers=cliente).json()["thread_id"]
    r = httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=cliente, timeout=60,
                   json={"texto": DEVOLVER_CAFETERA})
    assert r.json()["estado"] == "esperando_aprobacion"
    assert httpx.get(f"{base}/demo").status_code == 404  # fuera del modo demo no hay login de demo

    p = Pagina(navegador, base)
    p.pagina.goto(f"{base}/encargado")
    p.expect(p.pagina.get_by_role("link", name="Entrar con Proveedor de pruebas")).to_be_visible(timeout=ESPERA_MS)
    _accesible(p)
    _empezar(p)
    _login_en_el_proveedor(p.pagina, oidc_real, "lucia")
    p.pagina.wait_for_url(f"{base}/encargado", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#sesion")).to_have_text("Lucía Moreno · Encargado · Talavera de la Reina", timeout=ESPERA_MS)
    assert "token" not in p.pagina.url  # el fragmento se quita al leerlo
    sesion = p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')")
    assert sesion.count(".") == 2

    tarjeta = p.pagina.locator("article.tarjeta", has_text="Ana García López")
    p.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    p.expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    assert sql(ajustes.database_url, "SELECT encargado_id FROM decisiones_encargado WHERE thread_id = %(h)s",
               {"h": hilo})[0]["encargado_id"] == "enc-talavera"

    # Cerrar sesión: el token fuera y la sesión del proveedor también (su página de salida).
    p.pagina.get_by_role("button", name="Cerrar sesión").click()
    p.pagina.wait_for_url(re.compile(re.escape(oidc_real.emisor) + r"/session/end.*"), timeout=ESPERA_MS)
    p.pagina.get_by_role("button", name=re.compile("Yes")).click()
    p.pagina.wait_for_url(f"{base}/encargado", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#sin-sesion")).to_be_visible(timeout=ESPERA_MS)
    assert p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')") is None
    # Volver a entrar pide otra vez el login: el proveedor también la olvidó.
    p.pagina.get_by_role("link", name="Entrar con Proveedor de pruebas").click()
    p.pagina.locator("input[name=login]").wait_for(timeout=ESPERA_MS)
    assert p.errores_js == []
    p.contexto.close()


@pytest.mark.parametrize(("login", "texto"), [
    ("desconocida", "No hay ningún encargado con el correo nadie@tienda.example"),
    ("pedro", "está dada de baja"),
    ("sinverificar", "correo sin verificar"),
])
def test_quien_no_es_un_encargado_activo_ve_un_rechazo_en_espanol_y_no_se_crea_nada(
    navegador, app_oidc, oidc_real, login, texto,
):
    base, ajustes = app_oidc
    antes = sql(ajustes.database_url, "SELECT count(*) AS n FROM encargados")[0]["n"]
    p = Pagina(navegador, base)
    _empezar(p)
    with p.pagina.expect_response(re.compile(r".*/entrada/oidc/pruebas/vuelta.*")) as vuelta:
        _login_en_el_proveedor(p.pagina, oidc_real, login)
    assert vuelta.value.status in (400, 403)
    p.expect(p.pagina.locator("#titulo-rechazo")).to_have_text("No has podido entrar", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#motivo-rechazo")).to_contain_text(texto)
    _accesible(p)
    assert p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')") is None
    assert sql(ajustes.database_url, "SELECT count(*) AS n FROM encargados")[0]["n"] == antes
    p.contexto.close()


def test_un_state_manipulado_se_rechaza(navegador, app_oidc, oidc_real):
    base, _ = app_oidc
    p = Pagina(navegador, base)
    _manipular_ida(p, "state", "otro-state")  # vuelve con un state que no es el de su cookie
    _empezar(p)
    _login_en_el_proveedor(p.pagina, oidc_real, "lucia")
    p.expect(p.pagina.locator("#motivo-rechazo")).to_contain_text("(state)", timeout=ESPERA_MS)
    assert p.pagina.evaluate("sessionStorage.getItem('agente.token.encargado')") is None
    p.contexto.close()


def test_un_nonce_equivocado_en_el_id_token_se_rechaza(navegador, app_oidc, oidc_real):
    base, _ = app_oidc
    p = Pagina(navegador, base)
    _manipular_ida(p, "nonce", "nonce-ajeno")  # el proveedor firma un ID token con otro nonce
    _empezar(p)
    _login_en_el_proveedor(p.pagina, oidc_real, "lucia")
    p.expect(p.pagina.locator("#motivo-rechazo")).to_contain_text("(nonce)", timeout=ESPERA_MS)
    p.contexto.close()
