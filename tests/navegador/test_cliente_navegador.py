"""Lo que ve el cliente en Chromium de verdad, con axe-core a 1280 y a 390 px (issue 30).

El recorrido: en /demo cada identidad dice su cargo y su escenario; en el chat, la cabecera
dice su nombre y el de su tienda (no «Cliente C-0001 · tienda talavera»), el saludo le llama
por su nombre y el aviso de espera dice cuánto suele tardar la tienda; lo que escribe mientras
espera se contesta, tras la decisión y sin recargar, con el desenlace («Sigo aquí: ...») y no
con la presentación de serie; «Tus conversaciones» dice «resuelta» y su tema, sin las vacías.
Capturas en ``artefactos/capturas/``.
"""

from __future__ import annotations

import httpx
import pytest

from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import DEVOLVER_CAFETERA, EDITAR_A_90, ajustes_web, cab, sql, token

pytestmark = pytest.mark.navegador

RETENIDO = "¿Hay novedades?"
# Cinco decisiones de personas de Talavera de unas 2 h: bastantes para decir la espera típica.
HILO_ESPERAS_SQL = "INSERT INTO consultas_asistente (thread_id, cliente_id, tienda) VALUES ('h-espera-demo', 'C-0002', 'talavera')"
ESPERAS_SQL = """
INSERT INTO decisiones_encargado (thread_id, interrupt_id, encargado_id, tienda, peticion, decisiones, espera_segundos)
SELECT 'h-espera-demo', 'i-' || n, 'enc-talavera', 'talavera', '{}', '[{"type": "approve"}]', 7000 + n
FROM generate_series(1, 5) AS n;
"""


def test_la_demo_ensena_cargos_y_escenarios_y_la_pagina_tiene_favicon(navegador, base):
    demo = Pagina(navegador, base)
    demo.pagina.goto(f"{base}/demo")
    demo.pagina.locator("body[data-listo='1']").wait_for(timeout=ESPERA_MS)
    gerente = demo.pagina.locator("li.identidad", has_text="Marta Jiménez")
    demo.expect(gerente).to_contain_text("gerente · Talavera de la Reina")
    demo.expect(gerente).to_contain_text("firma hasta 1.000,00 EUR")
    regional = demo.pagina.locator("li.identidad", has_text="Beatriz Romero")
    demo.expect(regional).to_contain_text("Regional de Talavera de la Reina y Madrid-Centro")
    demo.expect(demo.pagina.locator("li.identidad", has_text="Irene Delgado Serrano")).to_contain_text(
        "la firma un gerente o la regional")
    assert demo.pagina.locator("#clientes li.identidad .escenario").count() == 12
    icono = demo.pagina.locator("link[rel=icon]").get_attribute("href")
    assert httpx.get(f"{base}{icono}").status_code == 200
    assert httpx.get(f"{base}/favicon.ico").headers["content-type"].startswith("image/svg+xml")
    demo.accesible("cliente-demo")
    demo.limpia()


def test_el_cliente_ve_su_nombre_su_tienda_la_espera_y_el_desenlace_de_lo_que_escribio_esperando(
    navegador, base, bd_url
):
    sql(bd_url, HILO_ESPERAS_SQL)
    sql(bd_url, ESPERAS_SQL)
    cliente = Pagina(navegador, base)
    cliente.entrar("Ana García López (C-0001)", "/")
    pagina, expect = cliente.pagina, cliente.expect
    expect(pagina.locator("#sesion")).to_have_text("Ana García López · Talavera de la Reina")
    expect(pagina.locator("#saludo")).to_contain_text("Hola, Ana.")
    cliente.accesible("cliente-saludo")

    pagina.get_by_label("Tu mensaje").fill(DEVOLVER_CAFETERA)
    pagina.get_by_role("button", name="Enviar").click()
    aviso = pagina.locator("#aviso")
    expect(aviso).to_contain_text("pendiente de revisión por un encargado", timeout=ESPERA_MS)
    expect(aviso).to_contain_text("Normalmente responde en unas 2 h")
    expect(pagina.locator("#mensajes li.agente").last).to_contain_text("Talavera de la Reina")  # el autor
    pagina.get_by_label("Tu mensaje").fill(RETENIDO)
    pagina.get_by_role("button", name="Enviar").click()
    expect(pagina.locator("#informacion")).to_contain_text("sigue pendiente", timeout=ESPERA_MS)
    cliente.accesible("cliente-esperando")
    pagina.evaluate("window.__sinRecargar = true")

    (hilo,) = [f["thread_id"] for f in sql(bd_url, "SELECT thread_id FROM aprobaciones_pendientes")]
    encargado = cab(token(ajustes_web(bd_url), "enc-talavera"))
    r = httpx.post(f"{base}/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=encargado, timeout=60)
    assert r.status_code == 200, r.text

    # Sin recargar: primero el desenlace y después, a lo escrito esperando, el desenlace otra vez.
    respuesta = pagina.locator("#mensajes li.agente", has_text="Sigo aquí")
    expect(respuesta).to_contain_text("90,00 EUR", timeout=ESPERA_MS)
    expect(respuesta).not_to_contain_text("modo sin conexión")
    assert pagina.evaluate("window.__sinRecargar") is True
    expect(aviso).to_be_hidden()

    # «Tus conversaciones»: la de la cafetera, resuelta y con su tema; ninguna vacía.
    pagina.get_by_role("button", name="Nueva conversación").click()
    lista = pagina.locator("#conversaciones")
    expect(lista).to_be_visible(timeout=ESPERA_MS)
    lista.locator("summary").click()
    entradas = pagina.locator("#lista-conversaciones li")
    expect(entradas).to_have_count(1)
    expect(entradas.first).to_contain_text("resuelta")
    expect(entradas.first).to_contain_text("Quiero devolver la cafetera")
    cliente.accesible("cliente-conversaciones")
    cliente.limpia()
