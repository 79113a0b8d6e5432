"""Las páginas en Chromium de verdad (headless): el cliente y el encargado, a la vez.

Chromium es el paquete de Debian (/usr/bin/chromium); nunca ``playwright install``. Sin
él, estas pruebas se saltan, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1``. Deja capturas de
las dos páginas (escritorio y móvil) en ``artefactos/capturas/``.
"""

from __future__ import annotations

import pytest

from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import DEVOLVER_BATIDORA, DEVOLVER_CAFETERA

pytestmark = pytest.mark.navegador

XSS_RETENIDO = '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script> ¿Y mi reembolso?'
XSS_MOTIVO = '<img src=x onerror="alert(2)"> fuera de plazo <b>sin garantía</b>'


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
