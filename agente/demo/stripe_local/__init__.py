"""La pasarela Stripe de la demo, en local: un servidor que habla el protocolo de la API de
Stripe (``protocolo``: reembolsos, Checkout Sessions, claves de idempotencia, errores) y
manda sus webhooks firmados al producto (``demo``).

``agente demo --pasarela stripe-local`` lo arranca en su proceso; también se ejecuta solo,
junto a un ``agente serve`` con ``AGENTE_PASARELA=stripe``: ``python -m agente.demo.stripe_local``.
"""

from agente.demo.stripe_local.demo import ServidorStripeDemo, entorno_pasarela, pagos_de_la_base
from agente.demo.stripe_local.protocolo import (
    CLAVE,
    SECRETO_WEBHOOK,
    ServidorStripe,
    servidor_stripe,
)

__all__ = ["CLAVE", "SECRETO_WEBHOOK", "ServidorStripe", "ServidorStripeDemo", "entorno_pasarela",
           "pagos_de_la_base", "servidor_stripe"]

