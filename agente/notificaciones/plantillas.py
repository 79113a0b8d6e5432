"""Plantillas en español de los avisos: asunto, texto, cuerpo JSON y cuerpo compatible con Slack.

Se pintan al entregar, desde los ``datos`` guardados en la cola de avisos (lo que se
sabía al pausar). Solo lo que necesita quien firma: la tienda, qué se pide y por cuánto,
por qué necesita firma, el pedido, el id del cliente (ni su nombre ni su correo) y el
enlace a la tarjeta ``{base}/encargado#{thread_id}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from nucleo import dinero

__all__ = ["Mensaje", "cuerpo_json", "cuerpo_slack", "enlace_tarjeta", "pintar"]


@dataclass(frozen=True)
class Mensaje:
    asunto: str
    texto: str
    enlace: str


def enlace_tarjeta(base_url: str, thread_id: str) -> str:
    return f"{base_url.rstrip('/')}/encargado#{quote(thread_id, safe='')}"


def _importe(datos: Mapping[str, Any]) -> str | None:
    return dinero.eur(datos["importe"]) if datos.get("importe") is not None else None


def _que(datos: Mapping[str, Any]) -> str:
    """«Reembolso de 350,00 EUR del pedido P-...»."""
    partes = [datos.get("titulo") or "Una operación"]
    if (importe := _importe(datos)) is not None:
        partes.append(f"de {importe}")
    if datos.get("pedido"):
        partes.append(f"del pedido {datos['pedido']}")
    return " ".join(partes)


def _firma_necesaria(datos: Mapping[str, Any]) -> str:
    rol = datos.get("rol_minimo") or "encargado"
    if int(datos.get("firmas") or 1) > 1:
        return (
            f"{datos['firmas']} firmas de personas distintas; al menos una de {rol} o superior"
        )
    return f"una firma de {rol} o superior"


def _pintar_cambio_politica(datos: Mapping[str, Any], base_url: str) -> Mensaje:
    """Una solicitud de cambio de política que amplía y espera tu firma."""
    tienda = datos.get("tienda_nombre") or datos.get("tienda")
    enlace = f"{base_url.rstrip('/')}/encargado#politica-{datos['solicitud_id']}"
    autor = datos.get("autor_nombre") or datos.get("autor")
    lineas = [
        f"Hola, {datos.get('destinatario') or 'equipo'}:", "",
        f"{autor} ({datos.get('autor_rol')}) propone un cambio de la política de {tienda} que "
        "amplía lo que sale sin firma o con menos firmas. No se aplica hasta que lo firme "
        "alguien por encima de quien lo propone.", "", "Qué cambia:",
        *(f"- {d}" for d in datos.get("diferencias") or []),
    ]
    if datos.get("motivo"):
        lineas += ["", f"Motivo: {datos['motivo']}"]
    lineas += ["", f"Revisarlo: {enlace}", "",
               f"Recibes este aviso porque puedes firmar cambios de política en {tienda}."]
    return Mensaje(asunto=f"[{tienda}] Cambio de política por firmar (solicitud {datos['solicitud_id']})",
                   texto="\n".join(lineas), enlace=enlace)


def pintar(datos: Mapping[str, Any], base_url: str) -> Mensaje:
    """El aviso para una persona: ``datos`` de la cola de avisos, ``base_url`` de la web."""
    if datos.get("tipo") == "cambio_politica":
        return _pintar_cambio_politica(datos, base_url)
    tienda = datos.get("tienda_nombre") or datos.get("tienda")
    enlace = enlace_tarjeta(base_url, datos["thread_id"])
    escalado = datos.get("tipo") == "escalado"
    que = _que(datos)
    if escalado:
        asunto = f"[{tienda}] Escalado: {que[0].lower()}{que[1:]} sigue sin firmar"
    else:
        asunto = f"[{tienda}] {que} espera tu firma"
    lineas = [f"Hola, {datos.get('destinatario') or 'equipo'}:", ""]
    lineas.append(f"{que} (cliente {datos.get('cliente_id')}) en {tienda} espera una firma.")
    if escalado:
        lineas.append(
            f"Lleva {datos.get('espera_minutos', 0)} minutos de horario sin firmar y te "
            "avisamos porque eres el siguiente nivel."
        )
    motivos = list(datos.get("motivos") or [])
    if motivos:
        lineas += ["", "Por qué necesita firma:", *(f"- {m}" for m in motivos)]
    lineas += [
        "",
        f"Firma necesaria: {_firma_necesaria(datos)}.",
        "",
        f"Abrir la tarjeta: {enlace}",
        "",
        f"Recibes este aviso porque puedes firmar en {tienda}. Si no quieres recibir más, "
        "pide la baja de avisos a tu tienda.",
    ]
    return Mensaje(asunto=asunto, texto="\n".join(lineas), enlace=enlace)


def cuerpo_json(clave: str, datos: Mapping[str, Any], mensaje: Mensaje) -> dict[str, Any]:
    """El cuerpo del webhook firmado: los datos estructurados y el texto ya escrito."""
    return {
        "id": clave,
        "tipo": {"escalado": "aprobacion_escalada", "cambio_politica": "cambio_politica_pendiente"}.get(
            datos.get("tipo") or "", "aprobacion_pendiente"),
        "solicitud_id": datos.get("solicitud_id"),
        "diferencias": list(datos.get("diferencias") or []),
        "tienda": datos.get("tienda"),
        "thread_id": datos.get("thread_id"),
        "herramienta": datos.get("herramienta"),
        "titulo": datos.get("titulo"),
        "importe": datos.get("importe"),
        "importe_texto": _importe(datos),
        "pedido": datos.get("pedido"),
        "cliente_id": datos.get("cliente_id"),
        "motivos": list(datos.get("motivos") or []),
        "firmas_necesarias": int(datos.get("firmas") or 1),
        "rol_minimo": datos.get("rol_minimo"),
        "urgente": bool(datos.get("urgente")),
        "enlace": mensaje.enlace,
        "asunto": mensaje.asunto,
        "texto": mensaje.texto,
    }


def cuerpo_slack(datos: Mapping[str, Any], mensaje: Mensaje) -> dict[str, Any]:
    """Cuerpo de un «incoming webhook» de Slack (también lo aceptan Mattermost y Rocket.Chat)."""
    motivos = "\n".join(f"• {m}" for m in datos.get("motivos") or datos.get("diferencias") or [])
    detalle = f"*{mensaje.asunto}*"
    if datos.get("tipo") != "cambio_politica":
        detalle += f"\n{_firma_necesaria(datos).capitalize()}."
    if motivos:
        detalle += f"\n{motivos}"
    return {
        "text": f"{mensaje.asunto}: {mensaje.enlace}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": detalle}},
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Abrir la tarjeta"},
                        "url": mensaje.enlace,
                    }
                ],
            },
        ],
    }
