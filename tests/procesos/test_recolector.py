"""El recolector de ciclos en ``agente serve`` (``AGENTE_GC_UMBRAL``, ``agente.web.infra.recolector``)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import ServidorEnProceso

# En otro intérprete: gc.freeze no tiene vuelta atrás y congelaría la basura de las pruebas.
_SONDA = """
import gc, json, sys
from agente.web.infra.recolector import preparar
antes = gc.get_threshold()
preparar(int(sys.argv[1]))
print(json.dumps({"antes": antes, "despues": gc.get_threshold(), "congelados": gc.get_freeze_count()}))
"""


def _sondear(umbral: int) -> dict:
    salida = subprocess.run([sys.executable, "-c", _SONDA, str(umbral)], cwd=RAIZ, check=True,
                            capture_output=True, text=True, timeout=60).stdout
    return json.loads(salida.strip().splitlines()[-1])


def test_preparar_sube_el_umbral_de_la_generacion_0_y_congela_lo_que_ya_existe():
    datos = _sondear(12_345)
    assert datos["despues"] == [12_345, *datos["antes"][1:]]
    assert datos["congelados"] > 1000  # los módulos importados, como mínimo


def test_con_umbral_cero_el_recolector_queda_como_lo_deja_python():
    datos = _sondear(0)
    assert datos["despues"] == datos["antes"]
    assert datos["congelados"] == 0


def test_agente_serve_prepara_el_recolector_al_arrancar(bd_url):
    with ServidorEnProceso(bd_url, AGENTE_GC_UMBRAL="23456") as servidor:
        servidor.esperar()
        with open(servidor.log.name, encoding="utf-8") as log:
            lineas = [json.loads(linea) for linea in log if linea.startswith("{")]
    [linea] = [linea for linea in lineas if linea.get("evento") == "recolector"]
    assert linea["umbral"] == 23456 and linea["congelados"] > 1000
