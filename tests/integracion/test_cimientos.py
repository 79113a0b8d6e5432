"""Cimientos: migraciones idempotentes y con candado, datos de demo, errores de ajustes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from decimal import Decimal

import psycopg
import pytest

from agente.bd.migraciones import migraciones_disponibles, migrar
from agente.bd.pool import KWARGS_CONEXION
from agente.demo.carga import cargar_demo
from tests.apoyo.rutas import RAIZ


def _versiones(url):
    with psycopg.connect(url) as c:
        return [f[0] for f in c.execute("SELECT version FROM esquema_versiones ORDER BY version")]


def test_migrar_dos_veces_no_cambia_nada_la_segunda(bd_sin_migrar_url):
    primera = migrar(bd_sin_migrar_url)
    assert primera == [m.version for m in migraciones_disponibles()]
    with psycopg.connect(bd_sin_migrar_url) as c:
        tablas_antes = c.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()[0]
    assert migrar(bd_sin_migrar_url) == []
    with psycopg.connect(bd_sin_migrar_url) as c:
        tablas_despues = c.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()[0]
    assert tablas_antes == tablas_despues
    assert _versiones(bd_sin_migrar_url) == primera


@pytest.mark.temporal
def test_dos_migraciones_a_la_vez_una_aplica_y_la_otra_espera(bd_sin_migrar_url):
    # Un tercero retiene el candado: los dos procesos deben esperar, no fallar.
    from nucleo.claves_candado import CANDADO_MIGRACIONES

    resultados: list[list[str]] = []
    errores: list[BaseException] = []
    bloqueo = psycopg.connect(bd_sin_migrar_url, autocommit=True)
    bloqueo.execute("SELECT pg_advisory_lock(%s)", (CANDADO_MIGRACIONES,))

    def lanzar():
        try:
            resultados.append(migrar(bd_sin_migrar_url))
        except BaseException as exc:  # noqa: BLE001 - se comprueba abajo
            errores.append(exc)

    hilos = [threading.Thread(target=lanzar) for _ in range(2)]
    for h in hilos:
        h.start()
    threading.Event().wait(0.5)
    with psycopg.connect(bd_sin_migrar_url, autocommit=True) as c:
        # Mientras el candado esté cogido, ninguno de los dos ha creado nada.
        assert c.execute("SELECT to_regclass('esquema_versiones') IS NULL").fetchone()[0]
    assert all(h.is_alive() for h in hilos)
    bloqueo.execute("SELECT pg_advisory_unlock(%s)", (CANDADO_MIGRACIONES,))
    bloqueo.close()
    for h in hilos:
        h.join(timeout=60)
    assert not errores
    assert sorted(len(r) for r in resultados) == [0, len(migraciones_disponibles())]


@pytest.mark.temporal
def test_cli_migrate_en_dos_procesos_a_la_vez(bd_sin_migrar_url):
    entorno = {**os.environ, "DATABASE_URL": bd_sin_migrar_url}
    procesos = [
        subprocess.Popen(
            [sys.executable, "-m", "agente.cli", "db", "migrate"],
            env=entorno, cwd=RAIZ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    salidas = [p.communicate(timeout=120) for p in procesos]
    assert [p.returncode for p in procesos] == [0, 0], salidas
    textos = sorted(s[0] for s in salidas)
    assert "nada que aplicar" in textos[0]
    assert textos[1].startswith("Migraciones aplicadas")


def test_ninguna_columna_de_dinero_es_float(conexion):
    flotantes = conexion.execute(
        """SELECT table_name, column_name FROM information_schema.columns
           WHERE table_schema = 'public' AND data_type IN ('real', 'double precision')"""
    ).fetchall()
    assert flotantes == []
    dinero = conexion.execute(
        """SELECT table_name, column_name, numeric_precision, numeric_scale
           FROM information_schema.columns
           WHERE table_schema = 'public'
             AND column_name IN ('importe', 'pvp', 'pvp_referencia', 'precio_unitario', 'pvp_original',
                                 'pvp_nuevo', 'diferencia', 'limite_reembolso')"""
    ).fetchall()
    assert len(dinero) >= 8
    assert {(f["numeric_precision"], f["numeric_scale"]) for f in dinero} == {(12, 2)}


def test_demo_es_idempotente(conexion):
    def recuentos():
        return conexion.execute(
            """SELECT (SELECT count(*) FROM pedidos) p, (SELECT count(*) FROM lineas_pedido) l,
                      (SELECT count(*) FROM devoluciones) d, (SELECT count(*) FROM clientes) c,
                      (SELECT count(*) FROM stock) s"""
        ).fetchone()

    antes = recuentos()
    cargar_demo(conexion)
    assert recuentos() == antes
    assert antes["p"] >= 30 and antes["c"] >= 10


def test_demo_tiene_datos_para_cada_rama_de_la_politica(conexion):
    q = conexion.execute
    assert {f["id"] for f in q("SELECT id FROM tiendas")} >= {"talavera", "madrid-centro"}
    assert q("SELECT count(*) n FROM productos").fetchone()["n"] >= 20
    assert q("SELECT count(DISTINCT categoria) n FROM productos").fetchone()["n"] >= 4
    encargados = {f["id"]: f for f in q("SELECT * FROM encargados WHERE activo")}
    assert encargados["enc-talavera"]["tienda"] == "talavera"
    assert encargados["enc-madrid-centro"]["tienda"] == "madrid-centro"

    def pedido(pid):
        return q(
            """SELECT p.*, current_date - p.entregado_en::date AS dias,
                      c.tienda AS tienda_cliente
               FROM pedidos p JOIN clientes c ON c.id = p.cliente_id WHERE p.id = %s""",
            (pid,),
        ).fetchone()

    grande = pedido("P-20260917-0041")
    assert (grande["cliente_id"], grande["tienda"], grande["importe"], grande["dias"]) == (
        "C-0001", "talavera", Decimal("120.00"), 4)
    assert q("SELECT p.categoria FROM lineas_pedido l JOIN productos p USING (sku) "
             "WHERE pedido_id = 'P-20260917-0041'").fetchone()["categoria"] == "cafeteras"
    pequeno = pedido("P-20260920-0102")
    assert pequeno["importe"] < Decimal("60") and pequeno["dias"] == 3
    antiguo = pedido("P-20260801-0007")
    assert (antiguo["tienda"], antiguo["importe"], antiguo["dias"]) == ("madrid-centro", Decimal("35.00"), 45)
    sin_entregar = pedido("P-20260925-0150")
    assert sin_entregar["entregado_en"] is None and sin_entregar["importe"] == Decimal("40.00")
    devolvedor = pedido("P-20260922-0077")
    assert devolvedor["importe"] == Decimal("30.00") and devolvedor["dias"] == 5

    def devoluciones_30d(cliente):
        return q("SELECT count(*) n FROM devoluciones WHERE cliente_id = %s "
                 "AND creada > now() - interval '30 days'", (cliente,)).fetchone()["n"]

    assert devoluciones_30d("C-0005") == 2
    assert devoluciones_30d("C-0002") == 0

    # Alternativas de la cafetera: más barata, mismo precio y más cara, con stock en Talavera.
    alternativas = q(
        """SELECT sign(pa.pvp - po.pvp) AS signo FROM productos o
           JOIN precios_tienda po ON po.tienda = 'talavera' AND po.sku = o.sku
           JOIN productos a ON a.categoria = o.categoria AND a.sku <> o.sku
           JOIN precios_tienda pa ON pa.tienda = 'talavera' AND pa.sku = a.sku
           JOIN stock s ON s.sku = a.sku AND s.tienda = 'talavera' AND s.unidades > 0
           WHERE o.sku = 'CAF-001'"""
    ).fetchall()
    assert {f["signo"] for f in alternativas} == {-1, 0, 1}
    # Y un producto pedido sin ninguna alternativa en stock.
    sin_alternativa = q(
        """SELECT l.sku FROM lineas_pedido l JOIN productos o ON o.sku = l.sku
           WHERE NOT EXISTS (SELECT 1 FROM productos a JOIN stock s ON s.sku = a.sku
                             AND s.unidades > 0 AND s.tienda = 'talavera'
                             WHERE a.categoria = o.categoria AND a.sku <> o.sku)"""
    ).fetchall()
    assert sin_alternativa
    assert q("SELECT count(*) n FROM stock WHERE unidades = 0").fetchone()["n"] >= 1


def _cli(*args, **entorno):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(entorno)
    return subprocess.run(
        [sys.executable, "-m", "agente.cli", *args],
        env=env, cwd=RAIZ, capture_output=True, text=True, timeout=120,
    )


def test_database_url_inalcanzable_da_una_linea_en_espanol():
    r = _cli("db", "migrate", DATABASE_URL="postgresql://nadie@127.0.0.1:1/nada")
    assert r.returncode == 2
    lineas = r.stderr.strip().splitlines()
    assert len(lineas) == 1, r.stderr
    assert lineas[0].startswith("Error: DATABASE_URL:")
    assert "Traceback" not in r.stderr


def test_carpeta_de_datos_no_escribible_da_una_linea_en_espanol(tmp_path):
    fichero = tmp_path / "no-soy-carpeta"
    fichero.write_text("x")
    r = _cli("db", "migrate", AGENTE_PGDATA=str(fichero / "pgdata"))
    assert r.returncode == 2
    lineas = r.stderr.strip().splitlines()
    assert len(lineas) == 1, r.stderr
    assert lineas[0].startswith("Error: AGENTE_PGDATA:")


def test_embebido_se_reutiliza_entre_ejecuciones(tmp_path):
    datos = tmp_path / "pg"
    r1 = _cli("db", "demo", AGENTE_PGDATA=str(datos))
    assert r1.returncode == 0, r1.stderr
    assert "Demo cargada" in r1.stdout
    r2 = _cli("db", "migrate", AGENTE_PGDATA=str(datos))
    assert r2.returncode == 0, r2.stderr
    assert "nada que aplicar" in r2.stdout
    # Al salir el proceso, el servidor se para limpiamente: no queda postmaster.pid.
    assert not (datos / "postmaster.pid").exists()


def test_kwargs_del_pool_son_los_que_exige_el_checkpointer():
    assert KWARGS_CONEXION["autocommit"] is True
    assert KWARGS_CONEXION["prepare_threshold"] == 0
