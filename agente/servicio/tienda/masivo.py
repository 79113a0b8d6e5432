"""Los pedidos (y los clientes) seguidos de un lote, en bloque: cuatro sentencias por bloque
en lugar de cinco viajes por pedido (``agente importar`` de 100.000 pedidos,
``docs/rendimiento.md``). Los clientes, igual: una lectura, un ``INSERT`` y las versiones.

Una lectura para todo el bloque da lo que ya existe y la huella de su última versión: los
que llegan iguales son ``sin_cambios`` (repetir un lote es barato) y los demás, si son
nuevos, con su cliente y sus productos ya en la base y sin ids repetidos, se insertan en
bloque: lo mismo que haría ``aplicar_pedido`` uno a uno (coherencia, huella, versión 1).
Si alguno no cumple, el bloque entero va uno a uno por ``aplicar_pedido``, que da el motivo
exacto de cada rechazo. Los parámetros van en binario (``%(x)b``): volcar listas grandes
en texto cuesta más que mandarlas.
"""

from __future__ import annotations

from decimal import Decimal

from agente.servicio.tienda.aplicar import Aplicado, aplicar_cliente, aplicar_pedido
from agente.servicio.tienda.registros import coherencia, huella
from nucleo.direcciones import provincia_de

__all__ = ["aplicar_clientes_nuevos", "aplicar_pedidos_nuevos"]

# Lo que impide el camino en bloque: pedidos que ya existen, clientes o productos que faltan.
COMPROBAR_SQL = """
SELECT (SELECT coalesce(json_object_agg(id, json_build_array(version, huella)), '{}')
        FROM ingesta_registros WHERE tipo = 'pedido' AND tienda = %(tienda)s AND id = ANY(%(ids)s::text[])) AS previas,
       array(SELECT id FROM pedidos WHERE id = ANY(%(ids)s::text[])) AS existen,
       EXISTS (SELECT 1 FROM unnest(%(clientes)s::text[]) AS c
               WHERE NOT EXISTS (SELECT 1 FROM clientes WHERE id = c AND tienda = %(tienda)s)) AS falta_cliente,
       EXISTS (SELECT 1 FROM unnest(%(skus)s::text[]) AS s
               WHERE NOT EXISTS (SELECT 1 FROM productos WHERE sku = s)) AS falta_producto
"""
INSERTAR_PEDIDOS_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, enviado_en, entregado_en, importe,
                     calle, codigo_postal, localidad, provincia, referencia_pago, metodo_pago)
SELECT id, cliente_id, %(tienda)s, fecha, estado, enviado_en, entregado_en, importe,
       calle, codigo_postal, localidad, provincia, referencia_pago, coalesce(metodo_pago, 'tarjeta')
FROM unnest(%(ids)b::text[], %(clientes)b::text[], %(fechas)b::timestamptz[], %(estados)b::text[],
            %(enviados)b::timestamptz[], %(entregados)b::timestamptz[], %(importes)b::numeric[],
            %(calles)b::text[], %(cps)b::text[], %(localidades)b::text[], %(provincias)b::text[],
            %(referencias)b::text[], %(metodos)b::text[])
     AS t(id, cliente_id, fecha, estado, enviado_en, entregado_en, importe, calle, codigo_postal,
          localidad, provincia, referencia_pago, metodo_pago)
"""
INSERTAR_LINEAS_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
SELECT * FROM unnest(%(pedidos)b::text[], %(lineas)b::int[], %(skus)b::text[], %(unidades)b::int[],
                     %(precios)b::numeric[])
"""
VERSIONES_SQL = """
WITH d AS (SELECT * FROM unnest(%(ids)b::text[], %(huellas)b::text[], %(datos)b::text[]) AS t(id, huella, datos)),
r AS (
    INSERT INTO ingesta_registros (tipo, tienda, id, version, huella)
    SELECT %(tipo)s, %(tienda)s, id, 1, huella FROM d
    ON CONFLICT (tipo, tienda, id) DO UPDATE
    SET version = ingesta_registros.version + 1, huella = EXCLUDED.huella, actualizado = now()
    RETURNING id, version
)
INSERT INTO ingesta_versiones (tipo, tienda, id, version, huella, datos, clave)
SELECT %(tipo)s, %(tienda)s, d.id, r.version, d.huella, d.datos::jsonb, %(clave)s FROM d JOIN r USING (id)
RETURNING id, version
"""


def aplicar_pedidos_nuevos(cur, tienda: str, pedidos: list, clave: str | None) -> list[Aplicado]:
    """Aplica ``pedidos`` (registros de lote de tipo pedido, en orden) y devuelve lo hecho.

    Los que llegan con la misma huella que su última versión no cambian nada (una lectura
    para todo el bloque: repetir un lote es barato); los demás, en bloque si son nuevos."""
    if not pedidos:
        return []
    for p in pedidos:
        coherencia(p)
    ids = [p.id for p in pedidos]
    skus = sorted({lin.sku for p in pedidos for lin in p.lineas})
    comprobado = cur.execute(COMPROBAR_SQL, {"ids": ids, "clientes": sorted({p.cliente_id for p in pedidos}),
                                             "skus": skus, "tienda": tienda}).fetchone()
    previas = comprobado["previas"]
    huellas = [huella(p) for p in pedidos]
    iguales = {p.id for p, (h, _) in zip(pedidos, huellas, strict=True)
               if p.id in previas and previas[p.id][1] == h}
    if len(set(ids)) != len(ids) or (set(comprobado["existen"]) - iguales) or (
            len(iguales) < len(ids) and (comprobado["falta_cliente"] or comprobado["falta_producto"])):
        return [aplicar_pedido(cur, tienda, p.id, p, clave) for p in pedidos]
    hechos = {i: Aplicado("pedido", i, "sin_cambios", previas[i][0]) for i in iguales}
    nuevos = [(p, h) for p, h in zip(pedidos, huellas, strict=True) if p.id not in iguales]
    if nuevos:
        hechos.update(_insertar(cur, tienda, [p for p, _ in nuevos], [h for _, h in nuevos], clave))
    return [hechos[i] for i in ids]


def _insertar(cur, tienda: str, pedidos: list, huellas: list, clave: str | None) -> dict[str, Aplicado]:
    ids = [p.id for p in pedidos]
    d = [p.direccion_envio for p in pedidos]
    cur.execute(INSERTAR_PEDIDOS_SQL, {
        "tienda": tienda, "ids": ids, "clientes": [p.cliente_id for p in pedidos],
        "fechas": [p.fecha for p in pedidos], "estados": [p.estado for p in pedidos],
        "enviados": [p.enviado_en for p in pedidos], "entregados": [p.entregado_en for p in pedidos],
        "importes": [sum((Decimal(lin.precio_unitario) * lin.unidades for lin in p.lineas), Decimal("0"))
                     for p in pedidos],
        "calles": [x.calle if x else None for x in d], "cps": [x.codigo_postal if x else None for x in d],
        "localidades": [x.localidad if x else None for x in d],
        "provincias": [provincia_de(x.codigo_postal) if x else None for x in d],
        "referencias": [p.referencia_pago for p in pedidos],
        "metodos": [p.metodo_pago for p in pedidos],
    })
    lineas = [(p.id, lin) for p in pedidos for lin in p.lineas]
    cur.execute(INSERTAR_LINEAS_SQL, {
        "pedidos": [i for i, _ in lineas], "lineas": [lin.linea for _, lin in lineas],
        "skus": [lin.sku for _, lin in lineas], "unidades": [lin.unidades for _, lin in lineas],
        "precios": [Decimal(lin.precio_unitario) for _, lin in lineas]})
    return _versiones(cur, "pedido", tienda, ids, huellas, clave)


def _versiones(cur, tipo: str, tienda: str, ids: list[str], huellas: list, clave: str | None) -> dict[str, Aplicado]:
    versiones = {f["id"]: f["version"] for f in cur.execute(VERSIONES_SQL, {
        "tipo": tipo, "tienda": tienda, "ids": ids, "huellas": [h for h, _ in huellas],
        "datos": [cuerpo for _, cuerpo in huellas], "clave": clave}).fetchall()}
    return {i: Aplicado(tipo, i, "creado", versiones[i]) for i in ids}


# Clientes seguidos de un lote: lo mismo (lo igual, en una lectura; lo nuevo, en bloque).
COMPROBAR_CLIENTES_SQL = """
SELECT (SELECT coalesce(json_object_agg(id, json_build_array(version, huella)), '{}')
        FROM ingesta_registros WHERE tipo = 'cliente' AND tienda = %(tienda)s AND id = ANY(%(ids)s::text[])) AS previas,
       array(SELECT id FROM clientes WHERE id = ANY(%(ids)s::text[])) AS existen
"""
INSERTAR_CLIENTES_SQL = """
INSERT INTO clientes (id, tienda, nombre, email, telefono, calle, codigo_postal, localidad, provincia)
SELECT id, %(tienda)s, nombre, email, telefono, calle, codigo_postal, localidad, provincia
FROM unnest(%(ids)b::text[], %(nombres)b::text[], %(emails)b::text[], %(telefonos)b::text[],
            %(calles)b::text[], %(cps)b::text[], %(localidades)b::text[], %(provincias)b::text[])
     AS t(id, nombre, email, telefono, calle, codigo_postal, localidad, provincia)
"""


def aplicar_clientes_nuevos(cur, tienda: str, clientes: list, clave: str | None) -> list[Aplicado]:
    """Aplica ``clientes`` (registros de lote de tipo cliente, en orden) y devuelve lo hecho."""
    if not clientes:
        return []
    ids = [c.id for c in clientes]
    comprobado = cur.execute(COMPROBAR_CLIENTES_SQL, {"ids": ids, "tienda": tienda}).fetchone()
    previas = comprobado["previas"]
    huellas = [huella(c) for c in clientes]
    iguales = {c.id for c, (h, _) in zip(clientes, huellas, strict=True)
               if c.id in previas and previas[c.id][1] == h}
    if len(set(ids)) != len(ids) or (set(comprobado["existen"]) - iguales):
        return [aplicar_cliente(cur, tienda, c.id, c, clave) for c in clientes]
    hechos = {i: Aplicado("cliente", i, "sin_cambios", previas[i][0]) for i in iguales}
    nuevos = [(c, h) for c, h in zip(clientes, huellas, strict=True) if c.id not in iguales]
    if nuevos:
        d = [c.direccion for c, _ in nuevos]
        cur.execute(INSERTAR_CLIENTES_SQL, {
            "tienda": tienda, "ids": [c.id for c, _ in nuevos], "nombres": [c.nombre for c, _ in nuevos],
            "emails": [c.email for c, _ in nuevos], "telefonos": [c.telefono for c, _ in nuevos],
            "calles": [x.calle if x else None for x in d], "cps": [x.codigo_postal if x else None for x in d],
            "localidades": [x.localidad if x else None for x in d],
            "provincias": [provincia_de(x.codigo_postal) if x else None for x in d]})
        hechos.update(_versiones(cur, "cliente", tienda, [c.id for c, _ in nuevos], [h for _, h in nuevos], clave))
    return [hechos[i] for i in ids]
