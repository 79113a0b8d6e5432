"""Por dónde sale un aviso al cliente: la ruta de su tienda, y el correo ya pintado.

La ruta la deciden los ajustes (``AGENTE_AVISOS_CLIENTE_CANAL``), por tienda, con ``*``
para las demás: ``email`` (por defecto: al ``clientes.email``, por el SMTP de los
avisos), ``ninguno`` (esa tienda no avisa a sus clientes), o una URL de Apprise con
``{email}`` y ``{telefono}`` del cliente (SMS, Telegram...). Los enlaces (volver a la
conversación, darse de baja) se firman aquí, al entregar: el de la conversación caduca
``horas_enlace`` después de salir, no de encolarse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from agente.notificaciones.canales import Entrega
from agente.notificaciones.plantillas_cliente import pintar_cliente
from nucleo.enlaces import (
    enlace_baja,
    enlace_conversacion,
    token_de_baja,
    token_de_conversacion,
)

__all__ = ["NINGUNO", "RutasCliente", "entrega_cliente"]

NINGUNO = "ninguno"
EMAIL = "email"


@dataclass(frozen=True, kw_only=True)
class RutasCliente:
    secreto: str
    base_url: str
    horas_enlace: float = 24.0
    por_tienda: Mapping[str, str] = field(default_factory=dict)

    def ruta(self, tienda: str) -> str:
        return (self.por_tienda.get(tienda) or self.por_tienda.get("*") or EMAIL).strip()


def _url_apprise(plantilla: str, contacto: Mapping[str, Any]) -> str | None:
    # El teléfono sin espacios («+34 600 111 001» -> «+34600111001»), como lo piden las URLs de SMS.
    crudos = {"email": str(contacto.get("email") or ""), "telefono": "".join(str(contacto.get("telefono") or "").split())}
    valores = {k: quote(v, safe="@+") for k, v in crudos.items()}
    for clave, valor in valores.items():
        if "{" + clave + "}" in plantilla and not valor:
            return None
    return plantilla.replace("{email}", valores["email"]).replace("{telefono}", valores["telefono"])


def entrega_cliente(fila: Mapping[str, Any], rutas: RutasCliente) -> tuple[str, Entrega] | str:
    """(canal, entrega) del aviso, o el motivo para descartarlo (texto)."""
    ruta = rutas.ruta(fila["tienda"])
    contacto = fila.get("contacto_cliente") or {}
    if ruta == NINGUNO:
        return "la tienda no avisa a sus clientes (AGENTE_AVISOS_CLIENTE_CANAL)"
    if ruta == EMAIL:
        canal, direccion = EMAIL, contacto.get("email")
        if not direccion:
            return "el cliente no tiene correo"
    else:
        canal, direccion = "apprise", _url_apprise(ruta, contacto)
        if not direccion:
            return "al cliente le falta el dato que pide la URL de Apprise de su tienda"
    datos = fila["datos"]
    token = token_de_conversacion(
        rutas.secreto, cliente_id=fila["cliente_id"], tienda=fila["tienda"],
        hilo=fila["thread_id"], horas=rutas.horas_enlace,
    )
    mensaje = pintar_cliente(
        datos, enlace=enlace_conversacion(rutas.base_url, token),
        enlace_baja=enlace_baja(rutas.base_url, token_de_baja(rutas.secreto, cliente_id=fila["cliente_id"])),
        horas_enlace=rutas.horas_enlace,
    )
    return canal, Entrega(clave=fila["clave"], canal=canal, direccion=direccion,
                          asunto=mensaje.asunto, texto=mensaje.texto)
