"""El caso ``ingesta`` del bench (``python -m bench --solo ingesta``) sigue corriendo: en
pequeño, con ``python -m bench.humo ingesta`` en un subproceso (las pruebas no importan
``bench/``): genera 300 pedidos, los importa con ``agente importar`` y lo repite."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.apoyo.fabricas import uno
from tests.apoyo.rutas import RAIZ


def test_el_bench_de_ingesta_importa_y_repetir_no_cambia_nada(bd_url):
    r = subprocess.run([sys.executable, "-m", "bench.humo", "ingesta", bd_url], cwd=RAIZ,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    resultado = json.loads(r.stdout.strip().splitlines()[-1])
    assert resultado["lineas"] == 330
    assert resultado["primera"].startswith("330 líneas: 330 creados, 0 actualizados, 0 sin cambios, 0 inválidos")
    assert resultado["segunda"].startswith("330 líneas: 0 creados, 0 actualizados, 330 sin cambios, 0 inválidos")
    assert resultado["pico_rss_mib"] > 0
    assert uno(bd_url, "SELECT count(*) FROM pedidos WHERE referencia_pago LIKE 'pi_bench_%%'") == 300
