"""``schemathesis run --checks all`` contra la API de verdad con el token de un gerente
(``ger-talavera``): todas las fases, con la semilla fija. Cada rol en su fichero, para que los
barridos se repartan entre los procesos de pytest-xdist (``tests/apoyo/contrato.py``)."""

from __future__ import annotations

import pytest

from tests.apoyo.contrato import schemathesis_run, servidor_contrato

pytestmark = pytest.mark.lento


def test_schemathesis_con_todas_las_comprobaciones_no_encuentra_nada_con_gerente(url_admin, plantillas):
    with servidor_contrato(url_admin, plantillas) as servidor:
        schemathesis_run(servidor, "ger-talavera")
