"""La app entera por HTTP en proceso (TestClient) sobre la base del test, y tokens para hablarle.

Para las pruebas de ``tests/api/``; la base (``bd_url``) y el resto vienen de ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest

from agente.web.entrada.auth import emitir_token
from tests.apoyo.firmas import TIENDA_DE
from tests.apoyo.web_util import ajustes_web, cab, cliente_http, token


@pytest.fixture
def ajustes(bd_url):
    """Los ajustes de la app web sobre la base del test (demo, modelo offline, sin trazas)."""
    return ajustes_web(bd_url)


@pytest.fixture
def http(ajustes):
    """La app entera en proceso (TestClient) con esos ajustes."""
    with cliente_http(ajustes) as cliente:
        yield cliente


@pytest.fixture
def tok(ajustes):
    """``tok(sujeto)``: un token de cliente o de encargado (``enc-*``) de la tienda de la demo."""
    return lambda sujeto, **extra: token(ajustes, sujeto, **extra)


@pytest.fixture
def como(ajustes):
    """``como(sujeto)``: cabeceras con el token de un cliente o de un firmante de cualquier rol."""
    def _como(sujeto: str) -> dict[str, str]:
        rol = "cliente" if sujeto.startswith("C-") else "encargado"
        return cab(emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=TIENDA_DE[sujeto]))
    return _como
