"""Un servidor local que habla la API HTTP de Stripe para lo que usa la pasarela: el contrato.
Lo usan las pruebas (``tests/apoyo/servidor_stripe.py``) y ``agente demo --pasarela
stripe-local`` (``agente.demo.stripe_local``).

Endpoints (``/v1``): ``POST /refunds``, ``GET /refunds`` (``payment_intent``, paginado con
``starting_after``), ``GET /refunds/{id}``, ``POST /checkout/sessions``, ``GET
/checkout/sessions``, ``GET /checkout/sessions/{id}``. Cuerpos ``form-encoded`` con
claves anidadas (``metadata[referencia]``, ``line_items[0][price_data][unit_amount]``),
respuestas JSON con la forma de Stripe, errores ``{"error": {"type", "code", "message"}}``.

``Idempotency-Key`` como Stripe: la misma clave con el mismo cuerpo devuelve la misma
respuesta (``Idempotent-Replayed: true``) sin crear nada; la misma clave con otro cuerpo
es 400 ``idempotency_error``. Se comprueba antes que nada más.

Para las pruebas: ``pagos`` (payment intents con su importe), ``fallar(...)`` (las
próximas peticiones devuelven un error: 500, 429 con ``Stripe-Should-Retry``, 402
``card_declined``...), ``perder_respuestas(n)`` (procesa y corta la conexión: la red cae
después de que el proveedor lo hizo), ``retraso``, ``estado_reembolsos`` (``pending``
para que los termine un webhook), y ``evento(...)`` / ``enviar(...)``: webhooks firmados
(``Stripe-Signature`` con ``t=`` y ``v1=`` HMAC-SHA256), que se pueden duplicar, retrasar
o fechar en el pasado.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

__all__ = ["ServidorStripe", "firmar", "servidor_stripe"]

CLAVE = "sk_test_contrato"
SECRETO_WEBHOOK = "whsec_contrato"


def firmar(cuerpo: bytes, secreto: str, marca: int | None = None) -> str:
    """La cabecera ``Stripe-Signature`` de ``cuerpo`` (esquema ``v1``, como Stripe)."""
    marca = int(time.time()) if marca is None else marca
    firma = hmac.new(secreto.encode(), f"{marca}.".encode() + cuerpo, hashlib.sha256).hexdigest()
    return f"t={marca},v1={firma}"


def _anidar(pares: list[tuple[str, str]]) -> dict:
    """``a[b][0][c]=v`` -> ``{"a": {"b": [{"c": "v"}]}}`` (listas por índice)."""
    raiz: dict = {}
    for clave, valor in pares:
        partes = clave.replace("]", "").split("[")
        nodo = raiz
        for i, parte in enumerate(partes):
            ultima = i == len(partes) - 1
            if ultima:
                nodo[parte] = valor
            else:
                nodo = nodo.setdefault(parte, {})
    return _listas(raiz)


def _listas(nodo):
    if isinstance(nodo, dict):
        if nodo and all(k.isdigit() for k in nodo):
            return [_listas(nodo[k]) for k in sorted(nodo, key=int)]
        return {k: _listas(v) for k, v in nodo.items()}
    return nodo


@dataclass
class _Fallo:
    estado: int
    tipo: str
    codigo: str | None = None
    reintentar: str | None = None  # Stripe-Should-Retry


@dataclass
class ServidorStripe:
    base: str = ""
    pagos: dict[str, int] = field(default_factory=dict)  # payment_intent -> céntimos cobrados
    reembolsos: dict[str, dict] = field(default_factory=dict)
    sesiones: dict[str, dict] = field(default_factory=dict)
    peticiones: list[dict] = field(default_factory=list)
    estado_reembolsos: str = "succeeded"
    retraso: float = 0.0  # segundos antes de atender cada escritura
    secreto_webhook: str = SECRETO_WEBHOOK
    _claves: dict[str, tuple[str, int, dict]] = field(default_factory=dict)
    _fallos: list[_Fallo] = field(default_factory=list)
    _perder: int = 0
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _candado: threading.Lock = field(default_factory=threading.Lock)

    # -- control desde la prueba --------------------------------------------------------------

    def fallar(self, veces: int = 1, *, estado: int = 500, tipo: str = "api_error",
               codigo: str | None = None, reintentar: str | None = None) -> None:
        self._fallos.extend(_Fallo(estado, tipo, codigo, reintentar) for _ in range(veces))

    def perder_respuestas(self, veces: int = 1) -> None:
        """Las próximas ``veces`` peticiones de escritura se procesan y la conexión se corta."""
        self._perder += veces

    def creaciones(self, ruta: str) -> list[dict]:
        return [p for p in self.peticiones if p["metodo"] == "POST" and p["ruta"] == ruta]

    def evento(self, tipo: str, objeto: dict, *, marca: int | None = None) -> tuple[bytes, str]:
        """Un evento firmado: (cuerpo, cabecera ``Stripe-Signature``)."""
        datos = {
            "id": f"evt_{next(self._ids):06d}", "object": "event", "api_version": "2026-01-01",
            "created": int(time.time()), "livemode": False, "pending_webhooks": 1, "type": tipo,
            "data": {"object": json.loads(json.dumps(objeto))},
            "request": {"id": None, "idempotency_key": None},
        }
        cuerpo = json.dumps(datos).encode()
        return cuerpo, firmar(cuerpo, self.secreto_webhook, marca)

    def enviar(self, url: str, cuerpo: bytes, firma: str, *, veces: int = 1,
               retraso: float = 0.0) -> list[httpx.Response]:
        """Entrega un webhook (``veces`` > 1: duplicado, como hace Stripe al reintentar)."""
        time.sleep(retraso)
        cabeceras = {"Stripe-Signature": firma, "Content-Type": "application/json"}
        return [httpx.post(url, content=cuerpo, headers=cabeceras, timeout=30) for _ in range(veces)]

    def terminar_reembolso(self, id_: str, estado: str = "succeeded", *,
                           motivo: str | None = None) -> list[tuple[bytes, str]]:
        """El banco termina un reembolso ``pending``: los dos eventos que manda Stripe."""
        reembolso = self.reembolsos[id_]
        reembolso["status"] = estado
        if estado == "failed":
            reembolso["failure_reason"] = motivo or "expired_or_canceled_card"
        return [self.evento("refund.updated", reembolso),
                self.evento("charge.refund.updated", reembolso)]

    def pagar_sesion(self, id_: str) -> tuple[bytes, str]:
        sesion = self.sesiones[id_]
        sesion.update(status="complete", payment_status="paid",
                      payment_intent=f"pi_sesion_{next(self._ids):06d}")
        return self.evento("checkout.session.completed", sesion)

    def caducar_sesion(self, id_: str) -> tuple[bytes, str]:
        self.sesiones[id_]["status"] = "expired"
        return self.evento("checkout.session.expired", self.sesiones[id_])

    # -- la API --------------------------------------------------------------------------------

    def atender(self, metodo: str, ruta: str, consulta: dict, cuerpo: bytes,
                cabeceras: dict) -> tuple[int, dict, dict]:
        pares = parse_qsl(cuerpo.decode(), keep_blank_values=True)
        self.peticiones.append({"metodo": metodo, "ruta": ruta, "datos": _anidar(pares),
                                "clave": cabeceras.get("idempotency-key")})
        if cabeceras.get("authorization") != f"Bearer {CLAVE}":
            return 401, {}, _error("invalid_request_error", "Invalid API Key provided", None)
        if self._fallos:
            fallo = self._fallos.pop(0)
            extra = {"Stripe-Should-Retry": fallo.reintentar} if fallo.reintentar else {}
            return fallo.estado, extra, _error(fallo.tipo, "fallo de prueba", fallo.codigo)
        clave = cabeceras.get("idempotency-key")
        if metodo == "POST" and clave:
            huella = json.dumps([ruta, sorted(pares)])
            with self._candado:
                if clave in self._claves:
                    anterior, estado, respuesta = self._claves[clave]
                    if anterior != huella:
                        return 400, {}, _error(
                            "idempotency_error",
                            "Keys for idempotent requests can only be used with the same "
                            "parameters they were first used with.", None)
                    return estado, {"Idempotent-Replayed": "true"}, respuesta
                estado, respuesta = self._escribir(ruta, _anidar(pares))
                self._claves[clave] = (huella, estado, respuesta)
                return estado, {}, respuesta
        if metodo == "POST":
            with self._candado:
                estado, respuesta = self._escribir(ruta, _anidar(pares))
            return estado, {}, respuesta
        return self._leer(ruta, consulta)

    def _escribir(self, ruta: str, datos: dict) -> tuple[int, dict]:
        if ruta == "/v1/refunds":
            return self._crear_reembolso(datos)
        if ruta == "/v1/checkout/sessions":
            return self._crear_sesion(datos)
        return 404, _error("invalid_request_error", f"Unrecognized request URL (POST: {ruta})", None)

    def _crear_reembolso(self, datos: dict) -> tuple[int, dict]:
        pago = datos.get("payment_intent")
        if pago not in self.pagos:
            return 400, _error("invalid_request_error", f"No such payment_intent: '{pago}'",
                               "resource_missing")
        importe = int(datos.get("amount", self.pagos[pago]))
        devuelto = sum(r["amount"] for r in self.reembolsos.values()
                       if r["payment_intent"] == pago and r["status"] not in ("failed", "canceled"))
        if devuelto + importe > self.pagos[pago]:
            return 400, _error("invalid_request_error", "Refund amount is greater than unrefunded amount",
                               "charge_already_refunded" if devuelto else "amount_too_large")
        id_ = f"re_test_{next(self._ids):06d}"
        self.reembolsos[id_] = {
            "id": id_, "object": "refund", "amount": importe, "currency": "eur",
            "payment_intent": pago, "charge": f"ch_{pago}", "status": self.estado_reembolsos,
            "metadata": datos.get("metadata", {}), "created": int(time.time()),
            "failure_reason": None,
        }
        return 200, self.reembolsos[id_]

    def _crear_sesion(self, datos: dict) -> tuple[int, dict]:
        lineas = datos.get("line_items") or []
        try:
            total = sum(int(x["price_data"]["unit_amount"]) * int(x.get("quantity", 1)) for x in lineas)
            caduca = int(datos["expires_at"])
        except (KeyError, TypeError, ValueError):
            return 400, _error("invalid_request_error", "Missing required param", "parameter_missing")
        ahora = int(time.time())
        if not (ahora + 30 * 60 - 5 <= caduca <= ahora + 24 * 3600):
            return 400, _error("invalid_request_error",
                               "expires_at must be between 30 minutes and 24 hours", "parameter_invalid")
        id_ = f"cs_test_{next(self._ids):06d}"
        self.sesiones[id_] = {
            "id": id_, "object": "checkout.session", "mode": datos.get("mode"), "status": "open",
            "payment_status": "unpaid", "amount_total": total, "currency": "eur",
            "url": f"{self.base}/pagar/{id_}", "expires_at": caduca, "created": ahora,
            "metadata": datos.get("metadata", {}),
            "client_reference_id": datos.get("client_reference_id"), "payment_intent": None,
            "success_url": datos.get("success_url"),
        }
        return 200, self.sesiones[id_]

    def _leer(self, ruta: str, consulta: dict) -> tuple[int, dict, dict]:
        partes = ruta.strip("/").split("/")
        if ruta == "/v1/refunds":
            filas = [r for r in self.reembolsos.values()
                     if consulta.get("payment_intent") in (None, r["payment_intent"])]
            return 200, {}, _lista(ruta, filas, consulta)
        if ruta == "/v1/checkout/sessions":
            return 200, {}, _lista(ruta, list(self.sesiones.values()), consulta)
        if partes[:2] == ["v1", "refunds"] and len(partes) == 3 and partes[2] in self.reembolsos:
            return 200, {}, self.reembolsos[partes[2]]
        if partes[:3] == ["v1", "checkout", "sessions"] and len(partes) == 4 and partes[3] in self.sesiones:
            return 200, {}, self.sesiones[partes[3]]
        return 404, {}, _error("invalid_request_error", f"No such object: {ruta}", "resource_missing")


def _error(tipo: str, mensaje: str, codigo: str | None) -> dict:
    return {"error": {"type": tipo, "message": mensaje, "code": codigo}}


def _lista(ruta: str, filas: list[dict], consulta: dict) -> dict:
    filas = sorted(filas, key=lambda f: f["id"])
    if consulta.get("starting_after"):
        filas = [f for f in filas if f["id"] > consulta["starting_after"]]
    limite = int(consulta.get("limit", 10))
    return {"object": "list", "url": ruta, "data": filas[:limite], "has_more": len(filas) > limite}


def _manejador(stripe: ServidorStripe):
    class Manejador(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # cabeceras y cuerpo van en dos envíos: sin esto, +40 ms

        def log_message(self, *args: Any) -> None:
            pass

        def _atender(self, metodo: str) -> None:
            partes = urlsplit(self.path)
            if not partes.path.startswith("/v1/") and hasattr(stripe, "pagina"):
                self._pagina(metodo, partes.path)
                return
            largo = int(self.headers.get("Content-Length") or 0)
            cuerpo = self.rfile.read(largo) if largo else b""
            cabeceras = {k.lower(): v for k, v in self.headers.items()}
            if stripe.retraso and metodo == "POST":
                time.sleep(stripe.retraso)  # Stripe tarda en hacerlo, pero lo hace
            estado, extra, respuesta = stripe.atender(
                metodo, partes.path, dict(parse_qsl(partes.query)), cuerpo, cabeceras)
            if metodo == "POST" and stripe._perder > 0:
                stripe._perder -= 1
                self.close_connection = True
                self.connection.shutdown(2)  # procesado, y la respuesta no llega
                return
            datos = json.dumps(respuesta).encode()
            self.send_response(estado)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(datos)))
            self.send_header("Request-Id", f"req_{time.monotonic_ns()}")
            for nombre, valor in extra.items():
                self.send_header(nombre, valor)
            self.end_headers()
            self.wfile.write(datos)

        def _pagina(self, metodo: str, ruta: str) -> None:
            """Las páginas que no son la API (la del pago de la demo: ``ServidorStripeDemo``)."""
            largo = int(self.headers.get("Content-Length") or 0)
            if largo:
                self.rfile.read(largo)
            estado, cabeceras, html = stripe.pagina(metodo, ruta)
            datos = html.encode()
            self.send_response(estado)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(datos)))
            for nombre, valor in cabeceras.items():
                self.send_header(nombre, valor)
            self.end_headers()
            self.wfile.write(datos)

        def do_GET(self) -> None:
            self._atender("GET")

        def do_POST(self) -> None:
            self._atender("POST")

    return Manejador


@contextmanager
def servidor_stripe(estado: ServidorStripe | None = None, puerto: int = 0) -> Iterator[ServidorStripe]:
    """El servidor en un hilo, en 127.0.0.1 (``puerto`` 0: uno libre)."""
    estado = estado if estado is not None else ServidorStripe()
    http = ThreadingHTTPServer(("127.0.0.1", puerto), _manejador(estado))
    http.daemon_threads = True
    estado.base = f"http://127.0.0.1:{http.server_address[1]}"
    hilo = threading.Thread(target=http.serve_forever, daemon=True)
    hilo.start()
    try:
        yield estado
    finally:
        http.shutdown()
        http.server_close()
