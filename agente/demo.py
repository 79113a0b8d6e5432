"""Catálogo de demostración: dos tiendas, 25 productos, 12 clientes, 30+ pedidos, y las
personas que firman (encargados, un gerente y una regional) con sus contactos de aviso.

Los identificadores son fijos (README, docs y tests los nombran); las fechas son
relativas a hoy para que la demo no caduque. Cargar dos veces deja lo mismo:
cada fila se inserta con ``ON CONFLICT DO UPDATE`` y las fechas se recalculan.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from agente.nucleo.direcciones import provincia_de

D = Decimal

TIENDAS = [("talavera", "Talavera de la Reina"), ("madrid-centro", "Madrid-Centro")]

ENCARGADOS = [
    ("enc-talavera", "talavera", "Lucía Moreno", True),
    ("enc-madrid-centro", "madrid-centro", "Javier Ortega", True),
    ("enc-talavera-baja", "talavera", "Pedro Sanz (de baja)", False),
    ("enc-talavera-2", "talavera", "Sergio Alonso", True),
    ("ger-talavera", "talavera", "Marta Jiménez", True),
    ("reg-centro", "madrid-centro", "Beatriz Romero", True),
]

# Rol de quien firma (sql/008; si no está aquí, «encargado») y tiendas de cada regional.
ROLES = {"ger-talavera": "gerente", "reg-centro": "regional"}
TIENDAS_REGIONALES = [("reg-centro", "talavera"), ("reg-centro", "madrid-centro")]

# El correo de cada persona: entra con él (OIDC o enlace, sql/021) y es su contacto de aviso
# (también la de baja: no se le avisa por estar inactiva, no por faltarle contacto).
EMAILS = {i: f"{i}@tienda.example" for i, *_ in ENCARGADOS}
CONTACTOS = [(i, "email", EMAILS[i]) for i, *_ in ENCARGADOS]

# sku, nombre, categoria, pvp (el mismo en las dos tiendas, precios_tienda: sql/030)
PRODUCTOS = [
    ("CAF-001", "Cafetera de goteo Aroma 10 tazas", "cafeteras", D("120.00")),
    ("CAF-002", "Cafetera italiana Moka 6 tazas", "cafeteras", D("29.90")),
    ("CAF-003", "Cafetera espresso Crema 15 bar", "cafeteras", D("120.00")),
    ("CAF-004", "Cafetera superautomática Barista", "cafeteras", D("249.00")),
    ("CAF-005", "Cafetera de cápsulas Mini", "cafeteras", D("69.00")),
    ("MEN-001", "Sartén antiadherente 24 cm", "menaje", D("24.90")),
    ("MEN-002", "Sartén antiadherente 20 cm", "menaje", D("19.90")),
    ("MEN-003", "Sartén inducción Pro 24 cm", "menaje", D("24.90")),
    ("MEN-004", "Sartén honda 28 cm", "menaje", D("34.90")),
    ("MEN-005", "Juego de 3 cuchillos", "menaje", D("45.00")),
    ("TEX-001", "Toalla de baño algodón", "textil", D("15.00")),
    ("TEX-002", "Juego de sábanas 90 cm", "textil", D("35.00")),
    ("TEX-003", "Juego de sábanas 135 cm", "textil", D("45.00")),
    ("TEX-004", "Nórdico 150 cm", "textil", D("59.00")),
    ("TEX-005", "Cojín decorativo", "textil", D("12.00")),
    ("ILU-001", "Lámpara de mesa Nube", "iluminacion", D("40.00")),
    ("ILU-002", "Flexo LED articulado", "iluminacion", D("30.00")),
    ("ILU-003", "Lámpara de pie Arco", "iluminacion", D("40.00")),
    ("ILU-004", "Pack 4 bombillas LED", "iluminacion", D("9.90")),
    ("ELE-001", "Batidora de vaso 600 W", "electrodomesticos", D("30.00")),
    ("ELE-002", "Tostadora 2 ranuras", "electrodomesticos", D("25.00")),
    ("ELE-003", "Exprimidor eléctrico", "electrodomesticos", D("30.00")),
    ("ELE-004", "Hervidor de agua 1,7 l", "electrodomesticos", D("35.00")),
    ("REP-001", "Jarra de repuesto para cafetera Aroma", "repuestos", D("14.90")),
    # Vale de compensación (issue 27): una línea de 99,00 EUR, sola en su categoría.
    ("VAJ-001", "Vajilla de porcelana 18 piezas", "vajilla", D("99.00")),
]

# Stock por tienda; REP-001 está agotado en las dos (sin alternativa posible).
STOCK_POR_DEFECTO = 8
STOCK_ESPECIAL = {
    ("talavera", "REP-001"): 0,
    ("madrid-centro", "REP-001"): 0,
    ("talavera", "CAF-004"): 2,
    ("madrid-centro", "TEX-004"): 0,
}

# id, tienda, nombre, email, telefono
CLIENTES = [
    ("C-0001", "talavera", "Ana García López", "ana.garcia@example.com", "+34 600 111 001"),
    ("C-0002", "talavera", "Bruno Díaz Martín", "bruno.diaz@example.com", "+34 600 111 002"),
    ("C-0003", "madrid-centro", "Carmen Ruiz Gómez", "carmen.ruiz@example.com", "+34 600 111 003"),
    ("C-0004", "madrid-centro", "David Fernández Gil", "david.fernandez@example.com", "+34 600 111 004"),
    ("C-0005", "talavera", "Elena Navarro Ramos", "elena.navarro@example.com", "+34 600 111 005"),
    ("C-0006", "talavera", "Fernando Torres Vidal", "fernando.torres@example.com", "+34 600 111 006"),
    ("C-0007", "madrid-centro", "Gloria Herrera Castro", "gloria.herrera@example.com", "+34 600 111 007"),
    ("C-0008", "madrid-centro", "Hugo Molina Ortiz", "hugo.molina@example.com", "+34 600 111 008"),
    ("C-0009", "talavera", "Irene Delgado Serrano", "irene.delgado@example.com", "+34 600 111 009"),
    ("C-0010", "madrid-centro", "Jorge Castillo Rubio", "jorge.castillo@example.com", "+34 600 111 010"),
    ("C-0011", "talavera", "Laura Ibáñez Pascual", "laura.ibanez@example.com", "+34 600 111 011"),
    ("C-0012", "madrid-centro", "Marcos Vega Prieto", "marcos.vega@example.com", "+34 600 111 012"),
]


@dataclass(frozen=True)
class PedidoDemo:
    id: str
    cliente_id: str
    dias_desde_compra: int
    estado: str
    dias_desde_entrega: int | None
    lineas: tuple[tuple[str, int], ...]  # (sku, unidades); precio = pvp de la tienda


PEDIDOS_CLAVE = [
    # 120 EUR, cafetera, entregado hace 4 días: reembolso necesita encargado (importe).
    PedidoDemo("P-20260917-0041", "C-0001", 9, "entregado", 4, (("CAF-001", 1),)),
    # 24,90 EUR entregado hace 3 días, cliente sin devoluciones: reembolso sin firma.
    PedidoDemo("P-20260920-0102", "C-0002", 7, "entregado", 3, (("MEN-001", 1),)),
    # 35 EUR entregado hace 45 días: necesita encargado (antigüedad de la entrega).
    PedidoDemo("P-20260801-0007", "C-0003", 50, "entregado", 45, (("TEX-002", 1),)),
    # 40 EUR aún no entregado.
    PedidoDemo("P-20260925-0150", "C-0004", 2, "enviado", None, (("ILU-001", 1),)),
    # 30 EUR entregado hace 5 días, cliente con 2 devoluciones en 30 días.
    PedidoDemo("P-20260922-0077", "C-0005", 8, "entregado", 5, (("ELE-001", 1),)),
    # Jarra de repuesto: sin alternativa en stock en su categoría.
    PedidoDemo("P-20260919-0055", "C-0001", 6, "entregado", 2, (("REP-001", 1),)),
    # 350 EUR entregado hace 2 días: el reembolso supera los 300 EUR del encargado (gerente).
    PedidoDemo(
        "P-20261005-0350", "C-0009", 6, "entregado", 2,
        (("CAF-004", 1), ("TEX-004", 1), ("ILU-002", 1), ("TEX-005", 1)),
    ),
    # 650 EUR entregado hace 3 días: más de 500 EUR, dos firmas (una de gerente o regional).
    PedidoDemo(
        "P-20261006-0650", "C-0006", 7, "entregado", 3,
        (("CAF-004", 2), ("CAF-005", 1), ("TEX-004", 1), ("TEX-005", 2)),
    ),
]

PEDIDOS_RELLENO = [
    PedidoDemo("P-20260901-0011", "C-0005", 28, "entregado", 25, (("TEX-001", 2),)),
    PedidoDemo("P-20260905-0019", "C-0005", 24, "entregado", 20, (("ILU-004", 1),)),
    PedidoDemo("P-20260910-0021", "C-0002", 40, "entregado", 36, (("ELE-002", 1),)),
    PedidoDemo("P-20260911-0022", "C-0006", 12, "entregado", 8, (("MEN-002", 1), ("TEX-005", 2))),
    PedidoDemo("P-20260912-0023", "C-0006", 3, "pendiente", None, (("CAF-005", 1),)),
    PedidoDemo("P-20260913-0024", "C-0007", 15, "entregado", 11, (("TEX-003", 1),)),
    PedidoDemo("P-20260914-0025", "C-0007", 1, "pendiente", None, (("ILU-002", 1),)),
    PedidoDemo("P-20260915-0026", "C-0008", 20, "entregado", 16, (("ELE-004", 1), ("ILU-004", 2))),
    PedidoDemo("P-20260916-0027", "C-0008", 4, "enviado", None, (("MEN-004", 1),)),
    PedidoDemo("P-20260917-0028", "C-0009", 10, "entregado", 6, (("CAF-002", 1),)),
    PedidoDemo("P-20260918-0029", "C-0009", 60, "entregado", 55, (("TEX-004", 1),)),
    PedidoDemo("P-20260919-0030", "C-0010", 14, "entregado", 9, (("ILU-003", 1),)),
    PedidoDemo("P-20260920-0031", "C-0010", 5, "cancelado", None, (("ELE-003", 1),)),
    PedidoDemo("P-20260921-0032", "C-0011", 11, "entregado", 7, (("MEN-005", 1),)),
    PedidoDemo("P-20260922-0033", "C-0011", 2, "enviado", None, (("TEX-001", 4),)),
    PedidoDemo("P-20260923-0034", "C-0012", 18, "entregado", 13, (("CAF-003", 1),)),
    PedidoDemo("P-20260924-0035", "C-0012", 6, "entregado", 1, (("ELE-002", 1), ("MEN-002", 1))),
    PedidoDemo("P-20260925-0036", "C-0001", 35, "entregado", 31, (("TEX-005", 3),)),
    PedidoDemo("P-20260926-0037", "C-0003", 9, "entregado", 5, (("ILU-002", 1),)),
    PedidoDemo("P-20260927-0038", "C-0004", 25, "entregado", 21, (("MEN-003", 2),)),
    PedidoDemo("P-20260928-0039", "C-0002", 3, "pendiente", None, (("TEX-002", 1),)),
    PedidoDemo("P-20260929-0040", "C-0006", 45, "entregado", 40, (("ELE-001", 1),)),
    PedidoDemo("P-20260930-0042", "C-0007", 7, "entregado", 2, (("CAF-002", 2),)),
    PedidoDemo("P-20261001-0043", "C-0008", 16, "entregado", 12, (("TEX-003", 1), ("TEX-005", 1))),
    PedidoDemo("P-20261002-0044", "C-0009", 1, "pendiente", None, (("ILU-001", 1),)),
    PedidoDemo("P-20261003-0045", "C-0010", 30, "entregado", 26, (("MEN-001", 2),)),
    PedidoDemo("P-20261004-0046", "C-0011", 22, "entregado", 18, (("ELE-004", 1),)),
]

# Cancelar un pedido sin enviar (issue 27): 25 EUR sale solo; 420 EUR pide firma y, por la
# matriz por defecto (encargado hasta 300 EUR), un gerente. P-20260925-0150 (enviado) no se
# cancela: el cliente lee qué puede hacer.
PEDIDOS_CANCELACION = [
    PedidoDemo("P-20261008-0201", "C-0002", 1, "pendiente", None, (("ELE-002", 1),)),
    PedidoDemo("P-20261009-0420", "C-0011", 1, "pendiente", None, (("CAF-001", 3), ("ILU-002", 2))),
]

# Vale de compensación (issue 27): entregado hace 2 días, una línea de 99,00 EUR. «Llegó con
# un arañazo, no quiero devolverlo» -> un vale de 9,90 EUR sin firma; 30 EUR -> un encargado.
PEDIDOS_VALE = [
    PedidoDemo("P-20261012-0099", "C-0003", 4, "entregado", 2, (("VAJ-001", 1),)),
]

# -- Reenvíos (issue 27, sql/017): pedidos enviados y cuándo salieron ----------------------
PEDIDOS_REENVIO = [
    # Lámpara de 40 EUR enviada hace 6 días (más de los 3 de reparto): «no me ha llegado» ->
    # se reenvía sola (Madrid-Centro tiene stock).
    PedidoDemo("P-20261010-0300", "C-0012", 7, "enviado", None, (("ILU-001", 1),)),
    # Cuchillos enviados ayer: aún no llegan tarde; no se reenvía nada.
    PedidoDemo("P-20261011-0310", "C-0008", 2, "enviado", None, (("MEN-005", 1),)),
    # Cafetera de 120 EUR enviada hace 8 días: el reenvío pasa del límite (50 EUR): encargado.
    PedidoDemo("P-20261009-0120", "C-0010", 9, "enviado", None, (("CAF-001", 1),)),
]
# Días desde el envío de los pedidos enviados que lo necesitan fijo; el resto de pedidos
# enviados o entregados salió el día después de la compra (nunca después de la entrega).
DIAS_DESDE_ENVIO = {"P-20261010-0300": 6, "P-20261011-0310": 1, "P-20261009-0120": 8}

PEDIDOS = PEDIDOS_CLAVE + PEDIDOS_RELLENO + PEDIDOS_CANCELACION + PEDIDOS_VALE + PEDIDOS_REENVIO

# Devoluciones históricas (ya resueltas fuera del agente): C-0005 tiene dos recientes.
DEVOLUCIONES = [
    ("P-20260901-0011", "C-0005", D("15.00"), "La toalla destiñe", 10),
    ("P-20260905-0019", "C-0005", D("9.90"), "Bombillas fundidas", 20),
    ("P-20260910-0021", "C-0002", D("25.00"), "No la usaba", 34),
]

# -- direcciones de envío (issue 27, cambio de dirección) ---------------------------------------
# Cada cliente vive cerca de su tienda (Talavera: 45600, provincia de Toledo; Madrid-Centro:
# 280xx, Madrid); sus pedidos se envían a su dirección. La provincia sale del código postal.
DIRECCIONES_CLIENTES = {
    "C-0001": ("Calle del Prado 12, 3º A", "45600", "Talavera de la Reina"),
    "C-0002": ("Avenida de Portugal 41", "45600", "Talavera de la Reina"),
    "C-0003": ("Calle de Atocha 23, 1º", "28012", "Madrid"),
    "C-0004": ("Calle de Toledo 68, 4º D", "28005", "Madrid"),
    "C-0005": ("Calle San Francisco 7", "45600", "Talavera de la Reina"),
    "C-0006": ("Plaza del Pan 3", "45600", "Talavera de la Reina"),
    "C-0007": ("Calle de Fuencarral 101, 2º B", "28004", "Madrid"),
    "C-0008": ("Calle del Arenal 9", "28013", "Madrid"),
    "C-0009": ("Calle Carnicerías 15", "45600", "Talavera de la Reina"),
    "C-0010": ("Calle de Hortaleza 55, bajo", "28004", "Madrid"),
    "C-0011": ("Avenida de Extremadura 20", "45600", "Talavera de la Reina"),
    "C-0012": ("Calle de Alcalá 120, 5º", "28009", "Madrid"),
}
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


def cargar_demo(conexion: psycopg.Connection) -> dict[str, int]:
    """Carga (o refresca) el catálogo de demo en una transacción. Devuelve recuentos."""
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
    return {
        "tiendas": len(TIENDAS),
        "productos": len(PRODUCTOS),
        "clientes": len(CLIENTES),
        "pedidos": len(PEDIDOS),
        "encargados": len(ENCARGADOS),
    }
