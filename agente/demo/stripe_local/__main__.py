"""``python -m agente.demo.stripe_local``: el servidor del protocolo de Stripe de la demo, solo.

Escucha en 127.0.0.1, lee los pagos de los pedidos de la base y manda los webhooks firmados
al producto. Escribe las variables con las que arrancar ``agente serve`` contra él."""

from __future__ import annotations

import argparse
import logging
import threading

from agente.demo.stripe_local import ServidorStripeDemo, entorno_pasarela, servidor_stripe
from agente.demo.stripe_local.demo import RUTA_WEBHOOK


def main(argumentos: list[str] | None = None) -> None:
    lector = argparse.ArgumentParser(prog="python -m agente.demo.stripe_local",
                                     description="Servidor local del protocolo de Stripe para la demo.")
    lector.add_argument("--puerto", type=int, default=12111, help="Puerto (127.0.0.1).")
    lector.add_argument("--producto", default="http://127.0.0.1:8000",
                        help="URL del producto: los webhooks van a su /api/pasarela/stripe/webhook.")
    lector.add_argument("--base-datos", required=True, help="URL de PostgreSQL de la demo (los pagos).")
    lector.add_argument("--pendientes", action="store_true",
                        help="Los reembolsos quedan pendientes y los termina un webhook.")
    args = lector.parse_args(argumentos)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    estado = ServidorStripeDemo(webhook_url=args.producto.rstrip("/") + RUTA_WEBHOOK,
                                base_datos=args.base_datos, pendientes=args.pendientes)
    with servidor_stripe(estado, args.puerto) as servidor:
        print(f"Stripe local en {servidor.base}; arranca el producto con:", flush=True)
        for nombre, valor in entorno_pasarela(servidor.base).items():
            print(f"  {nombre}={valor}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
