"""``agente claves`` y ``agente importar`` como programas: la clave se enseña una vez y solo se
guarda su hash; importar aplica lo válido, informa cada inválido con su línea (código 1) y
repetir el mismo fichero no cambia nada. La CLI corre en este proceso (``tests/apoyo/cli_sesion.py``)."""

from __future__ import annotations

import hashlib
import json

from tests.apoyo.cli_sesion import cli_en_proceso
from tests.apoyo.fabricas import consultar, uno


def test_claves_crear_listar_y_revocar_por_la_cli_guardan_solo_el_hash(bd_url):
    creada = cli_en_proceso(bd_url, "claves", "crear", "--tienda", "talavera", "--alcance", "pedidos",
                          "--alcance", "estados", "--nombre", "ERP")
    assert creada.returncode == 0, creada.stderr
    secreto = next(linea for linea in creada.stdout.splitlines() if linea.startswith("tnd_"))
    assert "No se volverá a mostrar" in creada.stderr
    (fila,) = consultar(bd_url, "SELECT prefijo, hash, alcances FROM claves_api")
    assert fila["hash"] == hashlib.sha256(secreto.encode()).hexdigest() and fila["alcances"] == ["pedidos", "estados"]
    assert secreto not in json.dumps(consultar(bd_url, "SELECT * FROM claves_api"), default=str)
    lista = cli_en_proceso(bd_url, "claves", "listar", "--tienda", "talavera")
    assert fila["prefijo"] in lista.stdout and "pedidos, estados" in lista.stdout and secreto not in lista.stdout
    revocada = cli_en_proceso(bd_url, "claves", "revocar", fila["prefijo"])
    assert revocada.returncode == 0 and "revocada" in revocada.stdout
    assert uno(bd_url, "SELECT revocada IS NOT NULL FROM claves_api")
    mala = cli_en_proceso(bd_url, "claves", "crear", "--tienda", "talavera", "--alcance", "todo")
    assert mala.returncode == 2 and mala.stderr.startswith("Error: alcances no válidos: todo")


def test_importar_aplica_lo_valido_informa_cada_linea_invalida_y_repetir_no_cambia_nada(bd_url, tmp_path):
    fichero = tmp_path / "lote.jsonl"
    registros = [
        {"tipo": "cliente", "id": "C-7001", "nombre": "Ana Importada"},
        {"tipo": "pedido", "id": "P-20261105-0001", "cliente_id": "C-7001", "fecha": "2026-11-05T10:00:00+01:00",
         "estado": "pendiente", "lineas": [{"linea": 1, "sku": "TEX-001", "unidades": 1, "precio_unitario": "15.00"}]},
        {"tipo": "pedido", "id": "P-20261105-0002", "cliente_id": "C-7001", "fecha": "2026-11-05T10:00:00+01:00",
         "estado": "enviado", "lineas": [{"linea": 1, "sku": "TEX-001", "unidades": 1, "precio_unitario": "15.00"}]},
        {"tipo": "stock", "sku": "NO-EXISTE", "unidades": 3},
    ]
    fichero.write_text("\n".join(json.dumps(r) for r in registros) + "\n\n", encoding="utf-8")
    r = cli_en_proceso(bd_url, "importar", str(fichero), "--tienda", "talavera")
    assert r.returncode == 1, r.stderr
    assert "línea 3: 422 enviado_en: un pedido enviado necesita su fecha de envío" in r.stderr
    assert "línea 4: 409 sku: el producto NO-EXISTE no existe" in r.stderr
    assert "2 creados" in r.stdout and "2 inválidos" in r.stdout
    assert [f["id"] for f in consultar(bd_url, "SELECT id FROM pedidos WHERE id LIKE 'P-20261105%%'")] == [
        "P-20261105-0001"]
    otra = cli_en_proceso(bd_url, "importar", str(fichero), "--tienda", "talavera")
    assert "0 creados, 0 actualizados, 2 sin cambios, 2 inválidos" in otra.stdout
    assert uno(bd_url, "SELECT count(*) FROM ingesta_versiones") == 2
    sin_tienda = cli_en_proceso(bd_url, "importar", str(fichero), "--tienda", "no-existe")
    assert sin_tienda.returncode == 2 and "tienda no encontrada" in sin_tienda.stderr


def test_importar_un_fichero_que_no_existe_falla_en_una_linea(bd_url, tmp_path):
    r = cli_en_proceso(bd_url, "importar", str(tmp_path / "no-existe.jsonl"), "--tienda", "talavera")
    assert r.returncode == 2 and r.stderr.strip().startswith("Error: no se puede leer"), r.stderr


def test_importar_con_fechas_extremas_informa_la_linea_en_espanol_sin_traza_y_aplica_el_resto(bd_url, tmp_path):
    """issue 39, punto 4: ``0001-01-01T00:00:00+14:00`` no cabe en UTC; antes, una traza de Python."""
    fichero = tmp_path / "lote.jsonl"
    lineas = [{"tipo": "estado", "id": "P-20260920-0102", "estado": "entregado", "fecha": "0001-01-01T00:00:00+14:00"},
              {"tipo": "cliente", "id": "C-7002", "nombre": "Eva Importada"},
              {"tipo": "pedido", "id": "P-20261105-0003", "cliente_id": "C-7002",
               "fecha": "9999-12-31T23:59:59-14:00", "estado": "pendiente",
               "lineas": [{"linea": 1, "sku": "TEX-001", "unidades": 1, "precio_unitario": "15.00"}]}]
    fichero.write_text("\n".join(json.dumps(r) for r in lineas) + "\n", encoding="utf-8")
    r = cli_en_proceso(bd_url, "importar", str(fichero), "--tienda", "talavera")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "OverflowError" not in r.stderr
    assert "línea 1: 422 fecha: debe estar entre 1970-01-01 y 2099-12-31" in r.stderr
    assert "línea 3: 422 fecha: debe estar entre" in r.stderr
    assert "1 creados" in r.stdout and "2 inválidos" in r.stdout
    assert uno(bd_url, "SELECT count(*) FROM clientes WHERE id = 'C-7002'") == 1
