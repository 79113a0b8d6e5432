"""El proveedor OpenID Connect de la demo: el paquete npm ``oidc-provider`` (certificado por
la OpenID Foundation) sobre el Node de la máquina, con sus páginas de login y consentimiento
de desarrollo. Lo usan ``agente demo`` (botón «Entrar con el proveedor de la demo») y las
pruebas (``tests/apoyo/oidc_real.py``).

``agente/demo/oidc/`` tiene ``proveedor.mjs``, ``package.json`` y ``package-lock.json``; si
falta ``node_modules``, ``preparar`` lo instala con ``npm ci`` (la primera vez en una máquina).
Las cuentas: un login (cualquier contraseña vale) con sus claims.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

__all__ = ["CARPETA", "ProveedorOidc", "cuentas_demo", "hay_node", "preparar"]

CARPETA = Path(__file__).resolve().parent / "oidc"


def hay_node() -> bool:
    return shutil.which("node") is not None and shutil.which("npm") is not None


def preparar() -> None:
    """``npm ci`` si falta ``node_modules`` (solo la primera vez en una máquina)."""
    if (CARPETA / "node_modules" / "oidc-provider").is_dir():
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CARPETA,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)


def cuentas_demo() -> dict[str, dict]:
    """Una cuenta por persona de la tienda de la demo: su id es el login (``enc-talavera``)."""
    from agente.demo.catalogo import EMAILS, ENCARGADOS

    return {i: {"email": EMAILS[i], "email_verified": True, "name": nombre}
            for i, _tienda, nombre, _activo in ENCARGADOS}


class ProveedorOidc:
    """``node proveedor.mjs`` en un subproceso, en 127.0.0.1; ``with`` lo para al salir."""

    def __init__(self, puerto: int, clientes: list[dict], cuentas: dict[str, dict]) -> None:
        self.puerto = puerto
        self.emisor = f"http://127.0.0.1:{puerto}"
        self.clientes, self.cuentas = clientes, cuentas
        self.salida: list[str] = []

    def __enter__(self) -> ProveedorOidc:
        preparar()
        entorno = {**os.environ, "PUERTO": str(self.puerto), "CLIENTES": json.dumps(self.clientes),
                   "CUENTAS": json.dumps(self.cuentas), "NODE_ENV": "development"}
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
                raise RuntimeError("el proveedor OIDC no arrancó: " + " | ".join(self.salida[-5:]))
        return self

    def __exit__(self, *_exc) -> None:
        if self.proceso.poll() is None:
            self.proceso.terminate()
        try:
            self.proceso.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
            self.proceso.wait(timeout=5)
