"""Un proveedor OpenID Connect de verdad para las pruebas: el de la demo
(``agente.demo.proveedor_oidc``, paquete npm ``oidc-provider``) sobre el Node de la máquina,
con sus páginas de login y consentimiento.

``agente/demo/oidc/`` tiene su ``package.json`` y ``package-lock.json``; si falta
``node_modules``, se instala con ``npm ci`` (también lo hace ``.ci/run``). Sin ``node`` las
pruebas que lo usan se saltan, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1`` (CI).

Las cuentas: un login de la página de login (cualquier contraseña vale) con sus claims.
"""

from __future__ import annotations

from agente.demo.proveedor_oidc import CARPETA, ProveedorOidc, hay_node, preparar

from .web_util import puerto_libre

__all__ = ["CARPETA", "CLIENTE", "CUENTAS", "SECRETO_CLIENTE", "ProveedorOidcReal", "hay_node", "preparar"]

CLIENTE = "bandeja-pruebas"
SECRETO_CLIENTE = "secreto-del-cliente-de-pruebas-oidc"
CUENTAS = {
    # Lucía Moreno, encargada activa de talavera (agente/demo/catalogo.py: EMAILS).
    "lucia": {"email": "enc-talavera@tienda.example", "email_verified": True, "name": "Lucía Moreno"},
    # Pedro Sanz, de baja.
    "pedro": {"email": "enc-talavera-baja@tienda.example", "email_verified": True, "name": "Pedro Sanz"},
    # Nadie en encargados con este correo.
    "desconocida": {"email": "nadie@tienda.example", "email_verified": True, "name": "Nadie"},
    # Correo de un encargado, pero sin verificar por el proveedor.
    "sinverificar": {"email": "enc-madrid-centro@tienda.example", "email_verified": False},
}


class ProveedorOidcReal(ProveedorOidc):
    """El proveedor de la demo en un puerto libre, con el cliente de las pruebas y ``CUENTAS``."""

    def __init__(self, redirect_uris: list[str], post_logout_redirect_uris: list[str]) -> None:
        super().__init__(puerto_libre(), [{
            "client_id": CLIENTE, "client_secret": SECRETO_CLIENTE,
            "redirect_uris": redirect_uris, "post_logout_redirect_uris": post_logout_redirect_uris,
        }], CUENTAS)
