"""El buzón de la demo: un servidor SMTP local (aiosmtpd) que guarda cada correo en una
carpeta Maildir, y la lectura de esa carpeta para la página ``/demo/correo``.

``agente demo`` lo arranca en 127.0.0.1 y apunta ``AGENTE_SMTP_URL`` a él: los enlaces de
entrada por correo y los correos a los clientes salen de verdad por SMTP y se leen en la
página de la demo. La carpeta (``AGENTE_DEMO_BUZON``) vive junto a los datos de la demo.
"""

from __future__ import annotations

import logging
import mailbox
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from email.header import decode_header, make_header
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path

__all__ = ["Correo", "ReceptorCorreo", "leer_buzon"]

MAX_CORREOS = 100  # la página enseña los últimos


@dataclass(frozen=True)
class Correo:
    id: str
    de: str
    para: str
    asunto: str
    fecha: datetime | None
    texto: str


def _cabecera(mensaje: Message, nombre: str) -> str:
    valor = mensaje.get(nombre)
    return str(make_header(decode_header(valor))) if valor else ""


def _texto(mensaje: Message) -> str:
    partes = mensaje.walk() if mensaje.is_multipart() else [mensaje]
    for parte in partes:
        if parte.get_content_type() == "text/plain":
            cuerpo = parte.get_payload(decode=True) or b""
            return cuerpo.decode(parte.get_content_charset() or "utf-8", errors="replace").strip()
    return ""


def _fecha(mensaje: Message) -> datetime | None:
    try:
        return parsedate_to_datetime(mensaje["Date"]) if mensaje.get("Date") else None
    except (TypeError, ValueError):
        return None


def leer_buzon(carpeta: Path) -> list[Correo]:
    """Los correos recibidos, el más reciente primero (una carpeta que no existe: ninguno)."""
    if not (carpeta / "new").is_dir() and not (carpeta / "cur").is_dir():
        return []
    buzon = mailbox.Maildir(carpeta, create=False)
    correos = []
    for clave, mensaje in buzon.iteritems():
        recibido = datetime.fromtimestamp(mensaje.get_date(), UTC)
        correos.append((recibido, Correo(
            id=clave, de=_cabecera(mensaje, "From"), para=_cabecera(mensaje, "To"),
            asunto=_cabecera(mensaje, "Subject"), fecha=_fecha(mensaje) or recibido,
            texto=_texto(mensaje),
        )))
    correos.sort(key=lambda par: par[0], reverse=True)
    return [correo for _, correo in correos[:MAX_CORREOS]]


def _puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ReceptorCorreo:
    """aiosmtpd en un hilo de este proceso, en 127.0.0.1; cada correo, a ``carpeta`` (Maildir)."""

    def __init__(self, carpeta: Path) -> None:
        from aiosmtpd.controller import Controller
        from aiosmtpd.handlers import Mailbox

        for sub in ("tmp", "new", "cur"):  # Maildir solo las crea si la carpeta no existía
            (carpeta / sub).mkdir(parents=True, exist_ok=True)
        logging.getLogger("mail.log").setLevel(logging.WARNING)  # una línea por orden SMTP
        self.carpeta = carpeta
        self.puerto = _puerto_libre()
        self._controlador = Controller(Mailbox(carpeta), hostname="127.0.0.1", port=self.puerto)

    @property
    def url_smtp(self) -> str:
        return f"smtp://127.0.0.1:{self.puerto}"

    def arrancar(self) -> ReceptorCorreo:
        self._controlador.start()
        return self

    def parar(self) -> None:
        self._controlador.stop()
