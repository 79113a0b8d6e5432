"""Escribir la demo en la base. Cargar dos veces deja lo mismo: cada fila se inserta con
``ON CONFLICT DO UPDATE`` y las fechas se recalculan. Por eso escribe ENCIMA de lo que pasó
(un pedido cancelado vuelve a «pendiente»): las órdenes de la CLI no la llaman sobre una
base usada, sino ``agente.demo.una_vez``; aquí la llaman las pruebas y el banco, sobre
bases nuevas.

Una operación con carpeta trae sus datos de demo en ``operaciones/<op>/demo.sql`` (pieza
opcional: productos, stock, pedidos...; idempotente como el resto); se ejecuta al final, en
la misma transacción, si la base tiene ya las migraciones de su carpeta (``sql/``)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from agente.demo.catalogo import (
    CLIENTES,
    CONTACTOS,
    DIRECCIONES_CLIENTES,
    EMAILS,
    ENCARGADOS,
    PRODUCTOS,
    ROLES,
    STOCK_ESPECIAL,
    STOCK_POR_DEFECTO,
    TIENDAS,
    TIENDAS_REGIONALES,
)
from agente.demo.pedidos import DEVOLUCIONES, DIAS_DESDE_ENVIO, PEDIDOS
from nucleo.direcciones import provincia_de

D = Decimal

# Las carpetas de las operaciones (``operaciones/carpetas.py``), por ruta: la demo no las importa.
CARPETA_OPERACIONES = Path(__file__).resolve().parents[2] / "operaciones"
SELECT_VERSIONES_SQL = "SELECT version FROM esquema_versiones"

UPDATE_DIRECCION_CLIENTE_SQL = """
UPDATE clientes SET calle = %(calle)s, codigo_postal = %(codigo_postal)s, localidad = %(localidad)s,
                    provincia = %(provincia)s
WHERE id = %(id)s
"""
# Cargar de nuevo la demo devuelve cada pedido de la demo a la dirección de su cliente.
UPDATE_DIRECCION_PEDIDOS_SQL = """
UPDATE pedidos p SET calle = c.calle, codigo_postal = c.codigo_postal, localidad = c.localidad,
                     provincia = c.provincia
FROM clientes c WHERE c.id = p.cliente_id AND p.id = ANY(%(pedidos)s)
"""

# Una base de antes de 017/019/021/024/030 (pruebas de migraciones) carga la demo sin lo que
# aún no tiene: fecha de envío, direcciones, correos, referencia de pago, precio por tienda.
COLUMNAS_SQL = """
SELECT table_name || '.' || column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name IN ('pedidos', 'encargados', 'productos')
"""

UPSERT_TIENDA_SQL = """
INSERT INTO tiendas (id, nombre) VALUES (%(id)s, %(nombre)s)
ON CONFLICT (id) DO UPDATE SET nombre = EXCLUDED.nombre
"""
UPSERT_POLITICA_SQL = """
INSERT INTO politicas_tienda (tienda) VALUES (%(tienda)s) ON CONFLICT (tienda) DO NOTHING
"""
UPSERT_ENCARGADO_SQL = """
INSERT INTO encargados (id, tienda, nombre, activo, rol)
VALUES (%(id)s, %(tienda)s, %(nombre)s, %(activo)s, %(rol)s)
ON CONFLICT (id) DO UPDATE SET tienda = EXCLUDED.tienda, nombre = EXCLUDED.nombre,
    activo = EXCLUDED.activo, rol = EXCLUDED.rol
"""
UPSERT_TIENDA_REGIONAL_SQL = """
INSERT INTO tiendas_regionales (encargado_id, tienda) VALUES (%(encargado_id)s, %(tienda)s)
ON CONFLICT DO NOTHING
"""
UPSERT_CONTACTO_SQL = """
INSERT INTO contactos_firmantes (encargado_id, canal, direccion)
VALUES (%(encargado_id)s, %(canal)s, %(direccion)s)
ON CONFLICT (encargado_id, canal, direccion) DO UPDATE SET baja = NULL
"""
# {pvp}: pvp_referencia (sql/030) o, en una base de antes, el pvp común.
UPSERT_PRODUCTO_SQL = sql.SQL("""
INSERT INTO productos (sku, nombre, categoria, {pvp}) VALUES (%(sku)s, %(nombre)s, %(categoria)s, %(pvp)s)
ON CONFLICT (sku) DO UPDATE SET nombre = EXCLUDED.nombre, categoria = EXCLUDED.categoria, {pvp} = EXCLUDED.{pvp}
""")
UPSERT_PRECIO_SQL = """
INSERT INTO precios_tienda (tienda, sku, pvp) VALUES (%(tienda)s, %(sku)s, %(pvp)s)
ON CONFLICT (tienda, sku) DO UPDATE SET pvp = EXCLUDED.pvp
"""
UPSERT_STOCK_SQL = """
INSERT INTO stock (sku, tienda, unidades) VALUES (%(sku)s, %(tienda)s, %(unidades)s)
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = EXCLUDED.unidades
"""
UPSERT_CLIENTE_SQL = """
INSERT INTO clientes (id, tienda, nombre, email, telefono)
VALUES (%(id)s, %(tienda)s, %(nombre)s, %(email)s, %(telefono)s)
ON CONFLICT (id) DO UPDATE SET tienda = EXCLUDED.tienda, nombre = EXCLUDED.nombre,
    email = EXCLUDED.email, telefono = EXCLUDED.telefono
"""
UPSERT_PEDIDO_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, entregado_en, importe)
VALUES (%(id)s, %(cliente_id)s, %(tienda)s,
        now() - make_interval(days => %(dias_compra)s),
        %(estado)s,
        now() - make_interval(days => %(dias_entrega)s::int),
        %(importe)s)
ON CONFLICT (id) DO UPDATE SET cliente_id = EXCLUDED.cliente_id, tienda = EXCLUDED.tienda,
    fecha = EXCLUDED.fecha, estado = EXCLUDED.estado, entregado_en = EXCLUDED.entregado_en,
    importe = EXCLUDED.importe
"""
UPSERT_LINEA_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
VALUES (%(pedido_id)s, %(linea)s, %(sku)s, %(unidades)s, %(precio)s)
ON CONFLICT (pedido_id, linea) DO UPDATE
SET sku = EXCLUDED.sku, unidades = EXCLUDED.unidades, precio_unitario = EXCLUDED.precio_unitario
"""
FIJAR_EMAIL_SQL = "UPDATE encargados SET email = %(email)s WHERE id = %(id)s"
FIJAR_ENVIO_SQL = """
UPDATE pedidos SET enviado_en = CASE
    WHEN estado NOT IN ('enviado', 'entregado') THEN NULL
    WHEN %(dias)s::int IS NOT NULL THEN now() - make_interval(days => %(dias)s::int)
    ELSE least(fecha + interval '1 day', coalesce(entregado_en, now())) END
WHERE id = %(id)s
"""
# El pago (Stripe) de cada pedido de la demo, contra el que van sus reembolsos (sql/024; no pisa otro).
FIJAR_REFERENCIA_PAGO_SQL = "UPDATE pedidos SET referencia_pago = 'pi_demo_' || lower(replace(id, '-', '_')) WHERE id = ANY(%(pedidos)s) AND referencia_pago IS NULL"
BORRAR_DEVOLUCIONES_DEMO_SQL = """
DELETE FROM devoluciones WHERE reembolso_id IS NULL AND pedido_id = ANY(%(pedidos)s)
"""
INSERT_DEVOLUCION_SQL = """
INSERT INTO devoluciones (pedido_id, cliente_id, tienda, importe, motivo, creada)
VALUES (%(pedido_id)s, %(cliente_id)s, %(tienda)s, %(importe)s, %(motivo)s,
        now() - make_interval(days => %(dias)s))
"""


def _cargar_direcciones(cur: psycopg.Cursor) -> None:
    cur.executemany(
        UPDATE_DIRECCION_CLIENTE_SQL,
        [{"id": i, "calle": calle, "codigo_postal": cp, "localidad": loc, "provincia": provincia_de(cp)}
         for i, (calle, cp, loc) in DIRECCIONES_CLIENTES.items()],
    )
    cur.execute(UPDATE_DIRECCION_PEDIDOS_SQL, {"pedidos": [p.id for p in PEDIDOS]})


def demos_de_carpetas(carpeta: Path = CARPETA_OPERACIONES) -> list[Path]:
    """El ``demo.sql`` de cada carpeta de operación que lo tiene, en orden alfabético."""
    return sorted(carpeta.glob("*/demo.sql"))


def _cargar_demos_de_carpetas(cur: psycopg.Cursor) -> None:
    with cur.connection.cursor(row_factory=tuple_row) as pregunta:
        aplicadas = {fila[0] for fila in pregunta.execute(SELECT_VERSIONES_SQL)}
    for ruta in demos_de_carpetas():
        propias = {m.stem for m in (ruta.parent / "sql").glob("*.sql")}
        if propias <= aplicadas:
            cur.execute(ruta.read_text(encoding="utf-8"), prepare=False)


def cargar_demo(conexion: psycopg.Connection) -> dict[str, int]:
    """Escribe (o reescribe) el catálogo de demo en una transacción. Devuelve recuentos."""
    pvp = {sku: precio for sku, _, _, precio in PRODUCTOS}
    tienda_de = {cid: tienda for cid, tienda, *_ in CLIENTES}
    with conexion.transaction(), conexion.cursor() as cur:
        with conexion.cursor(row_factory=tuple_row) as pregunta:
            columnas = {fila[0] for fila in pregunta.execute(COLUMNAS_SQL)}
        cur.executemany(UPSERT_TIENDA_SQL, [{"id": i, "nombre": n} for i, n in TIENDAS])
        cur.executemany(UPSERT_POLITICA_SQL, [{"tienda": i} for i, _ in TIENDAS])
        cur.executemany(
            UPSERT_ENCARGADO_SQL,
            [
                {"id": i, "tienda": t, "nombre": n, "activo": a, "rol": ROLES.get(i, "encargado")}
                for i, t, n, a in ENCARGADOS
            ],
        )
        if "encargados.email" in columnas:
            cur.executemany(FIJAR_EMAIL_SQL, [{"id": i, "email": EMAILS[i]} for i, *_ in ENCARGADOS])
        cur.executemany(UPSERT_TIENDA_REGIONAL_SQL, [{"encargado_id": e, "tienda": t} for e, t in TIENDAS_REGIONALES])
        cur.executemany(UPSERT_CONTACTO_SQL,
                        [{"encargado_id": e, "canal": c, "direccion": d} for e, c, d in CONTACTOS])
        por_tienda = "productos.pvp_referencia" in columnas
        cur.executemany(
            UPSERT_PRODUCTO_SQL.format(pvp=sql.Identifier("pvp_referencia" if por_tienda else "pvp")),
            [{"sku": s, "nombre": n, "categoria": c, "pvp": p} for s, n, c, p in PRODUCTOS],
        )
        if por_tienda:
            cur.executemany(UPSERT_PRECIO_SQL, [{"tienda": t, "sku": s, "pvp": p} for t, _ in TIENDAS
                                                for s, _, _, p in PRODUCTOS])
        cur.executemany(
            UPSERT_STOCK_SQL,
            [
                {"sku": sku, "tienda": t, "unidades": STOCK_ESPECIAL.get((t, sku), STOCK_POR_DEFECTO)}
                for t, _ in TIENDAS
                for sku, *_ in PRODUCTOS
            ],
        )
        cur.executemany(UPSERT_CLIENTE_SQL, [{"id": i, "tienda": t, "nombre": n, "email": e, "telefono": f}
                                             for i, t, n, e, f in CLIENTES])
        for pedido in PEDIDOS:
            importe = sum((pvp[sku] * unidades for sku, unidades in pedido.lineas), D("0"))
            cur.execute(
                UPSERT_PEDIDO_SQL,
                {
                    "id": pedido.id,
                    "cliente_id": pedido.cliente_id,
                    "tienda": tienda_de[pedido.cliente_id],
                    "dias_compra": pedido.dias_desde_compra,
                    "estado": pedido.estado,
                    "dias_entrega": pedido.dias_desde_entrega,
                    "importe": importe,
                },
            )
            cur.executemany(
                UPSERT_LINEA_SQL,
                [
                    {"pedido_id": pedido.id, "linea": n, "sku": sku, "unidades": u, "precio": pvp[sku]}
                    for n, (sku, u) in enumerate(pedido.lineas, start=1)
                ],
            )
        if "pedidos.codigo_postal" in columnas:
            _cargar_direcciones(cur)
        if "pedidos.enviado_en" in columnas:  # reenvíos: coherente con el estado y la entrega
            cur.executemany(FIJAR_ENVIO_SQL, [{"id": p.id, "dias": DIAS_DESDE_ENVIO.get(p.id)} for p in PEDIDOS])
        if "pedidos.referencia_pago" in columnas:
            cur.execute(FIJAR_REFERENCIA_PAGO_SQL, {"pedidos": [p.id for p in PEDIDOS]})
        cur.execute(BORRAR_DEVOLUCIONES_DEMO_SQL, {"pedidos": [p for p, *_ in DEVOLUCIONES]})
        cur.executemany(
            INSERT_DEVOLUCION_SQL,
            [
                {"pedido_id": p, "cliente_id": c, "tienda": tienda_de[c], "importe": i,
                 "motivo": m, "dias": d}
                for p, c, i, m, d in DEVOLUCIONES
            ],
        )
        _cargar_demos_de_carpetas(cur)
    return {
        "tiendas": len(TIENDAS),
        "productos": len(PRODUCTOS),
        "clientes": len(CLIENTES),
        "pedidos": len(PEDIDOS),
        "encargados": len(ENCARGADOS),
    }
