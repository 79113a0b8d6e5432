"""La tarjeta de la bandeja para el uso diario, en Chromium de verdad (issue 30, puntos 1, 3 y 4).

- Dos firmas vistas por los tres firmantes del reembolso de 650,00 EUR: la encargada que firma
  primero la ve en «Firmadas por ti · falta 1 firma (gerente o regional)» sin «Aprobar»; otra
  encargada, cuya firma no contaría, lo lee antes de pulsar y «Aprobar» está deshabilitado y lo
  dice; el gerente completa y los recuentos son ciertos (tarjeta, pestaña y título).
- La tarjeta usa el ancho: a 1280 px la conversación al lado de la decisión y la tabla de líneas
  sin desplazamiento; a 390 px, apilada, los filtros plegados, la primera tarjeta en la primera
  pantalla y sin la pista de atajos de teclado.
- La regional: su rol y sus tiendas por su nombre en la cabecera, la tienda en cada tarjeta y en
  cada fila del historial, y el historial filtrado por tienda.

axe-core sin nada serio ni crítico en cada estado, a 1280 y 390 px. Capturas en
``artefactos/capturas/tarjeta-*.png``.
"""

from __future__ import annotations

import pytest

from tests.apoyo.firmas import (
    PEDIDO_350,
    PEDIDO_650,
    decidir_como,
    pausa_con,
    pausa_de_pedido,
)
from tests.apoyo.navegador import ESPERA_MS, MOVIL, Pagina
from tests.apoyo.web_util import sql

pytestmark = pytest.mark.navegador

FALTA = "falta 1 firma (gerente o regional)"


def _bandeja(navegador, base, boton: str, viewport=None) -> Pagina:
    pagina = Pagina(navegador, base)
    if viewport:
        pagina.pagina.set_viewport_size(viewport)
    pagina.entrar(boton, "/encargado")
    return pagina


def _no_desborda(locator) -> bool:
    return locator.evaluate("e => e.scrollWidth <= e.clientWidth")


# Texto de la opción más larga de cada select frente a su hueco (sin relleno ni flecha):
# un select no desborda en scrollWidth, corta el texto sin avisar.
_SELECTS_CORTADOS_JS = """sel => [...document.querySelectorAll(sel)].filter(s => s.offsetParent).map(s => {
  const estilo = getComputedStyle(s), lienzo = document.createElement('canvas').getContext('2d');
  lienzo.font = `${estilo.fontWeight} ${estilo.fontSize} ${estilo.fontFamily}`;
  const texto = Math.max(...[...s.options].map(o => lienzo.measureText(o.text).width));
  const hueco = s.clientWidth - parseFloat(estilo.paddingLeft) - parseFloat(estilo.paddingRight) - 20;
  return texto > hueco ? `${s.id}: ${Math.round(texto)} > ${Math.round(hueco)}` : null;
}).filter(Boolean)"""


def _selects_sin_cortar(pagina, selector: str) -> list[str]:
    """Los selects visibles cuya opción más larga no cabe (vacío: todos caben)."""
    pagina.locator("#caja-filtros").evaluate("d => d.open = true")
    return pagina.evaluate(_SELECTS_CORTADOS_JS, selector)


def test_dos_firmas_vistas_por_los_tres_firmantes(navegador, base, bd_url, http, como):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    # El gerente tiene la bandeja abierta desde antes de la primera firma.
    gerente = _bandeja(navegador, base, "Marta Jiménez (ger-talavera)")
    pagina3 = gerente.pagina
    tarjeta3 = pagina3.locator("#tarjetas article.tarjeta", has_text=PEDIDO_650)
    gerente.expect(tarjeta3.locator(".firmas")).to_contain_text("2 firmas: 0 de 2", timeout=ESPERA_MS)

    # 1. La encargada que firma primero: a 1280 px, dos columnas y la tabla entera.
    primera = _bandeja(navegador, base, "Lucía Moreno (enc-talavera)")
    expect, pagina = primera.expect, primera.pagina
    expect(pagina.locator("#sesion")).to_have_text("Lucía Moreno · Encargado · Talavera de la Reina", timeout=ESPERA_MS)
    tarjeta = pagina.locator("#tarjetas article.tarjeta", has_text=PEDIDO_650)
    expect(tarjeta.locator(".tienda-tarjeta")).to_have_text("Tienda: Talavera de la Reina", timeout=ESPERA_MS)
    tabla = tarjeta.locator("table.lineas")
    expect(tabla).to_contain_text("sin compensar", timeout=ESPERA_MS)
    assert _no_desborda(tarjeta.locator(".tabla-desplazable"))
    for columna in ("Queda", "Estado"):
        caja = tabla.get_by_role("columnheader", name=columna).bounding_box()
        assert caja["x"] + caja["width"] <= 1280, columna
    conversacion = tarjeta.locator(".lado-conversacion").bounding_box()
    decision = tarjeta.locator(".lado-decision").bounding_box()
    # Lado a lado: la decisión a la derecha de la conversación, a su altura (no debajo).
    assert conversacion["x"] + conversacion["width"] <= decision["x"]
    assert decision["y"] <= conversacion["y"] < decision["y"] + decision["height"]
    expect(tarjeta.locator(".aviso-firma")).to_be_hidden()
    expect(pagina.locator(".atajos")).to_be_visible()  # con teclado y ratón, sí
    assert _selects_sin_cortar(pagina, "#filtros select") == []
    primera.accesible("tarjeta-dos-firmas-antes")
    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    firmada = pagina.locator("#tarjetas-firmadas article.tarjeta", has_text=PEDIDO_650)
    expect(firmada.locator(".aviso-firma")).to_contain_text(f"Firmada por ti · {FALTA}", timeout=ESPERA_MS)
    expect(firmada.locator(".firmas")).to_contain_text("2 firmas: 1 de 2")
    expect(firmada.get_by_role("button", name="Aprobar · ya firmaste")).to_be_disabled()
    expect(pagina.locator("#firmadas h2")).to_be_visible()
    expect(pagina.locator("#cuenta")).to_have_text("0")
    expect(pagina.locator("#tarjetas article.tarjeta")).to_have_count(0)
    primera.accesible("tarjeta-dos-firmas-firmada-por-ti")

    # 2. Otra encargada, en el móvil: su firma no contaría y lo lee antes de pulsar.
    segunda = _bandeja(navegador, base, "Sergio Alonso (enc-talavera-2)", MOVIL)
    pagina2 = segunda.pagina
    tarjeta2 = pagina2.locator("#tarjetas article.tarjeta", has_text=PEDIDO_650)
    aviso = tarjeta2.locator(".aviso-firma")
    expect(aviso).to_contain_text(f"Tu firma no cuenta para aprobar: {FALTA}", timeout=ESPERA_MS)
    expect(aviso).to_contain_text("300,00 EUR")
    expect(tarjeta2.get_by_role("button", name="Aprobar · tu firma no cuenta")).to_be_disabled()
    expect(tarjeta2.get_by_role("button", name="Rechazar con motivo")).to_be_enabled()
    expect(tarjeta2.locator(".firmas")).to_contain_text("2 firmas: 1 de 2")
    # A 390 px: filtros plegados, la primera tarjeta en la primera pantalla, sin atajos.
    expect(pagina2.locator("#caja-filtros")).not_to_have_attribute("open", "")
    expect(pagina2.locator("#f-buscar")).to_be_hidden()
    assert tarjeta2.bounding_box()["y"] < MOVIL["height"]
    expect(pagina2.locator(".atajos")).to_be_hidden()
    pagina2.get_by_text("Filtros", exact=True).click()
    expect(pagina2.locator("#f-buscar")).to_be_visible()
    segunda.accesible("tarjeta-dos-firmas-no-cuenta")
    assert sql(bd_url, "SELECT count(*) AS n FROM firmas_aprobacion")[0]["n"] == 1

    # 3. El gerente (su página sigue abierta: la firma le llegó en directo) completa; los
    # recuentos son ciertos antes y después.
    expect(pagina3.locator("#sesion")).to_have_text("Marta Jiménez · Gerente · Talavera de la Reina", timeout=ESPERA_MS)
    expect(tarjeta3.locator(".firmas")).to_contain_text("2 firmas: 1 de 2", timeout=ESPERA_MS)
    expect(tarjeta3.locator(".aviso-firma")).to_be_hidden()
    expect(pagina3.locator("#cuenta")).to_have_text("1")
    assert pagina3.title().startswith("(1) ")
    gerente.accesible("tarjeta-dos-firmas-gerente")
    tarjeta3.get_by_role("button", name="Aprobar").click()
    tarjeta3.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta3.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    expect(tarjeta3.locator(".firmas")).to_contain_text("2 firmas: 2 de 2")
    expect(tarjeta3.locator(".quien-firmo li")).to_have_count(2)
    expect(pagina3.locator("#cuenta")).to_have_text("0", timeout=ESPERA_MS)
    assert not pagina3.title().startswith("(")
    gerente.accesible("tarjeta-dos-firmas-completada")
    # La primera ya no la tiene esperando: la sección de firmadas se vacía sola.
    expect(pagina.locator("#firmadas")).to_be_hidden(timeout=ESPERA_MS)
    assert [f["encargado_id"] for f in sql(bd_url, "SELECT encargado_id FROM firmas_aprobacion ORDER BY id")] == [
        "enc-talavera", "ger-talavera"]
    assert http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).status_code == 404
    for p in (primera, segunda, gerente):
        p.limpia()


def test_la_regional_ve_sus_tiendas_en_la_cabecera_las_tarjetas_y_el_historial(navegador, base, http, como):
    pausa_de_pedido(http, como, "C-0009", PEDIDO_350)  # talavera
    pausa_de_pedido(http, como, "C-0003", "P-20260801-0007")  # madrid-centro
    # Una decidida en cada tienda para el historial.
    madrid = pausa_con(http, como, "C-0010", "No me ha llegado el pedido P-20261009-0120")
    assert decidir_como(http, como, madrid, "reg-centro").json()["estado"] == "aplicada"

    regional = _bandeja(navegador, base, "Beatriz Romero (reg-centro)")
    expect, pagina = regional.expect, regional.pagina
    expect(pagina.locator("#sesion")).to_have_text(
        "Beatriz Romero · Regional · Madrid-Centro y Talavera de la Reina", timeout=ESPERA_MS)
    tarjetas = pagina.locator("#tarjetas article.tarjeta")
    expect(tarjetas).to_have_count(2, timeout=ESPERA_MS)
    expect(tarjetas.locator(".tienda-tarjeta")).to_have_text(
        ["Tienda: Talavera de la Reina", "Tienda: Madrid-Centro"])
    expect(pagina.locator("#f-tienda option")).to_have_text(["Todas", "Madrid-Centro", "Talavera de la Reina"])
    regional.accesible("tarjeta-regional-bandeja")

    tarjeta = pagina.locator("#tarjetas article.tarjeta", has_text=PEDIDO_350)
    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)

    pagina.get_by_role("tab", name="Historial").click()
    filas = pagina.locator("#tabla-historial tbody tr")
    expect(filas).to_have_count(2, timeout=ESPERA_MS)
    expect(filas.locator("td:nth-child(2)")).to_have_text(["Talavera de la Reina", "Madrid-Centro"])
    selector = pagina.get_by_label("Tienda", exact=True).and_(pagina.locator("#h-tienda"))
    expect(selector).to_be_visible()
    selector.select_option(label="Madrid-Centro")
    pagina.get_by_role("button", name="Buscar").click()
    expect(filas).to_have_count(1, timeout=ESPERA_MS)
    expect(filas.first).to_contain_text("Madrid-Centro")
    expect(filas.first).not_to_contain_text("Talavera")
    regional.accesible("tarjeta-regional-historial")
    regional.limpia()


def test_quien_firma_en_una_sola_tienda_no_ve_el_filtro_de_tienda_del_historial(navegador, base):
    encargada = _bandeja(navegador, base, "Lucía Moreno (enc-talavera)")
    encargada.expect(encargada.pagina.locator("#sesion")).to_contain_text("Encargado", timeout=ESPERA_MS)
    encargada.pagina.get_by_role("tab", name="Historial").click()
    encargada.pagina.locator("body[data-historial='1']").wait_for(timeout=ESPERA_MS)
    encargada.expect(encargada.pagina.locator("#h-tienda")).to_be_hidden()
    encargada.limpia()
