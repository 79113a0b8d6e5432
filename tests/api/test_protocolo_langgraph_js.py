"""La misma historia del protocolo de LangGraph con el SDK oficial de JavaScript
(``@langchain/langgraph-sdk`` de npm, versión fijada en ``tests/apoyo/langgraph_js``) bajo
Node, contra el servidor de verdad. Sin ``node_modules``, la fixture hace ``npm ci``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from decimal import Decimal

import pytest

from agente.web.app import crear_app
from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import DEVOLVER_CAFETERA, servidor_en_hilo, sql, token

CARPETA = RAIZ / "tests" / "apoyo" / "langgraph_js"
EDITAR_A_90 = {"type": "edit", "edited_action": {
    "name": "reembolsar", "args": {"pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"}}}


@pytest.fixture(scope="module")
def node():
    """``node`` con el SDK instalado (``npm ci`` del package-lock.json si falta)."""
    ejecutable, npm = shutil.which("node"), shutil.which("npm")
    if ejecutable is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("falta Node.js (y npm): .ci/run lo instala")
        pytest.skip("sin Node.js en esta máquina")
    if not (CARPETA / "node_modules" / "@langchain" / "langgraph-sdk").exists():
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CARPETA, check=True,
                       capture_output=True, timeout=300)
    return ejecutable


def test_el_sdk_de_javascript_cuenta_la_misma_historia_bajo_node(node, ajustes):
    with servidor_en_hilo(crear_app(ajustes)) as base:
        entorno = {**os.environ, "AGENTE_URL": f"{base}/langgraph",
                   "TOKEN_CLIENTE": token(ajustes, "C-0001"),
                   "TOKEN_ENCARGADO": token(ajustes, "enc-talavera"),
                   "TEXTO_CLIENTE": DEVOLVER_CAFETERA, "EDICION": json.dumps(EDITAR_A_90),
                   "DESENLACE": "90,00 EUR"}
        salida = subprocess.run([node, "historia.mjs"], cwd=CARPETA, env=entorno,
                                capture_output=True, text=True, timeout=120)
    assert salida.returncode == 0, salida.stdout + salida.stderr
    vio = json.loads(salida.stdout.strip().splitlines()[-1])
    assert vio["eventos"][0] == "metadata" and {"messages", "values"} <= set(vio["eventos"])
    assert vio["accion"] == "reembolsar"
    assert {n: r["status"] for n, r in vio["rechazos"].items()} == {
        "reanudar_como_cliente": 403, "update_state": 403, "bifurcar": 403}
    assert all(r["detail"] for r in vio["rechazos"].values())
    assert "90,00 EUR" in vio["final_encargado"] and vio["final_cliente"] == vio["final_encargado"]
    assert vio["en_vivo"] == vio["final_encargado"]  # el flujo del cliente vio el desenlace
    assert vio["estado"] == "idle"
    assert [f["importe"] for f in sql(ajustes.database_url, "SELECT importe FROM reembolsos")] == [Decimal("90.00")]
