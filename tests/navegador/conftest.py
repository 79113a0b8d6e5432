"""Chromium de verdad (headless) y la app servida por uvicorn en un hilo, para ``tests/navegador/``.

Chromium es el paquete de Debian (/usr/bin/chromium); nunca ``playwright install``. Sin él
estas pruebas se saltan, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1`` (CI).
"""

from __future__ import annotations

import os

import httpx
import pytest

from agente.web.app import crear_app
from agente.web.entrada.auth import emitir_token
from tests.apoyo.firmas import TIENDA_DE
from tests.apoyo.navegador import CHROMIUM
from tests.apoyo.web_util import ajustes_web, cab, servidor_en_hilo


@pytest.fixture(scope="module")
def navegador():
    """Chromium headless, uno por módulo."""
    if not CHROMIUM.exists():
        if os.environ.get("AGENTE_EXIGIR_NAVEGADOR") == "1":
            pytest.fail("falta /usr/bin/chromium (apt-get install -y chromium) y AGENTE_EXIGIR_NAVEGADOR=1")
        pytest.skip("sin /usr/bin/chromium: pruebas de navegador omitidas")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        navegador = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield navegador
        navegador.close()


@pytest.fixture
def base(bd_url):
    """La URL de la app servida por uvicorn en un hilo, sobre la base del test."""
    with servidor_en_hilo(crear_app(ajustes_web(bd_url))) as url:
        yield url


@pytest.fixture
def http(base):
    """Un cliente HTTP de la misma app, para lo que otra persona hace por la API."""
    with httpx.Client(base_url=base, timeout=60) as cliente:
        yield cliente


@pytest.fixture
def como(bd_url):
    """Las cabeceras de cualquier sujeto de la demo (cliente o firmante) con su tienda."""
    ajustes = ajustes_web(bd_url)

    def _como(sujeto: str) -> dict[str, str]:
        rol = "cliente" if sujeto.startswith("C-") else "encargado"
        return cab(emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=TIENDA_DE[sujeto]))
    return _como


@pytest.fixture(scope="session")
def oidc_real():
    """Un proveedor OpenID Connect de verdad (npm ``oidc-provider``) para toda la sesión, con
    el cliente de la bandeja registrado para una app en un puerto fijo (``oidc_real.base_app``)."""
    from tests.apoyo.oidc_real import ProveedorOidcReal, hay_node
    from tests.apoyo.web_util import puerto_libre

    if not hay_node():
        if os.environ.get("AGENTE_EXIGIR_NAVEGADOR") == "1":
            pytest.fail("falta node/npm (apt-get install -y nodejs npm) y AGENTE_EXIGIR_NAVEGADOR=1")
        pytest.skip("sin node: pruebas del proveedor OIDC omitidas")
    puerto_app = puerto_libre()
    base_app = f"http://127.0.0.1:{puerto_app}"
    with ProveedorOidcReal([f"{base_app}/entrada/oidc/pruebas/vuelta"], [f"{base_app}/encargado"]) as proveedor:
        proveedor.puerto_app = puerto_app
        proveedor.base_app = base_app
        yield proveedor
