"""La bandeja y el chat de producto en Chromium de verdad (issue 15), con axe-core.

El recorrido: el cliente elige un pedido del saludo, pide un reembolso y escribe otro mensaje
mientras espera; el encargado ve la transcripción con el retenido, el historial y el estado de
la línea, dice «lo atiendo yo» y edita con una nota; el chat abierto recibe el mensaje final con
la nota y después la respuesta al retenido; la decisión sale en el historial y en el CSV.
axe-core (axe-playwright-python, inyectado en la página) no encuentra nada serio ni crítico en
el chat, la bandeja (pendientes e historial) y el login de demo, en escritorio y a 390 px.
Capturas en ``artefactos/capturas/``.
"""

from __future__ import annotations

import pytest

from tests.apoyo.navegador import ESPERA_MS, Pagina

pytestmark = pytest.mark.navegador

HELD = "¿Dónde está mi pedido P-20260919-0055?"
NOTA = "Te devolvemos 90 € porque la caja llegó abierta."


def test_recorrido_completo_de_cliente_y_encargado(navegador, base, tmp_path):
    demo = Pagina(navegador, base)
    demo.pagina.goto(f"{base}/demo")
    demo.pagina.get_by_role("button", name="Ana García López (C-0001)").wait_for(timeout=ESPERA_MS)
    demo.accesible("bandeja-demo")

    cliente = Pagina(navegador, base)
    cliente.entrar("Ana García López (C-0001)", "/")
    expect = cliente.expect
    chat = cliente.pagina
    # El saludo ofrece sus pedidos: elige la cafetera.
    boton = chat.locator("#saludo button[data-pedido='P-20260917-0041']")
    expect(boton).to_be_visible(timeout=ESPERA_MS)
    cliente.accesible("bandeja-chat-saludo")
    boton.click()
    caja = chat.get_by_label("Tu mensaje")
    expect(caja).to_have_value("Pedido P-20260917-0041: ")
    caja.press_sequentially("quiero devolver la cafetera porque gotea")
    caja.press("Enter")
    expect(chat.locator("#aviso")).to_contain_text("pendiente de revisión por un encargado", timeout=ESPERA_MS)
    expect(caja).to_have_value("")  # sin salto de línea suelto
    # Mientras espera, otro mensaje: se guarda y se avisa como información, no como error.
    caja.fill(HELD)
    caja.press("Enter")
    expect(chat.locator("#informacion")).to_contain_text("sigue pendiente", timeout=ESPERA_MS)
    expect(chat.locator("#nota")).to_be_hidden()
    expect(chat.locator("#mensajes li.cliente").last).to_contain_text(HELD, timeout=ESPERA_MS)
    # Fecha y hora en cada mensaje.
    assert "/" in chat.locator("#mensajes li.cliente time").first.inner_text()
    cliente.accesible("bandeja-chat-pendiente")

    encargado = Pagina(navegador, base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    bandeja = encargado.pagina
    tarjeta = bandeja.locator("article.tarjeta", has_text="Ana García López")
    expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    assert bandeja.title().startswith("(1) ")
    expect(tarjeta.locator(".transcripcion")).to_contain_text("quiero devolver la cafetera", timeout=ESPERA_MS)
    expect(tarjeta.locator(".linea-chat.retenido")).to_contain_text(HELD)
    expect(tarjeta.locator(".historial-cliente summary")).to_contain_text("Historial del cliente (90 días)")
    expect(tarjeta.locator("table.lineas")).to_contain_text("sin compensar")
    expect(tarjeta.locator(".plazo")).to_contain_text("Caduca en")
    tarjeta.get_by_role("button", name="Lo atiendo yo").click()
    expect(tarjeta.locator(".reclamo")).to_contain_text("La atiendes tú", timeout=ESPERA_MS)
    encargado.accesible("bandeja-bandeja-pendientes")

    tarjeta.get_by_role("button", name="Editar importe").click()
    tarjeta.get_by_label("Nuevo importe (EUR)").fill("90")
    tarjeta.get_by_label("Nota para el cliente (opcional; se añade al mensaje final)").fill(NOTA)
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    expect(tarjeta.locator(".resultado")).to_contain_text(NOTA)

    # El chat abierto recibe el final con la nota y después la respuesta al retenido.
    con_nota = chat.locator("#mensajes li.agente", has_text=NOTA)
    expect(con_nota).to_be_visible(timeout=ESPERA_MS)
    expect(con_nota).not_to_contain_text("120,00")
    expect(chat.locator("#mensajes li.agente").last).to_contain_text("P-20260919-0055", timeout=ESPERA_MS)
    expect(chat.locator("#aviso")).to_be_hidden()

    # El historial y su CSV.
    bandeja.get_by_role("tab", name="Historial").click()
    fila = bandeja.locator("#tabla-historial tbody tr", has_text="Ana García López")
    expect(fila).to_contain_text("Editada", timeout=ESPERA_MS)
    expect(fila).to_contain_text("90,00 EUR")
    expect(fila).to_contain_text("Reembolso · P-20260917-0041")  # el título, no «reembolsar»
    encargado.accesible("bandeja-bandeja-historial")
    with bandeja.expect_download() as descarga:
        bandeja.get_by_role("button", name="Exportar CSV").click()
    ruta = tmp_path / "decisiones.csv"
    descarga.value.save_as(ruta)
    contenido = ruta.read_bytes()
    assert contenido.startswith(b"\xef\xbb\xbf")  # para la hoja de cálculo: BOM, «;» y coma decimal
    contenido = contenido.decode("utf-8-sig")
    assert "P-20260917-0041" in contenido and ";90,00;" in contenido and NOTA in contenido
    cliente.limpia()
    encargado.limpia()
    demo.limpia()
