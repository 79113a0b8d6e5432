"""El webhook de Stripe por HTTP (``POST /api/pasarela/stripe/webhook``), con la app entera
configurada con ``AGENTE_PASARELA=stripe`` contra el servidor local de Stripe."""

from __future__ import annotations

import pytest

from tests.apoyo.servidor_stripe import CLAVE, SECRETO_WEBHOOK, servidor_stripe
from tests.apoyo.web_util import abrir_conversacion, ajustes_web, cab, cliente_http, sql, token

SARTEN = "P-20260920-0102"
RUTA = "/api/pasarela/stripe/webhook"


@pytest.fixture
def stripe_local():
    with servidor_stripe() as servidor:
        servidor.pagos["pi_demo_p_20260920_0102"] = 2490
        servidor.estado_reembolsos = "pending"
        yield servidor


@pytest.fixture
def app_stripe(bd_url, stripe_local):
    ajustes = ajustes_web(bd_url, pasarela="stripe", stripe_clave=CLAVE,
                          stripe_secreto_webhook=SECRETO_WEBHOOK, stripe_api_base=stripe_local.base)
    with cliente_http(ajustes) as http:
        yield http, ajustes


def test_el_webhook_completa_el_reembolso_una_vez_y_rechaza_uno_falsificado(app_stripe, stripe_local, bd_url):
    http, ajustes = app_stripe
    hilo = abrir_conversacion(http, lambda s: token(ajustes, s), "C-0002")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cab(token(ajustes, "C-0002")),
                  json={"texto": f"Quiero devolver la sartén del pedido {SARTEN} porque se pega"})
    assert r.status_code == 200 and "pendiente" in r.json()["mensajes"][-1]["texto"]
    assert len(stripe_local.reembolsos) == 1

    (cuerpo, firma), _ = stripe_local.terminar_reembolso(next(iter(stripe_local.reembolsos)))
    falso = http.post(RUTA, content=cuerpo, headers={"Stripe-Signature": firma.replace("v1=", "v1=f"),
                                                     "Content-Type": "application/json"})
    assert falso.status_code == 400
    assert sql(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "pendiente"

    cabeceras = {"Stripe-Signature": firma, "Content-Type": "application/json"}
    primero = http.post(RUTA, content=cuerpo, headers=cabeceras)
    duplicado = http.post(RUTA, content=cuerpo, headers=cabeceras)
    assert primero.status_code == duplicado.status_code == 200
    assert (primero.json()["resultado"], duplicado.json()["resultado"]) == ("aplicado", "repetido")
    assert sql(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "emitido"
    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(token(ajustes, "C-0002"))).json()
    assert "Ya está hecho el reembolso" in historial["mensajes"][-1]["texto"]


def test_el_webhook_no_aparece_en_el_contrato_openapi(app_stripe):
    http, _ = app_stripe
    assert RUTA not in http.get("/openapi.json").json()["paths"]
