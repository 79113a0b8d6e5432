"""``AGENTE_PASARELA`` elige la pasarela; la de Stripe no arranca sin sus claves."""

from __future__ import annotations

import pytest

from caja.pasarela import Pasarela, PasarelaConEventos, PasarelaSimulada
from caja.pasarela_stripe import PasarelaStripe
from caja.pasarelas import pasarela_desde_ajustes
from nucleo.ajustes import Ajustes
from nucleo.errores import ErrorConfiguracion


def test_por_defecto_la_simulada_y_con_stripe_el_adaptador_de_stripe():
    assert isinstance(pasarela_desde_ajustes(None, Ajustes()), PasarelaSimulada)
    stripe = pasarela_desde_ajustes(None, Ajustes(
        pasarela="stripe", stripe_clave="sk_test_x", stripe_secreto_webhook="whsec_x",
        stripe_prefijo_claves="tienda-pruebas"))
    assert isinstance(stripe, PasarelaStripe)
    assert isinstance(stripe, Pasarela) and isinstance(stripe, PasarelaConEventos)
    assert not isinstance(PasarelaSimulada(pool=None), PasarelaConEventos)
    assert stripe.clave_idempotencia("reembolso", "RE-000007") == "tienda-pruebas:reembolso:RE-000007"


def test_stripe_sin_clave_o_sin_secreto_del_webhook_no_arranca():
    for faltan in ({"stripe_secreto_webhook": "whsec_x"}, {"stripe_clave": "sk_test_x"}):
        with pytest.raises(ErrorConfiguracion, match="AGENTE_STRIPE_CLAVE"):
            pasarela_desde_ajustes(None, Ajustes(pasarela="stripe", **faltan))


def test_la_clave_de_stripe_no_sale_en_los_ajustes():
    ajustes = Ajustes(pasarela="stripe", stripe_clave="sk_live_secreta", stripe_secreto_webhook="whsec_y")
    assert "sk_live_secreta" not in repr(ajustes) and "whsec_y" not in str(ajustes.model_dump())
