"""``agente entrar`` y ``agente salir``: la persona que firma desde la CLI.

``entrar`` abre una sesión del personal en el servidor, la misma que la bandeja web:

- con el enlace por correo (lo que ya tiene la web, y funciona en una terminal sin
  navegador): la CLI pide el enlace para tu correo, el servidor lo envía y pegas el enlace
  que te llega (se canjea una vez, en 15 minutos, solo con esa dirección);
- en la demo (``AGENTE_DEMO``), ``--demo ID`` entra como esa persona de la demo, como la
  página ``/demo``.

El token queda en el fichero de la sesión (``agente.cli.cliente``) y lo usan las órdenes que
actúan como una persona; ``salir`` lo borra.
"""

from __future__ import annotations

import sys
from urllib.parse import parse_qs, urlsplit

import typer

from agente.cli.cliente import (
    CANAL,
    Sesion,
    guardar,
    olvidar,
    pedir,
    ruta_sesion,
    servidor_por_defecto,
)
from agente.cli.comun import errores_en_una_linea
from nucleo.errores import DecisionNoValida, ErrorDominio

__all__ = ["entrar", "salir", "token_del_enlace"]


def token_del_enlace(pegado: str) -> tuple[str, str | None]:
    """(token, correo) de lo que se pega: el enlace entero del correo
    (``…/entrada/correo#correo=…&t=…``) o solo su token."""
    texto = pegado.strip()
    if "#" in texto or "t=" in texto:
        fragmento = urlsplit(texto).fragment or texto.split("#", 1)[-1]
        valores = parse_qs(fragmento)
        token = (valores.get("t") or [""])[0]
        correo = (valores.get("correo") or [None])[0]
        if not token:
            raise DecisionNoValida("ese enlace no trae el token de entrada: pega el enlace entero del correo")
        return token, correo
    return texto, None


@errores_en_una_linea
def entrar(
    demo: str | None = typer.Option(None, "--demo", help="Solo con el servidor en modo demo: entra como esa persona (p. ej. enc-talavera)."),
    correo: str | None = typer.Option(None, "--correo", help="Tu correo: el servidor te envía un enlace para entrar (si no, lo pregunta)."),
    servidor: str | None = typer.Option(None, "--servidor", help="URL del servidor (por defecto AGENTE_URL o http://127.0.0.1:8000)."),
    enlace: str | None = typer.Option(None, "--enlace", help="Un enlace de entrada que ya tienes (el del correo o el de «agente personas primera»): entra con él sin pedir otro."),
) -> None:
    """Entra como una persona de la tienda: las órdenes que firman o deciden actúan como ella
    a través del servidor (su pasarela, sus avisos, sus ajustes).

    Ejemplos: agente entrar --correo lucia.moreno@mitienda.es · agente entrar --demo enc-talavera"""
    base = (servidor or servidor_por_defecto()).rstrip("/")
    if demo is not None:
        token = _entrar_demo(base, demo)
    elif enlace is not None:
        token = _canjear(base, enlace, correo)
    else:
        token = _entrar_por_correo(base, correo)
    persona = pedir(base, "GET", "/api/sesion", token=token)
    sesion = Sesion(servidor=base, token=token,
                    persona={"id": persona["id"], "nombre": persona["nombre"], "rol": persona["rol"]})
    ruta = guardar(sesion)
    typer.echo(f"Has entrado como {sesion.quien} en {base}.")
    typer.echo(f"La sesión está en {ruta} (solo la lees tú); «agente salir» la cierra.")


def _entrar_demo(base: str, persona: str) -> str:
    try:
        respuesta = pedir(base, "POST", "/api/demo/login", json={"rol": "encargado", "id": persona, "canal": CANAL})
    except ErrorDominio as exc:
        if exc.estado_http == 404:
            raise DecisionNoValida(
                f"el servidor {base} no está en modo demo (AGENTE_DEMO): entra con tu correo, «agente entrar --correo ...»"
            ) from None
        raise
    return respuesta["token"]


def _entrar_por_correo(base: str, correo: str | None) -> str:
    correo = (correo or typer.prompt("Tu correo")).strip()
    try:
        respuesta = pedir(base, "POST", "/api/entrada/correo", json={"email": correo})
    except ErrorDominio as exc:
        if exc.estado_http == 404:
            raise DecisionNoValida(
                f"el servidor {base} no envía enlaces de entrada (le falta AGENTE_SMTP_URL)"
            ) from None
        raise
    typer.echo(respuesta["detalle"])
    # Sin terminal (un guion, una tubería) no hay nada que ocultar: se lee la entrada tal cual.
    pegado = typer.prompt("Pega aquí el enlace del correo", hide_input=sys.stdin.isatty())
    return _canjear(base, pegado, correo)


def _canjear(base: str, pegado: str, correo: str | None) -> str:
    token, del_enlace = token_del_enlace(pegado)
    if del_enlace and correo and del_enlace.lower() != correo.lower():
        raise DecisionNoValida(f"ese enlace es de {del_enlace}, no de {correo}")
    correo = correo or del_enlace
    if not correo:
        raise DecisionNoValida("ese enlace no dice de qué correo es: da también --correo")
    canjeado = pedir(base, "POST", "/api/entrada/correo/canjear",
                     json={"email": correo, "token": token, "canal": CANAL})
    return canjeado["token"]


def salir() -> None:
    """Cierra la sesión de la CLI: borra el token guardado."""
    ruta = ruta_sesion()
    if olvidar():
        typer.echo(f"Sesión cerrada: se ha borrado {ruta}.")
    else:
        typer.echo("No había ninguna sesión abierta.")
