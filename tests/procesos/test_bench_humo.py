"""El bench sigue corriendo sobre el producto de hoy.

``make bench`` no entra en ``make test`` (tarda minutos) y por eso se rompió dos veces
sin que nadie lo viera: el pool trazado dejó de aceptar la espera del pool y el EXPLAIN
de la bandeja siguió usando el parámetro de una sola tienda. Aquí corren, en pequeño,
las dos partes que tocan el interior del producto (fábrica del servicio y SQL de la cola),
con ``python -m bench.humo`` en un subproceso: las pruebas no importan ``bench/``, lo
ejecutan como un programa.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import psycopg

from tests.apoyo.rutas import RAIZ


def _humo(parte: str, bd_url: str):
    r = subprocess.run([sys.executable, "-m", "bench.humo", parte, bd_url], cwd=RAIZ,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_el_recuento_de_sentencias_corre_con_la_fabrica_del_servicio(bd_url):
    r = _humo("sentencias", bd_url)
    assert set(r) == {"B", "C"} and r["B"] and set(r["B"]) == set(r["C"])
    for caso in ("B", "C"):
        for escenario, sentencias in r[caso].items():
            assert sentencias > 0, (caso, escenario)
    # El producto hace algo más que el framework pelado al pausar (veredicto, cola, aviso). En
    # una consulta ya no se ve: su DeltaChannel ahorra las escrituras del blob de messages.
    assert r["C"]["reembolso_grande"] > r["B"]["reembolso_grande"]


def test_el_explain_de_la_bandeja_usa_la_sql_de_la_cola(bd_url):
    plan = _humo("explain", bd_url)
    assert "aprobaciones_pendientes" in plan


def test_el_caso_b_de_la_capacidad_por_nucleo_corre_en_directo_contra_el_proveedor_openai(bd_url):
    # B (create_agent + PostgresSaver en streaming) con el proveedor simulado: turnos dentro de la
    # ventana, ninguno falla (tras aprobar la pausa hay reembolso) y se mide su CPU y la de PostgreSQL.
    r = _humo("nucleo", bd_url)
    assert r["errores"] == 0, r["ejemplos_errores"]
    assert r["turnos"] > 0
    assert r["cpu_ms_por_ejecucion"] > 0
    assert r["cpu_postgres_ms_por_ejecucion"] > 0


def test_el_guion_de_los_pares_corre_contra_el_producto_y_da_las_lineas_del_documento(bd_url):
    # Sin instalar ni arrancar aegra ni langgraph-api: el mismo guion del SDK contra el producto.
    # La firma solo sale si el reembolso grande quedó esperándola (si no, el producto da 404/409).
    r = _humo("pares", bd_url)
    assert r["errores"] == []
    assert r["escenarios"] == ["consulta", "reembolso_pequeno", "reembolso_grande", "firma"]
    with psycopg.connect(bd_url) as c:
        emitidos = c.execute(
            "SELECT count(*) FROM reembolsos r JOIN pedidos p ON p.id = r.pedido_id "
            "WHERE p.cliente_id LIKE 'KH-%%' AND r.estado = 'emitido'").fetchone()[0]
    assert emitidos == 2  # el pequeño sin firma y el grande tras ella
    un_cliente, nivel = r["lineas"]
    assert re.fullmatch(r"- Pares, un cliente, modelo instantáneo: producto p50 \d+ ms p99 \d+ ms", un_cliente)
    assert re.fullmatch(r"- Pares: 1 conversaciones, modelo 0,0 s: producto \d+,\d\d turnos/s "
                        r"\(p99 \d+ ms, CPU \d+,\d ms/turno\)", nivel)


def test_el_ab_del_canal_de_mensajes_corre_y_el_delta_ocupa_menos(tmp_path):
    # python -m bench.delta en pequeño: el mismo hilo con y sin DeltaChannel (agente/construir.py).
    salida = tmp_path / "delta.json"
    r = subprocess.run([sys.executable, "-m", "bench.delta", "--turnos", "4", "--salida", str(salida)],
                       cwd=RAIZ, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    resultado = json.loads(salida.read_text(encoding="utf-8"))
    (fila,) = resultado["marcas"]
    assert fila["turnos"] == 4
    assert 0 < fila["delta"]["kib"] < fila["serie"]["kib"], fila
    assert resultado["lectura"]["serie"]["mensajes"] == resultado["lectura"]["delta"]["mensajes"] >= 16
