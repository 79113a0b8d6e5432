"""Las páginas en Chromium de verdad (headless): el cliente y el encargado, a la vez.

Chromium es el paquete de Debian (/usr/bin/chromium); nunca ``playwright install``. Sin
él, estas pruebas se saltan, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1``. Deja capturas de
las dos páginas (escritorio y móvil) en ``artefactos/capturas/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agente.web.app import crear_app
from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import DEVOLVER_BATIDORA, DEVOLVER_CAFETERA, ajustes_web, servidor_en_hilo

pytestmark = pytest.mark.navegador

CHROMIUM = Path("/usr/bin/chromium")
CAPTURAS = RAIZ / "artefactos" / "capturas"
ESCRITORIO = {"width": 1280, "height": 800}
MOVIL = {"width": 390, "height": 844}
ESPERA_MS = 15_000
XSS_RETENIDO = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script> ¿Y mi reembolso?'
XSS_MOTIVO = '<img src=x onerror="alert(2)"> fuera de plazo <b>sin garantía</b>'


@pytest.fixture(scope="module")
def navegador():
    if not CHROMIUM.exists():
        if os.environ.get("AGENTE_EXIGIR_NAVEGADOR") == "1":
            pytest.fail("falta /usr/bin/chromium (apt-get install -y chromium) y AGENTE_EXIGIR_NAVEGADOR=1")
        pytest.skip("sin /usr/bin/chromium: pruebas de navegador omitidas")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        navegador = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield navegador
        navegador.close()


@pytest.fixture
def base(bd_url):
    with servidor_en_hilo(crear_app(ajustes_web(bd_url))) as url:
        yield url


class Pagina:
    """Una pestaña en su propio contexto (sesión aparte), con los diálogos y peticiones externas anotados."""

    def __init__(self, navegador, base: str):
        from playwright.sync_api import expect

        self.expect = expect
        self.contexto = navegador.new_context(viewport=ESCRITORIO, locale="es-ES")
        self.pagina = self.contexto.new_page()
        self.dialogos: list[str] = []
        self.externas: list[str] = []
        self.errores_js: list[str] = []
        self.pagina.on("dialog", lambda d: (self.dialogos.append(d.message), d.dismiss()))
        self.pagina.on("pageerror", lambda e: self.errores_js.append(str(e)))
        self.pagina.on("request", lambda r: None if r.url.startswith(base) else self.externas.append(r.url))
        self.base = base

    def entrar(self, nombre_boton: str, destino: str) -> None:
        self.pagina.goto(f"{self.base}/demo")
        self.pagina.get_by_role("button", name=nombre_boton).click()
        self.pagina.wait_for_url(f"{self.base}{destino}")
        self.pagina.locator("body[data-listo='1']").wait_for(timeout=ESPERA_MS)

    def capturar(self, nombre: str) -> None:
        CAPTURAS.mkdir(parents=True, exist_ok=True)
        for etiqueta, tamano in (("escritorio", ESCRITORIO), ("movil", MOVIL)):
            self.pagina.set_viewport_size(tamano)
            # Usable a 390 px: nada se sale por la derecha.
            assert self.pagina.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), etiqueta
            self.pagina.screenshot(path=str(CAPTURAS / f"{nombre}-{etiqueta}.png"), full_page=True)
        self.pagina.set_viewport_size(ESCRITORIO)

    def limpia(self) -> None:
        assert self.dialogos == []
        assert self.externas == []
        assert self.errores_js == []
        assert self.pagina.evaluate("window.__xss") is None


def _cliente_pide(cliente: Pagina, texto: str) -> None:
    cliente.pagina.get_by_label("Tu mensaje").fill(texto)
    cliente.pagina.get_by_role("button", name="Enviar").click()
    cliente.expect(cliente.pagina.locator("#aviso")).to_contain_text(
        "pendiente de revisión por un encargado", timeout=ESPERA_MS)
    cliente.expect(cliente.pagina.locator("#mensajes li.agente").last).to_contain_text(
        "pendiente de revisión", timeout=ESPERA_MS)


def test_encargado_edita_a_90_y_el_cliente_lo_ve_sin_recargar(navegador, base):
    cliente = Pagina(navegador, base)
    cliente.entrar("Ana García López (C-0001)", "/")
    expect = cliente.expect
    _cliente_pide(cliente, DEVOLVER_CAFETERA)
    cliente.pagina.evaluate("window.__sinRecargar = true")

    # Mientras espera, el cliente escribe algo con HTML: se guarda y lo verá el encargado.
    cliente.pagina.get_by_label("Tu mensaje").fill(XSS_RETENIDO)
    cliente.pagina.get_by_role("button", name="Enviar").click()
    # Es información (mensaje guardado), no un error: va en #informacion, no en la nota roja.
    expect(cliente.pagina.locator("#informacion")).to_contain_text("sigue pendiente", timeout=ESPERA_MS)
    expect(cliente.pagina.locator("#mensajes li.cliente").last).to_contain_text("<script>", timeout=ESPERA_MS)
    cliente.capturar("cliente-pendiente")

    encargado = Pagina(navegador, base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    tarjeta = encargado.pagina.locator("article.tarjeta", has_text="Ana García López")
    expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    expect(tarjeta).to_contain_text("P-20260917-0041")
    expect(tarjeta).to_contain_text("120,00 EUR")
    expect(tarjeta.locator(".motivos")).to_contain_text("supera el límite")
    expect(tarjeta.locator(".retenidos")).to_contain_text('<img src=x onerror="window.__xss=1;alert(1)">')
    assert tarjeta.locator("img, script, b").count() == 0
    expect(tarjeta.get_by_role("button", name="Responder")).to_have_count(0)  # reembolsar no lo admite
    encargado.capturar("encargado")

    tarjeta.get_by_role("button", name="Editar importe").click()
    tarjeta.get_by_label("Nuevo importe (EUR)").fill("90")
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    expect(tarjeta.locator(".resultado")).to_contain_text("90,00 EUR")

    # La página del cliente, abierta desde antes, recibe la respuesta por /eventos.
    # Tras el mensaje final llega la respuesta al mensaje retenido: el final ya no es el último.
    final = cliente.pagina.locator("#mensajes li.agente", has_text="Un encargado ha revisado")
    expect(final).to_contain_text("90,00 EUR", timeout=ESPERA_MS)
    expect(cliente.pagina.locator("#aviso")).to_be_hidden()
    assert cliente.pagina.evaluate("window.__sinRecargar") is True
    assert cliente.pagina.locator("#mensajes img, #mensajes script").count() == 0
    cliente.capturar("cliente")

    # La tarjeta decidida desaparece de la bandeja con la siguiente actualización.
    tarjeta.get_by_role("button", name="Cerrar").click()
    expect(encargado.pagina.locator("#vacia")).to_be_visible(timeout=ESPERA_MS)
    cliente.limpia()
    encargado.limpia()


def test_rechazo_con_motivo_llega_al_cliente_como_texto(navegador, base):
    # La bandeja está abierta y vacía antes de la petición: la tarjeta aparece sola.
    encargado = Pagina(navegador, base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    expect = encargado.expect
    expect(encargado.pagina.locator("#vacia")).to_be_visible()
    encargado.pagina.evaluate("window.__sinRecargar = true")

    cliente = Pagina(navegador, base)
    cliente.entrar("Elena Navarro Ramos (C-0005)", "/")
    _cliente_pide(cliente, DEVOLVER_BATIDORA)

    tarjeta = encargado.pagina.locator("article.tarjeta", has_text="Elena Navarro Ramos")
    expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    assert encargado.pagina.evaluate("window.__sinRecargar") is True
    expect(tarjeta.get_by_role("button", name="Editar importe")).to_be_visible()
    tarjeta.get_by_role("button", name="Rechazar con motivo").click()
    tarjeta.get_by_label("Motivo del rechazo (lo leerá el cliente)").fill(XSS_MOTIVO)
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    assert tarjeta.locator(".resultado img, .resultado b").count() == 0

    ultimo = cliente.pagina.locator("#mensajes li.agente").last
    expect(ultimo).to_contain_text("fuera de plazo", timeout=ESPERA_MS)
    expect(ultimo).to_contain_text('<img src=x onerror="alert(2)">')
    assert cliente.pagina.locator("#mensajes img, #mensajes b").count() == 0
    expect(cliente.pagina.locator("#aviso")).to_be_hidden()
    cliente.limpia()
    encargado.limpia()
