"""El servidor del protocolo de Stripe para la demo: el de las pruebas (``protocolo``) más lo
que en Stripe hace el resto del mundo.

- Conoce los pagos de los pedidos (``pedidos.referencia_pago``, ``pi_demo_...``) con su
  importe, leídos de la base (y otra vez si llega un pago que no conocía: un pedido ingerido).
- Manda los webhooks firmados al producto (``/api/pasarela/stripe/webhook``): al crear un
  reembolso, ``refund.created``; con ``pendientes=True`` el reembolso queda ``pending`` y,
  un momento después, el banco lo termina (``refund.updated`` y ``charge.refund.updated``).
- La página de pago de un enlace (``/pagar/{sesión}``): un botón «Pagar» que completa la
  sesión y manda ``checkout.session.completed``; después vuelve a ``success_url``.
"""

from __future__ import annotations

import html
import logging
import threading
from dataclasses import dataclass

import httpx
import psycopg

from agente.demo.stripe_local.protocolo import CLAVE, SECRETO_WEBHOOK, ServidorStripe

__all__ = ["PAGOS_SQL", "RUTA_WEBHOOK", "ServidorStripeDemo", "entorno_pasarela", "pagos_de_la_base"]

logger = logging.getLogger(__name__)

RUTA_WEBHOOK = "/api/pasarela/stripe/webhook"
PAGOS_SQL = "SELECT referencia_pago, importe FROM pedidos WHERE referencia_pago IS NOT NULL"


def entorno_pasarela(base_stripe: str) -> dict[str, str]:
    """Las variables con las que el producto usa este servidor como su Stripe."""
    return {"AGENTE_PASARELA": "stripe", "AGENTE_STRIPE_CLAVE": CLAVE,
            "AGENTE_STRIPE_SECRETO_WEBHOOK": SECRETO_WEBHOOK, "AGENTE_STRIPE_API_BASE": base_stripe}


def pagos_de_la_base(url: str) -> dict[str, int]:
    """``payment_intent`` -> céntimos cobrados, de los pedidos con referencia de pago."""
    with psycopg.connect(url) as conexion:
        filas = conexion.execute(PAGOS_SQL).fetchall()
    return {referencia: int(importe * 100) for referencia, importe in filas}


@dataclass
class ServidorStripeDemo(ServidorStripe):
    webhook_url: str = ""
    base_datos: str | None = None
    pendientes: bool = False
    espera_banco: float = 2.0  # segundos hasta que el banco termina un reembolso pendiente

    def __post_init__(self) -> None:
        if self.pendientes:
            self.estado_reembolsos = "pending"
        if self.base_datos:
            self.pagos.update(pagos_de_la_base(self.base_datos))

    def _entregar(self, eventos: list[tuple[bytes, str]]) -> None:
        for cuerpo, firma in eventos:
            try:
                respuestas = self.enviar(self.webhook_url, cuerpo, firma)
                logger.info("webhook entregado: %s", respuestas[0].status_code)
            except httpx.HTTPError as exc:
                logger.warning("webhook no entregado: %s", exc)

    def _en_un_rato(self, espera: float, trabajo) -> None:
        temporizador = threading.Timer(espera, trabajo)
        temporizador.daemon = True
        temporizador.start()

    def _crear_reembolso(self, datos: dict) -> tuple[int, dict]:
        if self.base_datos and datos.get("payment_intent") not in self.pagos:
            self.pagos.update(pagos_de_la_base(self.base_datos))
        estado, reembolso = super()._crear_reembolso(datos)
        if estado != 200 or not self.webhook_url:
            return estado, reembolso
        creado = [self.evento("refund.created", reembolso)]
        self._en_un_rato(0.2, lambda: self._entregar(creado))
        if reembolso["status"] == "pending":
            id_ = reembolso["id"]
            self._en_un_rato(self.espera_banco, lambda: self._entregar(self.terminar_reembolso(id_)))
        return estado, reembolso

    def pagina(self, metodo: str, ruta: str) -> tuple[int, dict, str]:
        partes = ruta.strip("/").split("/")
        sesion = self.sesiones.get(partes[1]) if len(partes) == 2 and partes[0] == "pagar" else None
        if sesion is None:
            return 404, {}, _html("No existe", "<p>Este enlace de pago no existe.</p>")
        if metodo == "POST" and sesion["status"] == "open":
            evento = self.pagar_sesion(sesion["id"])
            self._en_un_rato(0.2, lambda: self._entregar([evento]))
        if sesion["status"] != "open":
            return 303, {"Location": sesion.get("success_url") or "/"}, ""
        importe = f"{sesion['amount_total'] / 100:.2f}".replace(".", ",")
        return 200, {}, _html("Pago", (
            f"<p>Importe: <strong>{importe} EUR</strong> (pasarela local de la demo: no se cobra nada).</p>"
            f'<form method="post"><button type="submit">Pagar {importe} EUR</button></form>'))


def _html(titulo: str, cuerpo: str) -> str:
    return (f'<!doctype html><html lang="es"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(titulo)} · Stripe local</title></head>"
            f"<body><main><h1>{html.escape(titulo)}</h1>{cuerpo}</main></body></html>")
