"""Una tarjeta con dos operaciones en Chromium de verdad: una decisión por operación (issue #42, 2b).

El cliente pide un vale de 30 euros y devolver la vajilla del mismo pedido; la tarjeta enseña
las dos operaciones numeradas, cada una con sus botones. «Enviar decisión» no se habilita hasta
decidir las dos; el encargado aprueba el vale y rechaza el reembolso con motivo, y en las
tablas queda el vale de 30,00 EUR y ningún reembolso.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.apoyo.firmas import pausa_con
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import sql

pytestmark = pytest.mark.navegador

PEDIDO = "P-20261012-0099"  # C-0003, Madrid-Centro, entregado, una vajilla de 99,00 EUR


def test_aprobar_el_vale_y_rechazar_el_reembolso_de_la_misma_tarjeta(navegador, base, bd_url, http, como):
    hilo = pausa_con(http, como, "C-0003",
                     f"Del pedido {PEDIDO} quiero un vale de 30 euros por el rayón y además devolver la vajilla.")
    bandeja = Pagina(navegador, base)
    bandeja.entrar("Javier Ortega (enc-madrid-centro)", "/encargado")
    expect, pagina = bandeja.expect, bandeja.pagina
    tarjeta = pagina.locator(f'#tarjetas article.tarjeta[data-thread="{hilo}"]')
    acciones = tarjeta.locator("section.accion")
    expect(acciones).to_have_count(2, timeout=ESPERA_MS)
    expect(acciones.nth(0).locator("h4")).to_contain_text("Operación 1 de 2")
    expect(acciones.nth(1).locator("h4")).to_contain_text("Operación 2 de 2")
    titulos = [acciones.nth(i).get_attribute("aria-label") for i in range(2)]
    vale = next(i for i, t in enumerate(titulos) if "vale" in t.lower())
    reembolso = 1 - vale
    enviar = tarjeta.get_by_role("button", name="Enviar decisión")

    acciones.nth(vale).get_by_role("button", name="Aprobar").click()
    expect(enviar).to_be_disabled()  # falta decidir la otra operación
    acciones.nth(reembolso).get_by_role("button", name="Rechazar con motivo").click()
    acciones.nth(reembolso).get_by_label("Motivo del rechazo (lo leerá el cliente)").fill(
        "El rayón no justifica devolverla.")
    expect(enviar).to_be_enabled()
    enviar.click()
    expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)

    assert bandeja.errores_js == []
    url = bd_url
    assert [f["importe"] for f in sql(url, "SELECT importe FROM vales WHERE pedido_id = %(p)s", {"p": PEDIDO})] == [
        Decimal("30.00")]
    assert sql(url, "SELECT count(*) AS n FROM reembolsos")[0]["n"] == 0
    decididas = sql(url, "SELECT decisiones FROM decisiones_encargado WHERE thread_id = %(h)s", {"h": hilo})
    tipos = [d["type"] for d in decididas[0]["decisiones"]]
    assert tipos[vale] == "approve" and tipos[reembolso] == "reject"
    assert decididas[0]["decisiones"][reembolso]["message"] == "El rayón no justifica devolverla."
