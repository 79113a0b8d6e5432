"""Un proveedor OpenID Connect de verdad para las pruebas: el paquete npm ``oidc-provider``
(certificado) sobre el Node de la máquina, con sus páginas de login y consentimiento.

``tests/apoyo/oidc/`` tiene su ``package.json`` y ``package-lock.json``; si falta
``node_modules``, se instala con ``npm ci`` (también lo hace ``.ci/run``). Sin ``node`` las
pruebas que lo usan se saltan, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1`` (CI).

Las cuentas: un login de la página de login (cualquier contraseña vale) con sus claims.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from .web_util import puerto_libre

__all__ = ["CARPETA", "CLIENTE", "CUENTAS", "SECRETO_CLIENTE", "ProveedorOidcReal", "preparar"]

CARPETA = Path(__file__).resolve().parent / "oidc"
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


def preparar() -> None:
    """``npm ci`` si falta ``node_modules`` (solo la primera vez en una máquina)."""
    if (CARPETA / "node_modules" / "oidc-provider").is_dir():
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CARPETA, check=True,
                   stdout=subprocess.DEVNULL, timeout=600)


def hay_node() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


class ProveedorOidcReal:
    """``node proveedor.mjs`` en un subproceso, en 127.0.0.1 y un puerto libre."""

    def __init__(self, redirect_uris: list[str], post_logout_redirect_uris: list[str]) -> None:
        self.puerto = puerto_libre()
        self.emisor = f"http://127.0.0.1:{self.puerto}"
        self.clientes = [{
            "client_id": CLIENTE, "client_secret": SECRETO_CLIENTE,
            "redirect_uris": redirect_uris, "post_logout_redirect_uris": post_logout_redirect_uris,
        }]
        self.salida: list[str] = []

    def __enter__(self) -> ProveedorOidcReal:
        preparar()
        entorno = {**os.environ, "PUERTO": str(self.puerto), "CLIENTES": json.dumps(self.clientes),
                   "CUENTAS": json.dumps(CUENTAS), "NODE_ENV": "development"}
        self.proceso = subprocess.Popen(
            ["node", "proveedor.mjs"], cwd=CARPETA, env=entorno, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        listo = threading.Event()

        def leer() -> None:
            for linea in self.proceso.stdout:
                self.salida.append(linea.rstrip())
                if linea.startswith("listo "):
                    listo.set()

        threading.Thread(target=leer, daemon=True).start()
        fin = time.monotonic() + 30
        while not listo.wait(0.1):
            if self.proceso.poll() is not None or time.monotonic() > fin:
                self.__exit__()
                raise RuntimeError("el proveedor OIDC no arrancó:\n" + "\n".join(self.salida))
        return self

    def __exit__(self, *_exc) -> None:
        self.proceso.terminate()
        try:
            self.proceso.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
            self.proceso.wait(timeout=5)
