"""Las piezas que ``agente demo`` arranca junto al servidor, cada una con su protocolo real:

- el buzón (``buzon``): SMTP local; ``AGENTE_SMTP_URL`` apunta a él y la página
  ``/demo/correo`` enseña lo recibido (los enlaces de entrada, los correos a los clientes);
- el proveedor OpenID Connect (``proveedor_oidc``), si hay Node: el botón «Entrar con el
  proveedor de la demo» de la bandeja;
- con ``pasarela="stripe-local"``, el servidor del protocolo de Stripe (``stripe_local``) con
  sus webhooks firmados hacia el producto.

Cada pieza se configura por el entorno (los ajustes ``AGENTE_*`` de siempre) antes de que el
servidor lea sus ajustes; si una no puede arrancar, la demo lo dice en una línea y sigue.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

__all__ = ["CLIENTE_OIDC", "PASARELAS_DEMO", "PROVEEDOR_OIDC", "piezas_demo"]

PASARELAS_DEMO = ("simulada", "stripe", "stripe-local")
PROVEEDOR_OIDC = "demo"
CLIENTE_OIDC = "bandeja-demo"
SECRETO_OIDC = "secreto-del-cliente-oidc-de-la-demo"


def _puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _correo(pila: ExitStack, carpeta: Path, decir: Callable[[str], None]) -> None:
    try:
        from agente.demo.buzon import ReceptorCorreo

        receptor = ReceptorCorreo(carpeta).arrancar()
    except (ImportError, OSError) as exc:
        decir(f"Sin buzón de la demo (no arranca el SMTP local: {exc}); la entrada por correo no está.")
        return
    pila.callback(receptor.parar)
    os.environ["AGENTE_SMTP_URL"] = receptor.url_smtp
    os.environ["AGENTE_DEMO_BUZON"] = str(carpeta)


def _oidc(pila: ExitStack, base: str, decir: Callable[[str], None]) -> None:
    from agente.demo.proveedor_oidc import ProveedorOidc, cuentas_demo, hay_node

    if not hay_node():
        decir("Sin Node ni npm: la demo sigue sin su proveedor OpenID Connect (apt-get install nodejs npm).")
        return
    cliente = {"client_id": CLIENTE_OIDC, "client_secret": SECRETO_OIDC,
               "redirect_uris": [f"{base}/entrada/oidc/{PROVEEDOR_OIDC}/vuelta"],
               "post_logout_redirect_uris": [f"{base}/encargado"]}
    try:
        proveedor = pila.enter_context(ProveedorOidc(_puerto_libre(), [cliente], cuentas_demo()))
    except (OSError, RuntimeError, ValueError) as exc:
        decir(f"La demo sigue sin su proveedor OpenID Connect: {str(exc)[:200]}.")
        return
    os.environ["AGENTE_OIDC_PROVEEDORES"] = json.dumps([{
        "nombre": PROVEEDOR_OIDC, "titulo": "el proveedor de la demo", "emisor": proveedor.emisor,
        "client_id": CLIENTE_OIDC, "client_secret": SECRETO_OIDC}])


def _stripe(pila: ExitStack, base: str, url_bd: str) -> str:
    from agente.demo.stripe_local import ServidorStripeDemo, entorno_pasarela, servidor_stripe
    from agente.demo.stripe_local.demo import RUTA_WEBHOOK

    estado = ServidorStripeDemo(webhook_url=base + RUTA_WEBHOOK, base_datos=url_bd)
    servidor = pila.enter_context(servidor_stripe(estado))
    os.environ.update(entorno_pasarela(servidor.base))
    os.environ.setdefault("AGENTE_STRIPE_URL_RETORNO", f"{base}/")
    return servidor.base


def _restaurar_entorno(antes: dict[str, str]) -> None:
    os.environ.clear()
    os.environ.update(antes)


@contextmanager
def piezas_demo(*, base: str, url_bd: str, buzon: Path, pasarela: str,
                decir: Callable[[str], None]) -> Iterator[list[str]]:
    """Arranca las piezas y deja el entorno listo para el servidor; al salir, las para.
    Devuelve las líneas del cartel que las describen. Al salir, el entorno del proceso vuelve a
    ser el de antes: quien la llama dentro de otro proceso (una prueba) no hereda sus variables."""
    antes = dict(os.environ)
    with ExitStack() as pila:
        pila.callback(_restaurar_entorno, antes)
        os.environ.setdefault("AGENTE_AVISOS_BASE_URL", base)  # enlaces de los correos y vuelta OIDC
        base = os.environ["AGENTE_AVISOS_BASE_URL"].rstrip("/")
        lineas = []
        if not os.environ.get("AGENTE_SMTP_URL"):  # uno propio: los correos van a él
            _correo(pila, buzon, decir)
        if os.environ.get("AGENTE_DEMO_BUZON"):
            lineas.append(f"Correo de la demo (lo que se envía por SMTP): {base}/demo/correo")
        if not os.environ.get("AGENTE_OIDC_PROVEEDORES"):
            _oidc(pila, base, decir)
        if "AGENTE_OIDC_PROVEEDORES" in os.environ:
            lineas.append(f"Entrada con el proveedor OpenID Connect de la demo: {base}/encargado")
        if pasarela == "stripe-local":
            stripe = _stripe(pila, base, url_bd)
            lineas.append(f"Pasarela: protocolo de Stripe en local ({stripe}), webhooks firmados a {base}.")
        yield lineas
