"""Detalles de la bandeja (issue 43, punto 6) en Chromium, con axe-core a 1280 y 390 px:

- la nota para el cliente se ofrece también al aprobar (README: acompaña a cualquier decisión);
- una cancelación (sin «Editar») no dice «bajar el importe» a quien no puede firmarla;
- la insignia «Pendientes» de la regional cuenta la solicitud de política que espera su firma,
  y firmarla deja una confirmación visible (``role=status``) aunque la tarjeta se vaya.
"""

from __future__ import annotations

import pytest

from tests.apoyo.firmas import pausa_con
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import DEVOLVER_CAFETERA

pytestmark = pytest.mark.navegador


def test_la_nota_se_ofrece_al_aprobar(navegador, base, http, como):
    pausa_con(http, como, "C-0001", DEVOLVER_CAFETERA)
    p = Pagina(navegador, base)
    p.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    tarjeta = p.pagina.locator("article.tarjeta", has_text="C-0001")
    p.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    nota = tarjeta.get_by_label("Nota para el cliente (opcional; se añade al mensaje final)")
    p.expect(nota).to_be_hidden()
    tarjeta.get_by_role("button", name="Aprobar").click()
    p.expect(nota).to_be_visible()
    p.accesible("detalles-nota-al-aprobar")
    p.limpia()


def test_una_cancelacion_sin_editar_no_ofrece_bajar_el_importe(navegador, base, http, como):
    pausa_con(http, como, "C-0011", "Cancela mi pedido P-20261009-0420, por favor")
    p = Pagina(navegador, base)
    p.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    tarjeta = p.pagina.locator("article.tarjeta", has_text="C-0011")
    p.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    aviso = tarjeta.locator(".aviso-firma")
    p.expect(aviso).to_contain_text("Tu firma no cuenta para aprobar", timeout=ESPERA_MS)
    p.expect(aviso).to_contain_text("Puedes rechazarla.")
    p.expect(aviso).not_to_contain_text("bajar el importe")
    p.expect(tarjeta.get_by_role("button", name="Editar importe")).to_have_count(0)
    p.accesible("detalles-cancelacion")
    p.limpia()


def test_la_regional_ve_la_solicitud_en_su_insignia_y_confirmacion_al_firmarla(navegador, base, http, como):
    r = http.post("/api/politica/talavera", headers=como("ger-talavera"),
                  json={"limites": {"reembolso": {"encargado": "400.00"}}, "motivo": "Temporada de rebajas"})
    assert r.status_code == 202 and r.json().get("diferencias"), r.text
    p = Pagina(navegador, base)
    p.entrar("Beatriz Romero (reg-centro)", "/encargado")
    cuenta = p.pagina.locator("#cuenta")
    p.expect(cuenta).to_have_text("1", timeout=ESPERA_MS)
    tarjeta = p.pagina.locator("#solicitudes-politica article", has_text="Temporada de rebajas")
    tarjeta.get_by_role("button", name="Firmar y aplicar").click()
    confirmacion = p.pagina.locator("#confirmacion-politica")
    p.expect(confirmacion).to_have_attribute("role", "status")
    p.expect(confirmacion).to_contain_text("Firmada la solicitud", timeout=ESPERA_MS)
    p.expect(confirmacion).to_contain_text("el cambio ya se aplica")
    p.expect(tarjeta).to_have_count(0, timeout=ESPERA_MS)  # la tarjeta se va; la confirmación queda
    p.expect(confirmacion).to_be_visible()
    p.expect(cuenta).to_have_text("0")
    p.accesible("detalles-politica-firmada")
    p.limpia()
