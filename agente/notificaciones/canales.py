"""Canales de aviso: correo (SMTP, con Apprise), webhook firmado, webhook tipo Slack y
cualquier URL de Apprise.

Contrato de un canal: ``enviar(entrega)`` vuelve si el otro lado aceptó el aviso y lanza
``ErrorCanal`` si no (el trabajador reintenta con espera creciente). Cada envío lleva la
clave del aviso (cabecera ``X-Agente-Aviso-Id``): la entrega es «al menos una vez» y quien
recibe deduplica por ella.

Por qué el webhook no va por Apprise: su plugin ``json://`` escribe el cuerpo él mismo y
solo admite cabeceras fijas en la URL, así que no se puede firmar con HMAC el cuerpo que
de verdad sale. Se envía con httpx: ``X-Agente-Fecha`` (segundos Unix) y
``X-Agente-Firma: sha256=<hex>``, el HMAC-SHA256 de ``fecha + "." + cuerpo`` con el
secreto de la tienda (``avisos_tienda.secreto_webhook``); ``verificar_firma`` es lo que
hace quien recibe.

Trampa (comprobada con Apprise 2.2): el correo de Apprise pone siempre su propio
``Message-ID`` aleatorio; añadir otro como cabecera deja dos. La clave va en
``X-Agente-Aviso-Id``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

import apprise
import httpx

__all__ = [
    "CABECERA_AVISO",
    "CABECERA_FECHA",
    "CABECERA_FIRMA",
    "Canal",
    "CanalApprise",
    "CanalCorreo",
    "CanalWebhook",
    "Entrega",
    "ErrorCanal",
    "canales_desde_ajustes",
    "firmar",
    "serializar",
    "verificar_firma",
]

CABECERA_AVISO = "X-Agente-Aviso-Id"
CABECERA_FECHA = "X-Agente-Fecha"
CABECERA_FIRMA = "X-Agente-Firma"
_MODOS_SMTP = {"smtp": "insecure", "smtp+starttls": "starttls", "smtps": "ssl"}
_PUERTOS_SMTP = {"insecure": 25, "starttls": 587, "ssl": 465}


class ErrorCanal(Exception):
    """El aviso no salió; ``mensaje`` se guarda como último error."""


@dataclass(frozen=True, kw_only=True)
class Entrega:
    """Un aviso listo para salir por un canal."""

    clave: str
    canal: str
    direccion: str
    asunto: str
    texto: str
    cuerpo: Mapping[str, Any] = field(default_factory=dict)
    cuerpo_slack: Mapping[str, Any] = field(default_factory=dict)
    secreto: str | None = None


class Canal(Protocol):
    def enviar(self, entrega: Entrega) -> None: ...


def serializar(cuerpo: Mapping[str, Any]) -> bytes:
    return json.dumps(cuerpo, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


def firmar(secreto: str, fecha: str, cuerpo: bytes) -> str:
    """``sha256=<hex>`` del HMAC-SHA256 de ``fecha + "." + cuerpo``."""
    mac = hmac.new(secreto.encode(), fecha.encode() + b"." + cuerpo, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verificar_firma(
    secreto: str, fecha: str, cuerpo: bytes, firma: str, *, tolerancia: int = 300,
    ahora: float | None = None,
) -> bool:
    """Lo que comprueba quien recibe: firma correcta y fecha a menos de ``tolerancia`` segundos."""
    try:
        desfase = abs((time.time() if ahora is None else ahora) - int(fecha))
    except ValueError:
        return False
    return desfase <= tolerancia and hmac.compare_digest(firmar(secreto, fecha, cuerpo), firma)


def _notificar(url: str, entrega: Entrega) -> None:
    cliente = apprise.Apprise(asset=apprise.AppriseAsset(app_id="agente-tienda"))
    if not cliente.add(url):
        raise ErrorCanal(f"dirección de {entrega.canal} no válida para Apprise")
    with apprise.LogCapture(level=apprise.logging.WARNING) as registro:
        ok = cliente.notify(title=entrega.asunto, body=entrega.texto, body_format=apprise.NotifyFormat.TEXT)
        if not ok:
            detalle = registro.getvalue().strip().splitlines()
            raise ErrorCanal(detalle[-1] if detalle else f"{entrega.canal}: el envío falló")


class CanalCorreo:
    """Correo por SMTP con Apprise. ``smtp_url``: ``smtp://host:25`` (sin cifrar, para un
    relé local), ``smtp+starttls://usuario:clave@host:587`` o ``smtps://...:465``."""

    def __init__(self, *, smtp_url: str, remitente: str, timeout: float = 10.0) -> None:
        partes = urlsplit(smtp_url)
        if partes.scheme not in _MODOS_SMTP or not partes.hostname:
            raise ValueError("AGENTE_SMTP_URL debe ser smtp://, smtp+starttls:// o smtps://host[:puerto]")
        if "@" not in remitente:
            raise ValueError(f"remitente de correo no válido: {remitente!r}")
        self._modo = _MODOS_SMTP[partes.scheme]
        self._host = partes.hostname
        self._puerto = partes.port or _PUERTOS_SMTP[self._modo]
        credenciales = ""
        if partes.username:
            credenciales = quote(partes.username, safe="")
            if partes.password:
                credenciales += ":" + quote(partes.password, safe="")
            credenciales += "@"
        self._credenciales = credenciales
        self._remitente = remitente
        self._timeout = timeout

    def url_apprise(self, entrega: Entrega) -> str:
        parametros = {
            "mode": self._modo,
            "smtp": self._host,
            "from": self._remitente,
            "to": entrega.direccion,
            "format": "text",
            "cto": f"{self._timeout:g}",
            f"+{CABECERA_AVISO}": entrega.clave,
        }
        consulta = "&".join(f"{quote(k, safe='+')}={quote(v, safe='')}" for k, v in parametros.items())
        return f"mailto://{self._credenciales}{self._host}:{self._puerto}?{consulta}"

    def enviar(self, entrega: Entrega) -> None:
        _notificar(self.url_apprise(entrega), entrega)


class CanalApprise:
    """Cualquier servicio de Apprise (Slack con tokens, Teams, Telegram...): la dirección
    del contacto es la URL de Apprise; sale el asunto y el texto."""

    def enviar(self, entrega: Entrega) -> None:
        _notificar(entrega.direccion, entrega)


class CanalWebhook:
    """POST JSON firmado a la URL del contacto. ``formato='slack'``: cuerpo de «incoming
    webhook» de Slack (la firma va igual; Slack la ignora)."""

    def __init__(self, *, formato: str = "json", timeout: float = 10.0) -> None:
        if formato not in ("json", "slack"):
            raise ValueError(f"formato de webhook desconocido: {formato!r}")
        self._formato = formato
        self._timeout = timeout

    def enviar(self, entrega: Entrega) -> None:
        if not entrega.secreto:
            raise ErrorCanal("la tienda no tiene secreto para firmar webhooks")
        cuerpo = serializar(entrega.cuerpo_slack if self._formato == "slack" else entrega.cuerpo)
        fecha = str(int(time.time()))
        cabeceras = {
            "Content-Type": "application/json; charset=utf-8",
            "User-Agent": "agente-tienda-avisos",
            CABECERA_AVISO: entrega.clave,
            CABECERA_FECHA: fecha,
            CABECERA_FIRMA: firmar(entrega.secreto, fecha, cuerpo),
        }
        try:
            respuesta = httpx.post(
                entrega.direccion, content=cuerpo, headers=cabeceras, timeout=self._timeout,
                follow_redirects=False,
            )
        except httpx.HTTPError as exc:
            raise ErrorCanal(f"webhook inalcanzable: {type(exc).__name__}: {exc}") from exc
        if not respuesta.is_success:
            raise ErrorCanal(f"el webhook respondió HTTP {respuesta.status_code}")


def canales_desde_ajustes(ajustes: Any) -> dict[str, Canal]:
    """Los canales que este proceso puede usar. Sin ``AGENTE_SMTP_URL`` no hay correo: esos
    avisos esperan en la cola de avisos a un proceso que sí lo tenga."""
    canales: dict[str, Canal] = {
        "webhook": CanalWebhook(formato="json", timeout=ajustes.avisos_timeout),
        "slack": CanalWebhook(formato="slack", timeout=ajustes.avisos_timeout),
        "apprise": CanalApprise(),
    }
    if ajustes.smtp_url:
        canales["email"] = CanalCorreo(
            smtp_url=ajustes.smtp_url, remitente=ajustes.avisos_remitente,
            timeout=ajustes.avisos_timeout,
        )
    return canales
