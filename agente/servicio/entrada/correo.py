"""El correo con el enlace de entrada, por el camino de correo de los avisos (Apprise y
``AGENTE_SMTP_URL``). No pasa por la cola de avisos: esa guarda el texto del aviso, y el
token de un enlace no se guarda nunca en claro (caduca en 15 minutos: si el envío falla,
se pide otro)."""

from __future__ import annotations

import hashlib
import logging

from agente.notificaciones import ErrorCanal, canales_desde_ajustes
from agente.notificaciones.canales import Entrega
from agente.servicio.entrada.enlaces import EnlaceEntrada
from nucleo.ajustes import Ajustes

__all__ = ["enviar_enlace", "url_enlace"]

logger = logging.getLogger(__name__)

ASUNTO = "Tu enlace para entrar en la bandeja"


def url_enlace(ajustes: Ajustes, enlace: EnlaceEntrada) -> str:
    """El token va en el fragmento: el navegador no lo envía al pedir la página."""
    return enlace.url(ajustes.avisos_base_url)


def enviar_enlace(ajustes: Ajustes, enlace: EnlaceEntrada) -> None:
    """Envía el enlace; nunca lanza (quien lo pidió ya tiene su respuesta)."""
    canal = canales_desde_ajustes(ajustes).get("email")
    if canal is None:
        return
    texto = (
        f"Hola, {enlace.nombre}:\n\n"
        "Para entrar en la bandeja de encargados, abre este enlace. Vale 15 minutos y una sola vez:\n\n"
        f"{url_enlace(ajustes, enlace)}\n\n"
        "Si no lo has pedido tú, no hagas nada: nadie puede entrar sin este enlace.\n"
    )
    clave = "entrada:" + hashlib.sha256(enlace.token.encode()).hexdigest()[:24]
    try:
        canal.enviar(Entrega(clave=clave, canal="email", direccion=enlace.email, asunto=ASUNTO, texto=texto))
    except ErrorCanal as exc:
        # Sin la dirección ni el token en el log: datos personales y una credencial.
        logger.warning("no se pudo enviar un enlace de entrada: %s", exc)
