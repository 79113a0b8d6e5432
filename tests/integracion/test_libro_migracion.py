"""Una base anterior al libro se migra con sus reembolsos y cambios ya hechos.

Se aplica todo el esquema salvo ``007_libro`` (una base que ya tenía las demás) y lo que
se apoya en él (la vista ``efectos``, que ``agente.bd.derivados`` genera al final), se
apuntan datos como los dejaba la versión anterior (incluidas las historias del issue:
reembolso completo y después cambio de la misma cafetera, diferencias nunca liquidadas)
y se migra. Lo que cabe entra en el libro por orden de creación; lo que no, queda a la
vista de la auditoría.
"""

from __future__ import annotations

import shutil
from decimal import Decimal

import psycopg
import pytest

from agente.bd.migraciones import CARPETA_SQL, migraciones_disponibles, migrar
from agente.bd.pool import KWARGS_CONEXION, abrir_pool
from agente.demo.carga import cargar_demo
from agente.servicio.auditoria.auditoria_libro import auditar_libro
from herramientas.pedidos import consultar_pedido
from nucleo.contexto import ContextoCliente
from tests.apoyo.fabricas import crear_pedido

D = Decimal
# Lo que una base anterior al libro no puede tener todavía: el libro y las operaciones con
# efecto de 016 en adelante, que se apoyan en él (la vista efectos se genera al migrar entera).
DESPUES_DEL_LIBRO = ("007_libro.sql",)
PRIMERA_OPERACION_NUEVA = "016"

REEMBOLSO_ANTIGUO_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
                        importe, lineas, estado, emitido_en, creado)
SELECT %(clave)s, 'antiguo', %(clave)s, p.id, p.cliente_id, p.tienda, %(importe)s, %(lineas)s,
       'emitido', now(), now() - make_interval(mins => %(hace)s)
FROM pedidos p WHERE p.id = %(pedido)s
RETURNING numero, importe
"""
SUSTITUCION_ANTIGUA_SQL = """
INSERT INTO sustituciones (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
                           sku_original, sku_nuevo, pvp_original, pvp_nuevo, creada)
SELECT %(clave)s, 'antiguo', %(clave)s, p.id, p.cliente_id, p.tienda, %(original)s, %(nuevo)s,
       o.pvp, n.pvp, now() - make_interval(mins => %(hace)s)
FROM pedidos p, productos o, productos n
WHERE p.id = %(pedido)s AND o.sku = %(original)s AND n.sku = %(nuevo)s
RETURNING numero
"""


@pytest.fixture
def base_antigua(bd_sin_migrar_url, tmp_path):
    anteriores = tmp_path / "sql"
    anteriores.mkdir()
    for ruta in sorted(CARPETA_SQL.glob("*.sql")):
        if ruta.name not in DESPUES_DEL_LIBRO and ruta.name < PRIMERA_OPERACION_NUEVA:
            shutil.copy(ruta, anteriores / ruta.name)
    migrar(bd_sin_migrar_url, carpeta=anteriores)
    with psycopg.connect(bd_sin_migrar_url, **KWARGS_CONEXION) as c:
        # Las migraciones de operaciones nuevas (019...) recrean la vista efectos, que lee el
        # libro: una base de antes del libro no la tiene (la vuelve a crear 015).
        c.execute("DROP VIEW IF EXISTS efectos")
        cargar_demo(c)
    return bd_sin_migrar_url


def test_los_datos_anteriores_entran_en_el_libro_y_lo_que_no_cabe_se_ve(base_antigua):
    url = base_antigua
    igual = crear_pedido(url, "C-0001", [("CAF-001", 1)])
    numeros = {}
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        def reembolso(clave, pedido, importe, hace, lineas=None):
            from psycopg.types.json import Jsonb

            numeros[clave] = c.execute(REEMBOLSO_ANTIGUO_SQL, {
                "clave": clave, "pedido": pedido, "importe": D(importe), "hace": hace,
                "lineas": Jsonb(lineas) if lineas is not None else None}).fetchone()["numero"]
            c.execute("INSERT INTO pasarela_movimientos (referencia, importe) VALUES (%s, %s)",
                      (numeros[clave], D(importe)))

        def cambio(clave, pedido, original, nuevo, hace):
            numeros[clave] = c.execute(SUSTITUCION_ANTIGUA_SQL, {
                "clave": clave, "pedido": pedido, "original": original, "nuevo": nuevo,
                "hace": hace}).fetchone()["numero"]

        reembolso("cafetera", "P-20260917-0041", "120.00", hace=50)  # y después se cambió
        cambio("cafetera-despues", "P-20260917-0041", "CAF-001", "CAF-004", hace=40)
        reembolso("sarten-1", "P-20261003-0045", "20.00", hace=30, lineas=[1])
        reembolso("sarten-2", "P-20261003-0045", "30.00", hace=20)  # 24,90 caben, 5,10 no
        cambio("espresso", "P-20260923-0034", "CAF-003", "CAF-002", hace=10)  # -90,10 sin liquidar
        cambio("igual", igual, "CAF-001", "CAF-003", hace=5)

    assert migrar(url) == [m.version for m in migraciones_disponibles()  # las de operaciones/ también
                           if m.ruta.name in DESPUES_DEL_LIBRO or m.ruta.name >= PRIMERA_OPERACION_NUEVA]

    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        libro = c.execute("""SELECT c.pedido_id, c.linea, c.unidad, c.importe,
                                    coalesce(r.numero, s.numero) AS de
                             FROM compensaciones_unidad c
                             LEFT JOIN reembolsos r ON r.id = c.reembolso_id
                             LEFT JOIN sustituciones s ON s.id = c.sustitucion_id
                             ORDER BY 1, 2, 3""").fetchall()
        assert [(f["pedido_id"], f["linea"], f["unidad"], f["importe"], f["de"]) for f in libro] == [
            ("P-20260917-0041", 1, 1, D("120.00"), numeros["cafetera"]),
            ("P-20260923-0034", 1, 1, D("120.00"), numeros["espresso"]),
            ("P-20261003-0045", 1, 1, D("20.00"), numeros["sarten-1"]),
            ("P-20261003-0045", 1, 2, D("24.90"), numeros["sarten-2"]),
            (igual, 1, 1, D("120.00"), numeros["igual"]),
        ]
        fuera = c.execute("SELECT importe, motivo FROM compensaciones_sin_unidad ORDER BY id").fetchall()
        assert [(f["importe"], f["motivo"].split(" ")[0]) for f in fuera] == [
            (D("120.00"), "cambio"), (D("5.10"), "reembolso")]
        cambios = {f["clave_idempotencia"]: f for f in c.execute("SELECT * FROM sustituciones")}
        assert {k: (f["precio_pagado"], f["diferencia"], f["liquidacion"], f["linea"])
                for k, f in cambios.items()} == {
            "cafetera-despues": (D("120.00"), D("129.00"), "anterior_al_libro", None),
            "espresso": (D("120.00"), D("-90.10"), "anterior_al_libro", 1),
            "igual": (D("120.00"), D("0.00"), "anterior_al_libro", 1),
        }
        assert {f["tipo"] for f in c.execute("SELECT tipo FROM pasarela_movimientos")} == {"reembolso"}

        informe = auditar_libro(c)
        assert sorted((h["hallazgo"], h["referencia"]) for h in informe["unidades"]) == sorted([
            ("compensacion_anterior_sin_unidad", numeros["cafetera-despues"]),
            ("compensacion_anterior_sin_unidad", numeros["sarten-2"]),
        ])
        assert sorted((h["hallazgo"], h["referencia"]) for h in informe["diferencias"]) == sorted([
            ("diferencia_anterior_al_libro_sin_liquidar", numeros["cafetera-despues"]),
            ("diferencia_anterior_al_libro_sin_liquidar", numeros["espresso"]),
        ])
        assert informe["pasarela"] == [] and informe["pendientes"] == []

    pool = abrir_pool(url, max_size=2)
    try:
        ana = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana")
        assert consultar_pedido(pool, contexto=ana, pedido="P-20260917-0041")["reembolsable"] == "0.00"
    finally:
        pool.close()
