"""La tarjeta de un cambio en Chromium (issue 30, punto 2): nombres, precios, la diferencia y
quién la paga, a 1280 y a 390 px, con axe-core. Capturas en ``artefactos/capturas/tarjeta-cambio-*``.
"""

from __future__ import annotations

import httpx
import pytest

from agente.web.entrada.auth import emitir_token
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import ajustes_web, cab

pytestmark = pytest.mark.navegador

CAFETERA = "P-20260917-0041"  # C-0001, talavera: una CAF-001 pagada a 120,00


def test_la_tarjeta_de_un_cambio_mas_caro_da_nombres_precios_y_diferencia(navegador, base, bd_url):
    cliente = cab(emitir_token(ajustes_web(bd_url), rol="cliente", sujeto="C-0001", tienda="talavera"))
    hilo = httpx.post(f"{base}/api/conversaciones", headers=cliente).json()["thread_id"]
    r = httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=cliente, timeout=60,
                   json={"texto": f"Quiero cambiar la cafetera del pedido {CAFETERA} por la CAF-004"})
    assert r.json()["estado"] == "esperando_aprobacion", r.text

    encargada = Pagina(navegador, base)
    encargada.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    tarjeta = encargada.pagina.locator("article.tarjeta", has_text=CAFETERA)
    detalles = tarjeta.locator("dl.detalles")
    encargada.expect(detalles).to_be_visible(timeout=ESPERA_MS)
    pares = dict(zip(detalles.locator("dt").all_inner_texts(), detalles.locator("dd").all_inner_texts(),
                     strict=True))
    assert pares["Producto original"] == "Cafetera de goteo Aroma 10 tazas"
    assert pares["Producto nuevo"] == "Cafetera superautomática Barista"
    assert pares["Pagado por unidad"] == "120,00 EUR"
    assert pares["Precio del nuevo"] == "249,00 EUR"
    assert pares["Diferencia"] == "129,00 EUR"
    assert pares["Quién paga la diferencia"].startswith("la paga el cliente")
    # Ningún SKU suelto en lugar del nombre: ni en los detalles ni en lo que se propone.
    assert "CAF-004" not in pares["Producto nuevo"]
    datos = tarjeta.locator("dl.datos").first
    propuesta = dict(zip(datos.locator("dt").all_inner_texts(), datos.locator("dd").all_inner_texts(), strict=True))
    assert propuesta["Producto original"] == "Cafetera de goteo Aroma 10 tazas", propuesta
    assert propuesta["Producto nuevo"] == "Cafetera superautomática Barista", propuesta
    encargada.expect(tarjeta.locator(".motivos").first).not_to_contain_text("CAF-")
    encargada.accesible("tarjeta-cambio")
    encargada.limpia()
