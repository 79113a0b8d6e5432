"""Firmas escalonadas en la bandeja, en Chromium de verdad (issue 14): la tarjeta dice qué
autoridad exige la pausa, quién ha firmado ya y cuánto queda de plazo; una firma de más
rango la completa desde la página (y el historial enseña las dos firmas) y una sin límite
suficiente ve su límite, sin cambiar nada.
Capturas en ``artefactos/capturas/firmas-*.png``.
"""

from __future__ import annotations

import httpx
import pytest

from agente.web.entrada.auth import emitir_token
from agente.web.rutas.demo import EJEMPLOS
from tests.apoyo.firmas import PEDIDO_350, PEDIDO_650
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import ajustes_web, cab, sql

pytestmark = pytest.mark.navegador


def _como(bd_url: str, sujeto: str, tienda: str = "talavera") -> dict[str, str]:
    rol = "cliente" if sujeto.startswith("C-") else "encargado"
    return cab(emitir_token(ajustes_web(bd_url), rol=rol, sujeto=sujeto, tienda=tienda))


def _pausa(base: str, bd_url: str, cliente: str, pedido: str) -> str:
    hilo = httpx.post(f"{base}/api/conversaciones", headers=_como(bd_url, cliente)).json()["thread_id"]
    r = httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=_como(bd_url, cliente), timeout=60,
                   json={"texto": f"Quiero devolver el pedido {pedido} porque llegó roto"})
    assert r.json()["estado"] == "esperando_aprobacion", r.text
    return hilo


def test_la_tarjeta_muestra_requisito_firmas_y_plazo_y_el_gerente_completa_la_segunda(navegador, base, bd_url):
    hilo = _pausa(base, bd_url, "C-0006", PEDIDO_650)
    r = httpx.post(f"{base}/api/aprobaciones/{hilo}/decision", headers=_como(bd_url, "enc-talavera"),
                   json={"decisiones": [{"type": "approve"}]}, timeout=60)
    assert r.json() == {"estado": "esperando_firmas", "firmas": 1, "firmas_necesarias": 2}

    gerente = Pagina(navegador, base)
    gerente.entrar("Marta Jiménez (ger-talavera)", "/encargado")
    expect = gerente.expect
    tarjeta = gerente.pagina.locator("article.tarjeta", has_text=PEDIDO_650)
    expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    firmas = tarjeta.locator(".firmas")
    expect(firmas).to_contain_text("2 firmas: 1 de 2", timeout=ESPERA_MS)
    expect(firmas).to_contain_text("gerente o regional")
    expect(firmas.locator(".quien-firmo li")).to_have_count(1)
    expect(firmas.locator(".quien-firmo li")).to_contain_text("Lucía Moreno (encargado) aprobó")
    expect(tarjeta.locator(".plazo")).to_contain_text("Caduca en")
    gerente.capturar("firmas-una-de-dos")

    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    expect(tarjeta.locator(".resultado")).to_contain_text("650,00 EUR")
    assert [f["importe"] for f in sql(bd_url, "SELECT importe FROM reembolsos")] == [650]
    firmantes = sql(bd_url, "SELECT encargado_id FROM firmas_aprobacion ORDER BY id")
    assert [f["encargado_id"] for f in firmantes] == ["enc-talavera", "ger-talavera"]
    gerente.capturar("firmas-completada")

    # El historial enseña las dos firmas, no solo la última (issue 25, punto 6).
    gerente.pagina.get_by_role("tab", name="Historial").click()
    fila = gerente.pagina.locator("#tabla-historial tbody tr", has_text=PEDIDO_650)
    expect(fila.locator(".firmas-historial li")).to_have_count(2, timeout=ESPERA_MS)
    expect(fila.locator(".firmas-historial li").nth(0)).to_contain_text("Lucía Moreno (encargado) aprobó")
    expect(fila.locator(".firmas-historial li").nth(1)).to_contain_text("Marta Jiménez (gerente) aprobó")
    gerente.capturar("firmas-historial")
    gerente.limpia()


def test_una_encargada_sin_limite_suficiente_ve_su_limite_antes_de_pulsar_y_la_pausa_sigue(navegador, base, bd_url):
    hilo = _pausa(base, bd_url, "C-0009", PEDIDO_350)
    encargada = Pagina(navegador, base)
    encargada.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    expect = encargada.expect
    tarjeta = encargada.pagina.locator("article.tarjeta", has_text=PEDIDO_350)
    expect(tarjeta.locator(".firmas")).to_contain_text("necesita gerente", timeout=ESPERA_MS)
    # Lo sabe antes de pulsar (issue 30): su límite junto a los botones y «Aprobar» deshabilitado.
    expect(tarjeta.locator(".aviso-firma")).to_contain_text("300,00 EUR", timeout=ESPERA_MS)
    expect(tarjeta.get_by_role("button", name="Aprobar · tu firma no cuenta")).to_be_disabled()
    expect(tarjeta.get_by_role("button", name="Enviar decisión")).to_be_disabled()
    expect(tarjeta).not_to_have_class("resuelta")
    encargada.capturar("firmas-limite-insuficiente")
    assert sql(bd_url, "SELECT count(*) AS n FROM firmas_aprobacion")[0]["n"] == 0
    assert sql(bd_url, "SELECT count(*) AS n FROM aprobaciones_pendientes WHERE thread_id = %(h)s",
               {"h": hilo})[0]["n"] == 1
    encargada.limpia()


def test_la_regional_ve_las_colas_de_sus_dos_tiendas_y_filtra_por_tienda(navegador, base, bd_url):
    _pausa(base, bd_url, "C-0009", PEDIDO_350)  # talavera
    r = httpx.post(f"{base}/api/conversaciones", headers=_como(bd_url, "C-0003", "madrid-centro"))
    hilo = r.json()["thread_id"]
    r = httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=_como(bd_url, "C-0003", "madrid-centro"),
                   json={"texto": EJEMPLOS["C-0003"]}, timeout=60)
    assert r.json()["estado"] == "esperando_aprobacion", r.text

    regional = Pagina(navegador, base)
    regional.entrar("Beatriz Romero (reg-centro)", "/encargado")
    expect = regional.expect
    tarjetas = regional.pagina.locator("article.tarjeta")
    expect(tarjetas).to_have_count(2, timeout=ESPERA_MS)
    filtro = regional.pagina.locator("#f-tienda")
    expect(filtro).to_be_visible()
    filtro.select_option("talavera")
    expect(regional.pagina.locator("article.tarjeta:visible")).to_have_count(1)
    expect(regional.pagina.locator("article.tarjeta:visible")).to_contain_text(PEDIDO_350)
    regional.capturar("firmas-regional-filtro")
    regional.limpia()
