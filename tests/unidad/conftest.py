"""Las pruebas de unidad no necesitan PostgreSQL, ni procesos, ni navegador.

Si una prueba de esta carpeta pide una base (``bd_url``, ``pool``, ``servicio``...), falla
diciendo dónde debe ir en vez de arrancar el PostgreSQL embebido: así ``pytest tests/unidad``
sigue siendo rápido y sin dependencias.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def url_admin():
    pytest.fail("las pruebas de tests/unidad no usan PostgreSQL: esta va en tests/integracion "
                "(o en la carpeta de lo que necesite: api, procesos, navegador)", pytrace=False)
