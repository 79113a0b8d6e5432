"""El caso ``serializable`` del bench (``python -m bench --solo serializable``) sigue corriendo:
en pequeño, con ``python -m bench.humo serializable`` en un subproceso (las pruebas no importan
``bench/``): tres semillas de historias concurrentes, comprobadas, y el resumen que informa."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.apoyo.rutas import RAIZ


def test_el_bench_serializable_corre_tres_semillas_sin_violaciones_y_cuenta_cada_desenlace(bd_url):
    r = subprocess.run([sys.executable, "-m", "bench.humo", "serializable", bd_url], cwd=RAIZ,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    resultado = json.loads(r.stdout.strip().splitlines()[-1])
    assert resultado["violaciones"] == {}
    assert resultado["semillas"] == 3 and resultado["operaciones"] == 36
    assert sum(resultado["desenlaces"].values()) == 36 and resultado["desenlaces"]["fallo"] == 0
    assert resultado["desenlaces"]["efecto"] > 0 and resultado["operaciones_s"] > 0
    assert 0 <= resultado["parte_a_revision"] <= 1
