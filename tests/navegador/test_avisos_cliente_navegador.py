"""El cliente que cerró el chat se entera por correo (SMTP real, aiosmtpd) y vuelve con el
enlace, en Chromium de verdad; con el chat abierto no sale ningún correo; la baja desde el
enlace del correo.

El servidor corre en un hilo con las tareas periódicas cada medio segundo (son las que
entregan la cola de avisos) y su URL pública fijada antes de arrancar (los enlaces).
"""

from __future__ import annotations

import re
import time
from urllib.parse import unquote

import pytest

from agente.web.app import crear_app
from tests.apoyo.fabricas_avisos import pasadas_de_entrega
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.web_util import (
    DEVOLVER_CAFETERA,
    ajustes_web,
    puerto_libre,
    servidor_en_hilo,
    sql,
)

pytestmark = pytest.mark.navegador


@pytest.fixture
def web(bd_url, smtp):
    puerto = puerto_libre()
    base = f"http://127.0.0.1:{puerto}"
    ajustes = ajustes_web(bd_url, smtp_url=smtp.url, intervalo_tareas=0.5, avisos_base_url=base)
    with servidor_en_hilo(crear_app(ajustes), puerto=puerto) as url:
        yield url


def _esperar(condicion, limite=20.0, que=""):
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        if valor := condicion():
            return valor
        time.sleep(0.1)
    raise AssertionError(f"no llegó a tiempo: {que}")


ANA = "ana.garcia@example.com"


def _de_ana(smtp):
    """Los correos a Ana (los avisos de firma a los encargados de la demo también salen)."""
    return [c for c in smtp.correos if ANA in c.para]


def _presencias(bd_url):
    return sql(bd_url, "SELECT thread_id FROM presencia_chat")


def _cliente_espera(navegador, base, bd_url) -> tuple[Pagina, str]:
    cliente = Pagina(navegador, base)
    cliente.entrar("Ana García López (C-0001)", "/")
    cliente.pagina.get_by_label("Tu mensaje").fill(DEVOLVER_CAFETERA)
    cliente.pagina.get_by_role("button", name="Enviar").click()
    cliente.expect(cliente.pagina.locator("#aviso")).to_contain_text(
        "pendiente de revisión por un encargado", timeout=ESPERA_MS)
    hilo = sql(bd_url, "SELECT thread_id FROM aprobaciones_pendientes")[0]["thread_id"]
    _esperar(lambda: _presencias(bd_url), que="el chat abierto cuenta como conectado")
    return cliente, hilo


def _encargado_aprueba(navegador, base) -> None:
    encargado = Pagina(navegador, base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    tarjeta = encargado.pagina.locator("article.tarjeta", has_text="Ana García López")
    encargado.expect(tarjeta).to_be_visible(timeout=ESPERA_MS)
    tarjeta.get_by_role("button", name="Aprobar").click()
    tarjeta.get_by_role("button", name="Enviar decisión").click()
    encargado.expect(tarjeta.locator(".resultado")).to_contain_text("Decisión aplicada", timeout=ESPERA_MS)
    encargado.contexto.close()


def test_cierra_el_chat_el_encargado_decide_llega_un_correo_y_su_enlace_reabre_la_conversacion(
    navegador, web, bd_url, smtp
):
    cliente, hilo = _cliente_espera(navegador, web, bd_url)
    cliente.contexto.close()  # cierra la pestaña mientras espera
    _esperar(lambda: not _presencias(bd_url), que="al cerrar el chat su presencia se borra")

    _encargado_aprueba(navegador, web)
    _esperar(lambda: _de_ana(smtp), que="el correo al cliente")
    assert pasadas_de_entrega(bd_url, smtp_url=smtp.url) == 0  # ninguna lo repite
    [correo] = _de_ana(smtp)
    assert correo.para == [ANA]
    assert "aprobada" in correo.asunto
    assert "ha aprobado tu solicitud de reembolso del pedido P-20260917-0041 por 120,00 EUR" in correo.texto
    assert hilo not in correo.texto

    # El enlace del correo, en una sesión nueva del navegador, abre esa conversación.
    enlace = re.search(r"(http://\S+/#token=\S+)", correo.texto).group(1)
    vuelta = Pagina(navegador, web)
    vuelta.pagina.goto(enlace)
    vuelta.pagina.locator("body[data-listo='1']").wait_for(timeout=ESPERA_MS)
    assert "token=" not in vuelta.pagina.url  # el token sale de la barra de direcciones
    numero = sql(bd_url, "SELECT numero FROM reembolsos")[0]["numero"]
    vuelta.expect(vuelta.pagina.locator("#mensajes li.agente").last).to_contain_text(numero, timeout=ESPERA_MS)
    vuelta.expect(vuelta.pagina.locator("#mensajes li.cliente").first).to_contain_text("cafetera")
    vuelta.expect(vuelta.pagina.locator("#informacion")).to_contain_text("solo esta conversación")
    vuelta.expect(vuelta.pagina.locator("#nueva")).to_be_hidden()
    vuelta.expect(vuelta.pagina.locator("#sesion")).to_contain_text("solo esta conversación")
    vuelta.capturar("cliente-vuelve-por-el-correo")
    vuelta.limpia()
    vuelta.contexto.close()

    # La baja, desde el enlace del mismo correo.
    baja = Pagina(navegador, web)
    baja.pagina.goto(re.search(r"(http://\S+/avisos#baja=\S+)", correo.texto).group(1))
    baja.pagina.get_by_role("button", name="Darme de baja").click()
    baja.expect(baja.pagina.locator("#resultado")).to_contain_text("no te enviaremos más avisos", timeout=ESPERA_MS)
    assert sql(bd_url, "SELECT avisos_baja IS NOT NULL AS b FROM clientes WHERE id = 'C-0001'")[0]["b"]
    assert "baja=" not in unquote(baja.pagina.url)
    baja.limpia()


def test_con_el_chat_abierto_la_decision_llega_al_chat_y_no_sale_ningun_correo(navegador, web, bd_url, smtp):
    cliente, _hilo = _cliente_espera(navegador, web, bd_url)
    _encargado_aprueba(navegador, web)
    numero = sql(bd_url, "SELECT numero FROM reembolsos")[0]["numero"]
    cliente.expect(cliente.pagina.locator("#mensajes li.agente").last).to_contain_text(numero, timeout=ESPERA_MS)
    assert pasadas_de_entrega(bd_url, smtp_url=smtp.url) == 0  # nada por enviar
    assert _de_ana(smtp) == []
    assert sql(bd_url, "SELECT count(*) AS n FROM avisos_salida WHERE tipo = 'cliente'")[0]["n"] == 0
    cliente.limpia()
