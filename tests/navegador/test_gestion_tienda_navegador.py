"""Lo nuevo para la tienda en ``/encargado`` (issue 30, punto 8) en Chromium, con axe-core a
1280 y 390 px y capturas en ``artefactos/capturas/gestion-*``:

- la pestaña «Política» de la gerente: lee umbrales y matriz con su versión, propone un
  cambio que amplía y queda como solicitud, que la regional ve en su bandeja («Cambios de
  política por firmar»); a un encargado no se le enseña;
- la pestaña «Conversaciones»: la búsqueda por pedido y estado, la transcripción y «Escribir
  al cliente», que el cliente (otra pestaña con el chat abierto) ve en directo, firmado,
  mientras su aprobación sigue pendiente;
- la tarjeta pendiente abierta en la bandeja: lo que otra persona de la tienda escribe al
  cliente aparece en su conversación sin recargar, firmado («Nombre (tienda)»).
"""

from __future__ import annotations

import pytest

from tests.apoyo.firmas import pausa_con
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import DEVOLVER_CAFETERA

pytestmark = pytest.mark.navegador

GERENTE = "Marta Jiménez (ger-talavera)"
REGIONAL = "Beatriz Romero (reg-centro)"
ENCARGADA = "Lucía Moreno (enc-talavera)"
MENSAJE = "Hola Ana, soy Lucía, de la tienda: reviso tu cafetera esta tarde."


def test_la_gerente_propone_ampliar_y_la_regional_lo_ve_por_firmar(navegador, base):
    gerente = Pagina(navegador, base)
    gerente.entrar(GERENTE, "/encargado")
    expect, pagina = gerente.expect, gerente.pagina
    pestana = pagina.get_by_role("tab", name="Política")
    expect(pestana).to_be_visible(timeout=ESPERA_MS)
    pestana.click()
    expect(pagina.locator("#titulo-matriz")).to_contain_text("Matriz de autoridad · versión", timeout=ESPERA_MS)
    expect(pagina.locator("#titulo-umbrales")).to_contain_text("Umbrales · versión")
    expect(pagina.locator("#contenido-politica")).not_to_contain_text("null")
    fila = pagina.locator("#politica table tr", has_text="Reembolsos")
    expect(fila).to_contain_text("300,00 EUR")  # encargado firma hasta 300,00 EUR
    gerente.accesible("gestion-politica")

    pagina.get_by_label("Qué cambiar").select_option(label="Límite de encargado en reembolsos")
    pagina.get_by_label("Nuevo valor").fill("400,00")
    pagina.get_by_label("Motivo (lo lee quien firma)").fill("Temporada de rebajas")
    pagina.get_by_role("button", name="Proponer el cambio").click()
    creada = pagina.locator(".solicitud-creada")
    expect(creada).to_contain_text("Queda como solicitud", timeout=ESPERA_MS)
    expect(pagina.locator(".resultado-politica")).to_contain_text("300,00 EUR → 400,00 EUR")
    expect(fila).to_contain_text("300,00 EUR")  # ampliar no cambia nada todavía
    gerente.accesible("gestion-politica-solicitud")
    # Endurecer se aplica al momento: versión nueva de los umbrales, con su autora.
    pagina.get_by_label("Qué cambiar").select_option(label="Plazo de una operación que espera firma; pasado, se rechaza sola.")
    pagina.get_by_label("Nuevo valor").fill("48")
    pagina.get_by_role("button", name="Proponer el cambio").click()
    expect(pagina.locator(".aplicada")).to_contain_text("Aplicado", timeout=ESPERA_MS)
    expect(pagina.locator("#titulo-umbrales")).to_contain_text("Umbrales · versión 2")
    # Quién, por su nombre (nunca su id ni «sin autor»; issue 43).
    expect(pagina.locator(".version-vigente").first).to_contain_text("Marta Jiménez")
    expect(pagina.locator("#contenido-politica")).not_to_contain_text("ger-talavera")
    expect(pagina.locator("#contenido-politica")).not_to_contain_text("sin autor")

    regional = Pagina(navegador, base)
    regional.entrar(REGIONAL, "/encargado")
    tarjeta = regional.pagina.locator("#solicitudes-politica article", has_text="Temporada de rebajas")
    regional.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    regional.expect(tarjeta).to_contain_text("Límite de encargado en reembolsos: 300,00 EUR → 400,00 EUR")
    regional.expect(tarjeta).to_contain_text("Marta Jiménez")
    regional.accesible("gestion-politica-regional")
    regional.expect(regional.pagina.get_by_role("tab", name="Política")).to_be_visible()

    encargada = Pagina(navegador, base)
    encargada.entrar(ENCARGADA, "/encargado")
    encargada.expect(encargada.pagina.get_by_role("tab", name="Conversaciones")).to_be_visible()
    encargada.expect(encargada.pagina.locator("#tab-politica")).to_be_hidden()
    for p in (gerente, regional, encargada):
        p.limpia()


def test_buscar_la_conversacion_y_escribir_al_cliente_que_lo_ve_en_directo(navegador, base):
    cliente = Pagina(navegador, base)
    cliente.entrar("Ana García López (C-0001)", "/")
    expect, chat = cliente.expect, cliente.pagina
    caja = chat.get_by_label("Tu mensaje")
    caja.fill("Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea")
    caja.press("Enter")
    expect(chat.locator("#aviso")).to_contain_text("pendiente de revisión por un encargado", timeout=ESPERA_MS)

    encargada = Pagina(navegador, base)
    encargada.entrar(ENCARGADA, "/encargado")
    bandeja = encargada.pagina
    expect(bandeja.locator("#cuenta")).to_have_text("1", timeout=ESPERA_MS)
    bandeja.get_by_role("tab", name="Conversaciones").click()
    panel = bandeja.locator("#conversaciones")
    lista = panel.locator("#lista-conversaciones")
    panel.get_by_label("Pedido").fill("P-20260917-0041")
    panel.get_by_label("Estado").select_option(label="Esperando a la tienda")
    panel.get_by_role("button", name="Buscar").click()
    expect(bandeja.locator("#estado-conversaciones")).to_have_text("1 conversación", timeout=ESPERA_MS)
    expect(lista.locator("li")).to_have_count(1)
    expect(lista).to_contain_text("Ana García López (C-0001)")
    expect(lista).to_contain_text("Esperando a la tienda")
    encargada.accesible("gestion-conversaciones-busqueda")
    panel.get_by_label("Estado").select_option(label="Resuelta")
    panel.get_by_role("button", name="Buscar").click()
    expect(bandeja.locator("#estado-conversaciones")).to_contain_text("Ninguna conversación", timeout=ESPERA_MS)
    panel.get_by_label("Estado").select_option(label="Todos")
    panel.get_by_role("button", name="Buscar").click()
    expect(lista.locator("li")).to_have_count(1, timeout=ESPERA_MS)

    lista.get_by_role("button", name="Ana García López").click()
    vista = bandeja.locator("#vista-conversacion")
    expect(vista).to_contain_text("quiero devolver la cafetera", ignore_case=True, timeout=ESPERA_MS)
    expect(vista).to_contain_text("con una aprobación pendiente")
    encargada.accesible("gestion-conversacion")
    vista.get_by_role("button", name="Escribir al cliente").click()
    vista.get_by_label("Mensaje para Ana García López (lo verá firmado con tu nombre)").fill(MENSAJE)
    encargada.accesible("gestion-escribir")
    vista.get_by_role("button", name="Enviar al cliente").click()
    expect(vista.locator(".resultado")).to_contain_text("Enviado", timeout=ESPERA_MS)
    expect(vista.locator(".linea-chat.tienda")).to_contain_text("Lucía Moreno (tienda)")

    # El cliente, con el chat abierto, lo ve en directo, firmado; su espera sigue igual.
    del_tienda = chat.locator("#mensajes li.mensaje.tienda")
    expect(del_tienda).to_contain_text(MENSAJE, timeout=ESPERA_MS)
    expect(del_tienda.locator(".autor")).to_contain_text("Lucía Moreno")
    expect(chat.locator("#aviso")).to_contain_text("pendiente de revisión por un encargado")
    cliente.accesible("gestion-chat-mensaje-tienda")
    # La aprobación sigue en la bandeja, sin decidir.
    bandeja.get_by_role("tab", name="Pendientes").click()
    tarjeta = bandeja.locator("article.tarjeta", has_text="Ana García López")
    expect(tarjeta).to_be_visible()
    expect(bandeja.locator("#cuenta")).to_have_text("1")
    # Y su conversación, en la tarjeta (leída de nuevo), dice quién de la tienda escribió.
    bandeja.reload()
    expect(tarjeta.locator(".linea-chat.tienda .quien")).to_have_text("Lucía Moreno (tienda)", timeout=ESPERA_MS)
    cliente.limpia()
    encargada.limpia()


def test_la_tarjeta_abierta_ve_sin_recargar_lo_que_otra_persona_de_la_tienda_escribe(navegador, base, http, como):
    hilo = pausa_con(http, como, "C-0001", DEVOLVER_CAFETERA)
    encargada = Pagina(navegador, base)
    encargada.entrar(ENCARGADA, "/encargado")
    expect, bandeja = encargada.expect, encargada.pagina
    tarjeta = bandeja.locator("article.tarjeta", has_text="Ana García López")
    conversacion = tarjeta.locator(".ficha")
    expect(conversacion).to_contain_text("quiero devolver la cafetera", ignore_case=True, timeout=ESPERA_MS)
    expect(conversacion.locator(".linea-chat.tienda")).to_have_count(0)
    bandeja.evaluate("window.sinRecargar = true")

    # La gerente, desde otro sitio, escribe al cliente de ese hilo por la API.
    texto = "Hola Ana, soy Marta, la gerente: mañana te llamamos por la cafetera."
    r = http.post(f"/api/personal/conversaciones/{hilo}/mensajes", headers=como("ger-talavera"), json={"texto": texto})
    assert r.status_code == 201, r.text

    de_la_tienda = conversacion.locator(".linea-chat.tienda")
    expect(de_la_tienda).to_have_count(1, timeout=ESPERA_MS)
    expect(de_la_tienda.locator(".quien")).to_have_text("Marta Jiménez (tienda)")
    expect(de_la_tienda).to_contain_text(texto)
    assert bandeja.evaluate("window.sinRecargar") is True  # la misma página: no se recargó
    expect(bandeja.locator("#cuenta")).to_have_text("1")  # la aprobación sigue pendiente
    encargada.accesible("gestion-tarjeta-mensaje-tienda")
    encargada.limpia()
