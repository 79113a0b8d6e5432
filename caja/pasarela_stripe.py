"""La pasarela Stripe, por el SDK oficial (``stripe``): reembolsos, enlaces de pago y webhooks.

- Reembolso: contra el pago del pedido (``pedidos.referencia_pago``, un ``pi_...``) por el
  importe del asiento (parcial si el libro lo dice), con ``Idempotency-Key`` y metadatos
  derivados de la referencia del asiento (``RE-...``). Antes de crearlo se busca entre
  los reembolsos de ese pago uno con la misma referencia: así un reintento tras una caída
  (incluso pasadas las 24 h que Stripe guarda una clave) es el mismo reembolso y, de paso,
  se lee su estado actual. ``pending`` queda en curso; lo termina el webhook.
- Cobro de la diferencia de un cambio: una Checkout Session (enlace de pago) con
  caducidad fija (``creado + minutos``: el cuerpo es el mismo en cada reintento, como
  exige la clave de idempotencia). Repetir la llamada lee la sesión: pagada, en curso o
  caducada.
- Errores: lo que Stripe dice que se puede repetir (red, 409, 5xx, ``Stripe-Should-Retry``)
  lo reintenta el SDK con la misma clave; si aun así falla, o es un límite de ritmo,
  ``ErrorPasarela`` y la cola de movimientos reintenta con espera. Lo que no servirá
  repetir (tarjeta rechazada, petición no válida, clave reutilizada con otro cuerpo)
  llega con ``definitivo=True``: el libro lo marca para una persona.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import stripe
from psycopg_pool import ConnectionPool

from caja.pasarela import (
    CADUCADO,
    COBRO,
    COMPLETADO,
    EN_CURSO,
    FALLIDO,
    REEMBOLSO,
    EventoPasarela,
    MovimientoPasarela,
    RegistroPasarela,
)
from nucleo.errores import ErrorConfiguracion, ErrorPasarela, EventoNoValido

__all__ = ["EVENTOS", "PasarelaStripe"]

# Los eventos que hay que activar en el endpoint del webhook (docs/pasarelas.md).
EVENTOS = (
    "refund.updated",
    "charge.refund.updated",
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.async_payment_failed",
    "checkout.session.expired",
)

SELECT_PAGO_DEL_REEMBOLSO_SQL = """
SELECT r.pedido_id, p.referencia_pago FROM reembolsos r JOIN pedidos p ON p.id = r.pedido_id
WHERE r.numero = %(referencia)s
"""

SELECT_COBRO_SQL = """
SELECT c.pedido_id, c.id_proveedor, c.creado, s.numero AS cambio, pr.nombre AS producto
FROM cobros c
JOIN sustituciones s ON s.id = c.sustitucion_id
JOIN productos pr ON pr.sku = s.sku_nuevo
WHERE c.numero = %(referencia)s
"""

ESTADOS_REEMBOLSO = {"succeeded": COMPLETADO, "pending": EN_CURSO, "requires_action": EN_CURSO,
                     "failed": FALLIDO, "canceled": FALLIDO}


def _centimos(importe: Decimal) -> int:
    return int((importe * 100).to_integral_exact())


def _euros(centimos: int) -> Decimal:
    return (Decimal(centimos) / 100).quantize(Decimal("0.01"))


def _instante(segundos: int | None) -> datetime | None:
    return datetime.fromtimestamp(segundos, UTC) if segundos else None


def _texto_corto(valor: object) -> bool:
    """Un identificador que se puede guardar: texto de 1 a 255 caracteres sin el carácter nulo."""
    return isinstance(valor, str) and 0 < len(valor) <= 255 and "\x00" not in valor


def _legible(valor: object, maximo: int = 500) -> str | None:
    """Un texto del proveedor que se puede guardar y enseñar: sin el carácter nulo y corto."""
    if valor is None:
        return None
    return str(valor).replace("\x00", "")[:maximo]


def _marca_de_firma(firma: str | None) -> int:
    """La marca de tiempo ``t=`` de ``Stripe-Signature`` (ya verificada por el SDK)."""
    for parte in (firma or "").split(","):
        clave, _, valor = parte.partition("=")
        if clave.strip() == "t":
            return int(valor)
    return 0


class PasarelaStripe:
    """``Pasarela`` y ``PasarelaConEventos`` sobre la API de Stripe (o el servidor de prueba)."""

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        clave: str,
        secreto_webhook: str,
        api_base: str | None = None,
        prefijo: str = "agente",
        url_retorno: str = "http://localhost:8000/",
        minutos_pago: int = 60,
        tolerancia: int = 300,
        reintentos: int = 2,
        tiempo_maximo: float = 30.0,
    ) -> None:
        if not clave or not secreto_webhook:
            raise ErrorConfiguracion(
                "la pasarela Stripe necesita AGENTE_STRIPE_CLAVE y AGENTE_STRIPE_SECRETO_WEBHOOK"
            )
        self.pool = pool
        self.secreto_webhook = secreto_webhook
        self.prefijo = prefijo
        self.url_retorno = url_retorno
        self.minutos_pago = minutos_pago
        self.tolerancia = tolerancia
        self.cliente = stripe.StripeClient(
            clave,
            base_addresses={"api": api_base.rstrip("/")} if api_base else None,
            max_network_retries=reintentos,
            http_client=stripe.RequestsClient(timeout=tiempo_maximo),
        )

    @classmethod
    def desde_ajustes(cls, pool: ConnectionPool, ajustes) -> PasarelaStripe:
        def secreto(valor) -> str:
            return valor.get_secret_value() if valor is not None else ""

        return cls(
            pool=pool, clave=secreto(ajustes.stripe_clave),
            secreto_webhook=secreto(ajustes.stripe_secreto_webhook),
            api_base=ajustes.stripe_api_base, prefijo=ajustes.stripe_prefijo_claves,
            url_retorno=ajustes.stripe_url_retorno, minutos_pago=ajustes.stripe_minutos_pago,
            tolerancia=ajustes.stripe_tolerancia_webhook, reintentos=ajustes.stripe_reintentos_red,
        )

    def clave_idempotencia(self, tipo: str, referencia: str) -> str:
        return f"{self.prefijo}:{tipo}:{referencia}"

    # -- reembolsos ---------------------------------------------------------------------------

    def emitir_reembolso(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        with self.pool.connection() as conexion:
            fila = conexion.execute(SELECT_PAGO_DEL_REEMBOLSO_SQL, {"referencia": referencia}).fetchone()
        if fila is None:
            raise ErrorPasarela(f"no hay ningún reembolso {referencia} en el libro", definitivo=True)
        pago = fila["referencia_pago"]
        if not pago:
            raise ErrorPasarela(
                f"el pedido {fila['pedido_id']} no tiene la referencia de su pago en Stripe "
                "(pedidos.referencia_pago): no se puede devolver el dinero por la pasarela",
                definitivo=True,
            )
        reembolso = self._reembolso_existente(pago, referencia)
        nuevo = reembolso is None
        if nuevo:
            reembolso = self._llamar(
                self.cliente.v1.refunds.create,
                {"payment_intent": pago, "amount": _centimos(importe),
                 "metadata": {"referencia": referencia, "origen": self.prefijo}},
                {"idempotency_key": self.clave_idempotencia(REEMBOLSO, referencia)},
            )
        return self._de_reembolso(reembolso, referencia, nuevo=nuevo)

    def _reembolso_existente(self, pago: str, referencia: str) -> dict | None:
        lista = self._llamar(self.cliente.v1.refunds.list, {"payment_intent": pago, "limit": 100})
        for reembolso in lista.auto_paging_iter():
            datos = reembolso.to_dict()
            if self._es_nuestro(datos, referencia):
                return reembolso
        return None

    def _es_nuestro(self, datos: dict, referencia: str | None = None) -> bool:
        metadatos = datos.get("metadata") or {}
        if not isinstance(metadatos, dict):
            return False
        return metadatos.get("origen") == self.prefijo and (
            referencia is None or metadatos.get("referencia") == referencia
        )

    @staticmethod
    def _de_reembolso(reembolso, referencia: str, *, nuevo: bool) -> MovimientoPasarela:
        datos = reembolso if isinstance(reembolso, dict) else reembolso.to_dict()
        estado = ESTADOS_REEMBOLSO.get(datos.get("status"), EN_CURSO)
        detalle = None
        if estado == FALLIDO:
            detalle = f"Stripe no pudo devolver el dinero ({_legible(datos.get('failure_reason') or datos.get('status'))})"
        elif estado == EN_CURSO:
            detalle = "el banco del cliente aún está procesando la devolución"
        return MovimientoPasarela(
            id=0, referencia=referencia, importe=_euros(datos["amount"]),
            creado=_instante(datos.get("created")) or datetime.now(UTC), nuevo=nuevo,
            tipo=REEMBOLSO, estado=estado, id_proveedor=datos["id"], detalle=detalle,
        )

    # -- cobros (enlace de pago) --------------------------------------------------------------

    def cobrar(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        with self.pool.connection() as conexion:
            fila = conexion.execute(SELECT_COBRO_SQL, {"referencia": referencia}).fetchone()
        if fila is None:
            raise ErrorPasarela(f"no hay ningún cobro {referencia} en el libro", definitivo=True)
        caduca = fila["creado"] + timedelta(minutes=self.minutos_pago)
        nuevo = False
        if fila["id_proveedor"] is None:
            if caduca <= datetime.now(UTC):
                # Nunca llegó a crearse el enlace (o se perdió) y ya pasó su hora: caduca.
                return MovimientoPasarela(
                    id=0, referencia=referencia, importe=importe, creado=fila["creado"],
                    nuevo=False, tipo=COBRO, estado=CADUCADO, caduca=caduca,
                    detalle="el enlace de pago caducó sin pagarse")
            sesion = self._llamar(
                self.cliente.v1.checkout.sessions.create,
                self._cuerpo_sesion(referencia, importe, fila, caduca),
                {"idempotency_key": self.clave_idempotencia(COBRO, referencia)},
            )
            nuevo = True
            identificador = sesion.to_dict()["id"]
        else:
            identificador = fila["id_proveedor"]
        # La respuesta repetida de una clave es la de entonces: el estado de hoy se lee.
        sesion = self._llamar(self.cliente.v1.checkout.sessions.retrieve, identificador)
        return self._de_sesion(sesion.to_dict(), referencia, nuevo=nuevo)

    def _cuerpo_sesion(self, referencia: str, importe: Decimal, fila: dict, caduca: datetime) -> dict:
        metadatos = {"referencia": referencia, "origen": self.prefijo}
        return {
            "mode": "payment",
            "line_items": [{
                "quantity": 1,
                "price_data": {
                    "currency": "eur", "unit_amount": _centimos(importe),
                    "product_data": {"name": f"Diferencia del cambio {fila['cambio']}: {fila['producto']}"},
                },
            }],
            "success_url": self.url_retorno, "cancel_url": self.url_retorno,
            "expires_at": int(caduca.timestamp()),
            "client_reference_id": fila["pedido_id"],
            "metadata": metadatos,
            "payment_intent_data": {"metadata": metadatos},
        }

    @staticmethod
    def _de_sesion(datos: dict, referencia: str, *, nuevo: bool, fallido: bool = False) -> MovimientoPasarela:
        pagada = datos.get("payment_status") in ("paid", "no_payment_required")
        if fallido:
            estado, detalle = FALLIDO, "el pago del cliente no se completó (rechazado por su banco)"
        elif datos.get("status") == "complete" and pagada:
            estado, detalle = COMPLETADO, None
        elif datos.get("status") == "expired":
            estado, detalle = CADUCADO, "el enlace de pago caducó sin pagarse"
        else:
            estado, detalle = EN_CURSO, "esperando a que el cliente pague por el enlace"
        return MovimientoPasarela(
            id=0, referencia=referencia, importe=_euros(datos["amount_total"]),
            creado=_instante(datos.get("created")) or datetime.now(UTC), nuevo=nuevo, tipo=COBRO,
            estado=estado, id_proveedor=datos["id"], enlace=_legible(datos.get("url")),
            caduca=_instante(datos.get("expires_at")), detalle=detalle,
        )

    # -- webhooks y registros -----------------------------------------------------------------

    def leer_evento(self, cuerpo: bytes, firma: str | None) -> EventoPasarela:
        """Comprueba ``Stripe-Signature`` con el SDK (firma y antigüedad) y traduce el evento.

        Además de lo que mira el SDK: un evento firmado con una marca de tiempo (o un
        ``created``) más allá de la tolerancia en el futuro no vale, y un cuerpo firmado
        que no tiene la forma de un evento (una lista, sin ``id``, un reembolso sin
        importe...) es ``EventoNoValido`` (400), nunca un error interno."""
        try:
            evento = stripe.Webhook.construct_event(
                cuerpo, firma, self.secreto_webhook, tolerance=self.tolerancia
            )
        except stripe.SignatureVerificationError as exc:
            raise EventoNoValido("webhook rechazado: la firma no es válida o el evento es viejo") from exc
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # JSON roto, bytes que no son UTF-8, una firma con caracteres raros o un cuerpo
            # que no es un objeto (el SDK no sabe construir un evento de una lista).
            raise EventoNoValido("webhook rechazado: el cuerpo no es un evento") from exc
        ahora = time.time()
        if _marca_de_firma(firma) > ahora + self.tolerancia:
            raise EventoNoValido("webhook rechazado: la firma está fechada en el futuro")
        try:
            return self._traducir(evento.to_dict(), ahora)
        except (KeyError, TypeError, ValueError, ArithmeticError, OSError) as exc:
            raise EventoNoValido("webhook rechazado: el evento no tiene la forma de un evento de Stripe") from exc

    def _traducir(self, datos: dict, ahora: float) -> EventoPasarela:
        """El evento ya verificado, a un ``EventoPasarela``; ``EventoNoValido`` si su forma no vale."""
        if not isinstance(datos, dict):
            raise EventoNoValido("webhook rechazado: el cuerpo no es un evento")
        id_, tipo, creado = datos.get("id"), datos.get("type"), datos.get("created")
        if not _texto_corto(id_) or not _texto_corto(tipo):
            raise EventoNoValido("webhook rechazado: el evento no trae «id» o «type» válidos")
        if creado is not None and (not isinstance(creado, int) or isinstance(creado, bool)):
            raise EventoNoValido("webhook rechazado: «created» no es una marca de tiempo")
        if creado is not None and creado > ahora + self.tolerancia:
            raise EventoNoValido("webhook rechazado: el evento está fechado en el futuro")
        contenido = datos.get("data")
        objeto = contenido.get("object") if isinstance(contenido, dict) else None
        if not isinstance(objeto, dict):
            raise EventoNoValido("webhook rechazado: el evento no trae «data.object»")
        movimiento = None
        if tipo in EVENTOS and self._es_nuestro(objeto):
            referencia = objeto["metadata"].get("referencia")
            if not _texto_corto(referencia):
                raise EventoNoValido("webhook rechazado: la referencia del evento no es válida")
            if objeto.get("object") == "refund":
                movimiento = self._de_reembolso(objeto, referencia, nuevo=False)
            elif objeto.get("object") == "checkout.session":
                movimiento = self._de_sesion(
                    objeto, referencia, nuevo=False,
                    fallido=tipo == "checkout.session.async_payment_failed")
            if movimiento is not None and not _texto_corto(movimiento.id_proveedor):
                raise EventoNoValido("webhook rechazado: el objeto del evento no trae su «id»")
        return EventoPasarela(id=id_, tipo=tipo, movimiento=movimiento)

    def registros(self) -> list[RegistroPasarela]:
        """Reembolsos y pagos de enlaces de este entorno (``origen``) que mueven dinero."""
        registros = []
        reembolsos = self._llamar(self.cliente.v1.refunds.list, {"limit": 100})
        for reembolso in reembolsos.auto_paging_iter():
            datos = reembolso.to_dict()
            if self._es_nuestro(datos) and ESTADOS_REEMBOLSO.get(datos.get("status")) != FALLIDO:
                registros.append(RegistroPasarela(datos["metadata"]["referencia"], REEMBOLSO,
                                                  _euros(datos["amount"]), datos["status"]))
        sesiones = self._llamar(self.cliente.v1.checkout.sessions.list, {"limit": 100})
        for sesion in sesiones.auto_paging_iter():
            datos = sesion.to_dict()
            if self._es_nuestro(datos) and datos.get("payment_status") == "paid":
                registros.append(RegistroPasarela(datos["metadata"]["referencia"], COBRO,
                                                  _euros(datos["amount_total"]), datos["status"]))
        return registros

    # -- errores ------------------------------------------------------------------------------

    @staticmethod
    def _llamar(operacion, *argumentos):
        """Una llamada al SDK con los errores de Stripe traducidos (ver el módulo)."""
        try:
            return operacion(*argumentos)
        except (stripe.CardError, stripe.InvalidRequestError, stripe.IdempotencyError) as exc:
            raise ErrorPasarela(
                f"Stripe rechaza la operación ({exc.code or type(exc).__name__}): "
                f"{exc.user_message or 'repetirla no servirá'}",
                definitivo=True, codigo=exc.code,
            ) from exc
        except stripe.RateLimitError as exc:
            raise ErrorPasarela("Stripe pide bajar el ritmo (límite de peticiones); se reintentará") from exc
        except stripe.APIConnectionError as exc:
            raise ErrorPasarela("no hay conexión con Stripe; se reintentará") from exc
        except stripe.StripeError as exc:
            raise ErrorPasarela(
                f"Stripe no ha podido atender la petición ({type(exc).__name__}); se reintentará"
            ) from exc
