"""``AGENTE_PASARELA=stripe`` sin claves: ``agente demo`` (y ``agente serve``) fallan antes del
cartel y de tocar la base, con una frase en español y código distinto de 0 (issue 43, punto 3)."""

from __future__ import annotations

import os

import pytest

from tests.apoyo.procesos import cli

pytestmark = pytest.mark.lento


@pytest.mark.parametrize("orden", [("demo",), ("demo", "--pasarela", "stripe"), ("serve",)])
def test_stripe_sin_claves_falla_antes_del_cartel_con_una_frase(orden, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTE_STRIPE", "LANGFUSE"))}
    # Una base a la que no se llega: si la orden la tocara antes, el error sería otro.
    env.update(AGENTE_PASARELA="stripe", DATABASE_URL="postgresql://nadie@127.0.0.1:1/nada",
               AGENTE_PGDATA=str(tmp_path / "pgdata"), AGENTE_SECRETO="x" * 8 + os.urandom(24).hex())
    resultado = cli(env, *orden)
    assert resultado.returncode == 2, (resultado.stdout, resultado.stderr)
    assert "Demo lista" not in resultado.stdout and "Sirviendo" not in resultado.stdout
    lineas = resultado.stderr.strip().splitlines()
    assert lineas == [
        "Error: Con AGENTE_PASARELA=stripe hacen falta AGENTE_STRIPE_CLAVE y "
        "AGENTE_STRIPE_SECRETO_WEBHOOK (docs/pasarelas.md); para probar sin cuenta de Stripe, "
        "agente demo --pasarela stripe-local"], resultado.stderr
    assert not (tmp_path / "pgdata").exists()
