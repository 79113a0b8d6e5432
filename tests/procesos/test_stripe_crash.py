"""SIGKILL entre la respuesta de Stripe y la escritura del libro: tras reiniciar, un reembolso.

El hijo reembolsa por la pasarela Stripe (SDK real contra el servidor local de este
proceso) y se queda colgado justo después de que Stripe responda, antes de marcar el
libro; se le mata ahí. Después, lo que haría el proceso reiniciado (repetir la llamada
con la misma clave, o la pasada de la cola de movimientos) deja el libro completo y
Stripe con un solo reembolso. Y ``agente auditoria`` (otro proceso, configurado con
``AGENTE_PASARELA=stripe``) compara el libro con los registros de Stripe.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest

from caja.movimientos import completar_pendientes
from caja.pasarela_stripe import PasarelaStripe
from nucleo.contexto import ContextoCliente
from operaciones.reembolso.herramienta import reembolsar
from tests.apoyo.fabricas import consultar
from tests.apoyo.rutas import RAIZ
from tests.apoyo.servidor_stripe import CLAVE, SECRETO_WEBHOOK, servidor_stripe

pytestmark = [pytest.mark.lento, pytest.mark.temporal]

PEDIDO, PAGO = "P-20260917-0041", "pi_demo_p_20260917_0041"  # C-0001, cafetera de 120
HILO, LLAMADA = "hilo-caida-stripe", "call-caida-stripe"

HIJO = f"""
import os, time
from decimal import Decimal
from agente.bd.pool import abrir_pool
from nucleo.contexto import ContextoCliente
from caja.pasarela_stripe import PasarelaStripe
from operaciones.reembolso.herramienta import reembolsar

pool = abrir_pool(os.environ["DATABASE_URL"], max_size=2)

class StripeQueSeCuelga(PasarelaStripe):
    def emitir_reembolso(self, referencia, importe):
        movimiento = super().emitir_reembolso(referencia, importe)
        time.sleep(60)  # Stripe ya respondió; el libro aún no lo sabe
        return movimiento

pasarela = StripeQueSeCuelga(pool=pool, clave={CLAVE!r}, secreto_webhook={SECRETO_WEBHOOK!r},
                             api_base=os.environ["STRIPE_BASE"])
reembolsar(pool, contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
           thread_id={HILO!r}, tool_call_id={LLAMADA!r}, pedido={PEDIDO!r},
           importe=Decimal("120.00"), motivo="llegó rota", pasarela=pasarela)
print("el hijo terminó sin que lo mataran", flush=True)
"""


@pytest.mark.parametrize("reinicio", ["repite-la-llamada", "pasada-de-la-bandeja"])
def test_sigkill_tras_la_respuesta_de_stripe_deja_un_reembolso_y_el_libro_completo(pool, bd_url, reinicio):
    with servidor_stripe() as stripe_local:
        stripe_local.pagos[PAGO] = 12000
        proceso = subprocess.Popen(
            [sys.executable, "-c", HIJO],
            env={**os.environ, "DATABASE_URL": bd_url, "STRIPE_BASE": stripe_local.base},
            cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            fin = time.monotonic() + 30
            while not stripe_local.reembolsos:
                assert proceso.poll() is None, proceso.communicate()
                assert time.monotonic() < fin, "el hijo no llegó a Stripe"
                time.sleep(0.05)
            time.sleep(0.2)  # la respuesta ya salió hacia el hijo, que duerme antes del libro
            os.kill(proceso.pid, signal.SIGKILL)
            proceso.wait(timeout=30)
        finally:
            if proceso.poll() is None:
                proceso.kill()
                proceso.wait(timeout=30)
        assert proceso.returncode == -signal.SIGKILL
        assert consultar(bd_url, "SELECT estado FROM reembolsos")[0]["estado"] == "pendiente"
        assert len(stripe_local.reembolsos) == 1

        pasarela = PasarelaStripe(pool=pool, clave=CLAVE, secreto_webhook=SECRETO_WEBHOOK,
                                  api_base=stripe_local.base)
        if reinicio == "repite-la-llamada":
            resultado = reembolsar(
                pool, contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
                thread_id=HILO, tool_call_id=LLAMADA, pedido=PEDIDO, importe=Decimal("120.00"),
                motivo="llegó rota", pasarela=pasarela)
            assert resultado["estado"] == "emitido" and resultado["repetido"] is True
        else:
            hecho = completar_pendientes(pool, pasarela, solo_vencidos=False)
            assert len(hecho.completados) == 1
        fila = consultar(bd_url, "SELECT estado, id_proveedor FROM reembolsos")[0]
        assert fila == {"estado": "emitido", "id_proveedor": next(iter(stripe_local.reembolsos))}
        assert len(stripe_local.reembolsos) == 1
        assert len(stripe_local.creaciones("/v1/refunds")) == 1


def test_agente_auditoria_con_stripe_compara_el_libro_con_los_registros_de_stripe(pool, bd_url):
    import httpx

    with servidor_stripe() as stripe_local:
        stripe_local.pagos[PAGO] = 12000
        entorno = {**os.environ, "DATABASE_URL": bd_url, "AGENTE_PASARELA": "stripe",
                   "AGENTE_STRIPE_CLAVE": CLAVE, "AGENTE_STRIPE_SECRETO_WEBHOOK": SECRETO_WEBHOOK,
                   "AGENTE_STRIPE_API_BASE": stripe_local.base}

        def auditoria() -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "agente.cli", "auditoria"], cwd=RAIZ,
                                  env=entorno, capture_output=True, text=True, timeout=120)

        pasarela = PasarelaStripe(pool=pool, clave=CLAVE, secreto_webhook=SECRETO_WEBHOOK,
                                  api_base=stripe_local.base)
        reembolsar(pool, contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
                   thread_id=HILO, tool_call_id=LLAMADA, pedido=PEDIDO, importe=Decimal("30.00"),
                   motivo="llegó rota", pasarela=pasarela)
        # Un reembolso directo (sin veredicto) es además un efecto «sin firma»: aquí solo cuenta la pasarela.
        linea = "Libro, movimientos de la pasarela sin su asiento (o al revés, o con otro importe o tipo): "
        ok = auditoria()
        assert f"{linea}0" in ok.stdout, ok.stdout + ok.stderr
        # Dinero movido en Stripe que el libro no tiene (lo hizo alguien a mano en el panel).
        httpx.post(f"{stripe_local.base}/v1/refunds", headers={"Authorization": f"Bearer {CLAVE}"},
                   data={"payment_intent": PAGO, "amount": "500", "metadata[referencia]": "RE-999999",
                         "metadata[origen]": "agente"})
        mal = auditoria()
        assert mal.returncode == 1 and f"{linea}1" in mal.stdout
        assert "RE-999999" in mal.stdout and "movimiento_sin_asiento" in mal.stdout
