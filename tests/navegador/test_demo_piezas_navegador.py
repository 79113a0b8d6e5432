"""``agente demo --pasarela stripe-local`` de verdad (un proceso) y sus piezas en Chromium
(issue 43, punto 3): el correo que envía se lee en ``/demo/correo`` y su enlace hace entrar;
una persona entra por el proveedor OpenID Connect de la demo; un reembolso sale por el
protocolo de Stripe (servidor local, webhooks firmados). Capturas a 1280 y 390 px y axe-core.
"""

from __future__ import annotations

import os
import re

import httpx
import pytest

from agente.web.entrada.auth import emitir_token
from nucleo.ajustes import Ajustes
from tests.apoyo.navegador import ESPERA_MS, Pagina
from tests.apoyo.procesos import ProcesoCli, esperar
from tests.apoyo.web_util import cab

pytestmark = [pytest.mark.navegador, pytest.mark.lento]

LUCIA = "Lucía Moreno · Encargado · Talavera de la Reina"
SIN_HEREDAR = ("AGENTE_SMTP_URL", "AGENTE_OIDC_PROVEEDORES", "AGENTE_PASARELA", "AGENTE_SECRETO",
               "AGENTE_AVISOS_BASE_URL", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")


@pytest.fixture
def demo(bd_vacia_url, tmp_path):
    """El proceso ``agente demo --pasarela stripe-local`` sobre una base vacía (la carga él)."""
    env = {k: v for k, v in os.environ.items() if k not in SIN_HEREDAR}
    env.update(DATABASE_URL=bd_vacia_url, AGENTE_DEMO_BUZON=str(tmp_path / "buzon"))
    with ProcesoCli(env, "demo", "--pasarela", "stripe-local") as proceso:
        proceso.esperar_listo(limite=120)
        yield proceso
        assert "Traceback" not in proceso.salida()


def test_el_correo_de_la_demo_se_lee_en_su_pagina_y_su_enlace_hace_entrar(navegador, demo):
    salida = demo.salida()
    assert f"Correo de la demo (lo que se envía por SMTP): {demo.base}/demo/correo" in salida, salida
    p = Pagina(navegador, demo.base)
    p.pagina.goto(f"{demo.base}/encargado")
    p.pagina.get_by_label("Tu correo de encargado: te enviamos un enlace para entrar").fill(
        "enc-talavera@tienda.example")
    p.pagina.get_by_role("button", name="Enviarme un enlace").click()
    p.expect(p.pagina.locator("#aviso-correo")).to_contain_text("le hemos enviado un enlace", timeout=ESPERA_MS)

    p.pagina.goto(f"{demo.base}/demo")
    p.pagina.get_by_role("link", name="Correo de la demo").click()
    correo = p.pagina.locator("li.correo", has_text="Tu enlace para entrar en la bandeja")
    for _ in range(50):  # el correo sale por SMTP justo después de la respuesta 202
        if correo.count():
            break
        p.pagina.wait_for_timeout(200)
        p.pagina.get_by_role("button", name="Actualizar").click()
    p.expect(correo).to_contain_text("Para enc-talavera@tienda.example", timeout=ESPERA_MS)
    p.expect(p.pagina.get_by_role("status")).to_have_text("1 correo(s) recibido(s).")
    p.accesible("demo-correo")

    correo.locator("a[href*='/entrada/correo#']").click()
    p.pagina.get_by_role("button", name="Entrar en la bandeja").click()
    p.pagina.wait_for_url(f"{demo.base}/encargado", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#sesion")).to_have_text(LUCIA, timeout=ESPERA_MS)
    p.limpia()
    assert "sin canal email" not in demo.salida()


def test_una_persona_entra_por_el_proveedor_oidc_de_la_demo(navegador, demo):
    p = Pagina(navegador, demo.base)
    p.pagina.goto(f"{demo.base}/encargado")
    boton = p.pagina.get_by_role("link", name="Entrar con el proveedor de la demo")
    p.expect(boton).to_be_visible(timeout=ESPERA_MS)
    p.accesible("demo-oidc-entrada")
    boton.click()
    p.pagina.wait_for_url(re.compile(r"http://127\.0\.0\.1:\d+/interaction/.*"), timeout=ESPERA_MS)
    p.pagina.locator("input[name=login]").fill("enc-talavera")
    p.pagina.locator("input[name=password]").fill("cualquier-clave")
    p.pagina.get_by_role("button", name="Sign-in").click()
    p.pagina.get_by_role("button", name="Continue").click(timeout=ESPERA_MS)
    p.pagina.wait_for_url(f"{demo.base}/encargado", timeout=ESPERA_MS)
    p.expect(p.pagina.locator("#sesion")).to_have_text(LUCIA, timeout=ESPERA_MS)
    p.accesible("demo-oidc-dentro")
    assert p.dialogos == [] and p.errores_js == []


def test_un_reembolso_sale_por_el_protocolo_de_stripe_local(navegador, demo):
    cliente = Pagina(navegador, demo.base)
    cliente.entrar("Bruno Díaz Martín (C-0002)", "/")
    cliente.pagina.get_by_label("Tu mensaje").fill("Quiero devolver la sartén del pedido P-20260920-0102 porque se pega")
    cliente.pagina.get_by_role("button", name="Enviar").click()
    cliente.expect(cliente.pagina.locator("#mensajes li.agente").last).to_contain_text("24,90", timeout=ESPERA_MS)
    cliente.accesible("demo-stripe-chat")

    # Lo pagó la pasarela Stripe (el servidor local): el movimiento lleva su id de reembolso.
    ajustes = Ajustes(demo=True)
    tok = emitir_token(ajustes, rol="encargado", sujeto="enc-talavera", tienda="talavera")
    movimientos = httpx.get(f"{demo.base}/api/movimientos", headers=cab(tok), timeout=30).text
    assert re.search(r'"id_proveedor":\s*"re_test_\d+"', movimientos), movimientos
    # Y su webhook firmado (refund.created) llegó al producto y se aceptó.
    esperar(lambda: "webhook entregado: 200" in demo.salida(), 30, "el webhook de Stripe local")

    encargado = Pagina(navegador, demo.base)
    encargado.entrar("Lucía Moreno (enc-talavera)", "/encargado")
    encargado.pagina.get_by_role("tab", name="Movimientos").click()
    fila = encargado.pagina.locator("#tabla-movimientos tbody tr", has_text="P-20260920-0102")
    encargado.expect(fila).to_contain_text("Completado", timeout=ESPERA_MS)
    encargado.expect(fila).to_contain_text("24,90 EUR")
    encargado.accesible("demo-stripe-movimientos")
    cliente.limpia()
    encargado.limpia()
