"""El servidor local del protocolo de Stripe de las pruebas: el mismo que usa la demo
(``agente/demo/stripe_local/protocolo.py``, su docstring dice qué hace y cómo se controla)."""

from agente.demo.stripe_local.protocolo import (
    CLAVE,
    SECRETO_WEBHOOK,
    ServidorStripe,
    firmar,
    servidor_stripe,
)

__all__ = ["CLAVE", "SECRETO_WEBHOOK", "ServidorStripe", "firmar", "servidor_stripe"]
