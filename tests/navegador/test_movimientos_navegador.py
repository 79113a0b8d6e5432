"""La pestaña «Movimientos» en Chromium (issue 43, punto 5), con axe-core a 1280 y 390 px.

Una cancelación automática y un reembolso firmado (editado a 90 EUR) por la API; el encargado
abre «Movimientos» y ve los dos, quién autorizó cada uno, la referencia de la pasarela y los
totales por tipo, y descarga el CSV para una hoja de cálculo española.
"""

from __future__ import annotations

import pytest

from tests.apoyo.firmas import decidir_como, pausa_con
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import DEVOLVER_CAFETERA, EDITAR_A_90

pytestmark = pytest.mark.navegador


def test_la_pestana_movimientos_ensena_lo_automatico_y_lo_firmado_con_sus_totales(navegador, base, http, como, tmp_path):
    hilo = pausa_con(http, como, "C-0001", DEVOLVER_CAFETERA)
    assert decidir_como(http, como, hilo, "enc-talavera", EDITAR_A_90["decisiones"]).status_code == 200
    r = http.post("/api/conversaciones", headers=como("C-0002"))
    r = http.post(f"/api/conversaciones/{r.json()['thread_id']}/mensajes", headers=como("C-0002"),
                  json={"texto": "Cancela mi pedido P-20261008-0201, por favor"})
    assert r.json()["estado"] == "respondida", r.text

    encargado = Pagina(navegador, base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    pagina, expect = encargado.pagina, encargado.expect
    pagina.get_by_role("tab", name="Movimientos").click()
    reembolso = pagina.locator("#tabla-movimientos tbody tr", has_text="P-20260917-0041")
    expect(reembolso).to_contain_text("Lucía Moreno (encargado)", timeout=ESPERA_MS)
    expect(reembolso).to_contain_text("90,00 EUR")
    expect(reembolso).to_contain_text("Completado")
    cancelacion = pagina.locator("#tabla-movimientos tbody tr", has_text="P-20261008-0201")
    expect(cancelacion).to_contain_text("automático (política)")
    expect(cancelacion).to_contain_text("RE-")
    expect(pagina.locator("#totales-movimientos tr[data-tipo='cancelacion']")).to_contain_text("25,00 EUR")
    encargado.accesible("movimientos")
    with pagina.expect_download() as descarga:
        pagina.get_by_role("button", name="Exportar CSV").click()
    ruta = tmp_path / "movimientos.csv"
    descarga.value.save_as(ruta)
    contenido = ruta.read_bytes()
    assert contenido.startswith(b"\xef\xbb\xbf")
    contenido = contenido.decode("utf-8-sig")
    assert ";90,00;90,00;completado;Lucía Moreno (encargado);" in contenido
    assert "automático (política)" in contenido
    encargado.limpia()
