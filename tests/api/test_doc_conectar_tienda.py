"""El ejemplo trabajado de ``docs/conectar-tienda.md`` funciona tal cual: se ejecuta su bloque
de ``curl`` con bash contra el servidor (con una clave de API de verdad en lugar de la del
ejemplo) y, después, la clienta pide en el chat la devolución de la sartén y el agente la
reembolsa sin firma, como dice el documento. Las fechas del ejemplo son relativas a hoy: con
fechas fijas, la entrega acabaría fuera del plazo de la tienda y esto fallaría."""

from __future__ import annotations

import re
import subprocess

import httpx
import psycopg

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda import ingesta
from agente.web.app import crear_app
from tests.apoyo.fabricas import consultar
from tests.apoyo.rutas import RAIZ
from tests.apoyo.web_util import cab, servidor_en_hilo

DOC = RAIZ / "docs/conectar-tienda.md"
PEDIDO = "P-20261101-0001"


def _bloque_del_ejemplo() -> str:
    texto = DOC.read_text(encoding="utf-8")
    ejemplo = texto[texto.index("## Ejemplo trabajado"):]
    return re.search(r"```bash\n(.*?)```", ejemplo, re.S).group(1)


def test_el_ejemplo_trabajado_de_conectar_tienda_crea_el_pedido_y_el_chat_lo_reembolsa(ajustes, bd_url, tok):
    bloque = _bloque_del_ejemplo()
    assert "date -d" in bloque and not re.search(r"\b20\d\d-\d\d-\d\dT", bloque.split("#")[0])
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        clave = ingesta.crear_clave(c, tienda="talavera", nombre="doc",
                                           alcances=["clientes", "pedidos", "estados"]).secreto
    with servidor_en_hilo(crear_app(ajustes)) as base:
        guion = (re.sub(r"^API=.*$", f"API={base}/api/tienda/v1", bloque, flags=re.M)
                 .replace('CLAVE="X-Clave-API: tnd_k3j9x0qa_..."', f'CLAVE="X-Clave-API: {clave}"'))
        assert guion != bloque and clave in guion
        salida = subprocess.run(["bash", "-euo", "pipefail", "-c", guion], capture_output=True, text=True,
                                timeout=60, check=False)
        assert salida.returncode == 0, salida.stderr
        # Lo que el documento dice que contesta cada orden.
        assert '"id":"C-9001","resultado":"creado"' in salida.stdout.replace(" ", ""), salida.stdout
        assert f'"id":"{PEDIDO}","resultado":"creado"' in salida.stdout.replace(" ", ""), salida.stdout
        [pedido] = consultar(bd_url, "SELECT estado, importe FROM pedidos WHERE id = %(p)s", {"p": PEDIDO})
        assert (pedido["estado"], str(pedido["importe"])) == ("entregado", "54.90")

        with httpx.Client(base_url=base, timeout=60) as http:
            cabeceras = cab(tok("C-9001", tienda="talavera"))
            hilo = http.post("/api/conversaciones", headers=cabeceras).json()["thread_id"]
            r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=cabeceras,
                          json={"texto": f"Quiero devolver la sartén del pedido {PEDIDO}"})
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "respondida", r.text  # sin firma: dentro de plazo y del límite
    assert [str(f["importe"]) for f in consultar(bd_url, "SELECT importe FROM reembolsos WHERE pedido_id = %(p)s",
                                                 {"p": PEDIDO})] == ["24.90"]
