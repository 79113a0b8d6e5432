"""Modificar los artículos de un pedido pendiente (issue 41, séptima operación;
``operaciones/modificar_articulos/sql/045_modificar_articulos.sql``).

Antes del envío, una unidad de una línea se cambia por otra variante del mismo producto
(talla, color) con stock en la tienda del pedido; la diferencia de precio se cobra o se
devuelve una vez por la pasarela.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo.operacion import (
    Campo,
    EnHistorial,
    EnInstantanea,
    EnLibro,
    EnMatriz,
    EnTarjeta,
    Numeracion,
    Offline,
    OperacionConEfecto,
)

__all__ = ["HISTORIAL_MODIFICACIONES_SQL", "INSTANTANEA_MODIFICACIONES_SQL", "MODIFICACION", "OPERACION",
           "TARJETA_MODIFICACION_SQL", "UMBRAL_DEFECTO"]

# El DEFAULT de politicas_tienda.umbral_modificacion_articulos (sql/045 y politica.py).
UMBRAL_DEFECTO = Decimal("60.00")


def _espera(args: Mapping[str, Any]) -> str:
    """«el cambio de la línea 1 del pedido P-… a la talla L» / «… al color coñac»."""
    partes = [f"{articulo} {que} {args[que]}" for que, articulo in (("talla", "la"), ("color", "el")) if args.get(que)]
    destino = f" a {' y '.join(partes)}".replace(" a el ", " al ") if partes else " a otra talla o color"
    return f"el cambio de la línea {args.get('linea')} del pedido {args.get('pedido')}{destino}"


HISTORIAL_MODIFICACIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', m.numero, 'pedido', m.pedido_id, 'fecha', m.creada,
             'producto_original', po.nombre, 'producto_nuevo', pn.nombre)
             ORDER BY m.creada DESC)
            FROM modificaciones_articulos m
            JOIN productos po ON po.sku = m.sku_original
            JOIN productos pn ON pn.sku = m.sku_nuevo
            WHERE m.cliente_id = %(cliente)s
             AND m.creada >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_MODIFICACIONES_SQL = """
SELECT pedido_id AS pedido, linea, sku_original, sku_nuevo, diferencia, liquidacion
FROM modificaciones_articulos ORDER BY pedido_id, linea, sku_original, sku_nuevo
"""

# Lo que ve el encargado al firmar, además de los argumentos: la prenda de ahora y la nueva
# por su nombre, lo pagado, el precio de la nueva en la tienda del pedido, la diferencia y
# quién la paga, y el stock. La variante se busca igual que la regla y la herramienta.
TARJETA_MODIFICACION_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j)
SELECT po.nombre AS "Artículo actual", l.precio_unitario AS "Pagado por la unidad",
       pn.nombre AS "Artículo nuevo", pt.pvp AS "Precio del nuevo",
       abs(pt.pvp - l.precio_unitario) AS "Diferencia",
       CASE WHEN pt.pvp IS NULL THEN 'ninguna: el artículo nuevo no tiene precio en la tienda del pedido'
            WHEN pt.pvp > l.precio_unitario THEN 'la paga el cliente (cobro por la pasarela)'
            WHEN pt.pvp < l.precio_unitario THEN 'se le devuelve al cliente'
            ELSE 'ninguna: mismo precio' END AS "Quién paga la diferencia",
       coalesce(s.unidades, 0) AS "Stock del nuevo en la tienda",
       p.estado AS "Estado del pedido"
FROM a
JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
JOIN lineas_pedido l ON l.pedido_id = p.id AND l.linea::text = a.j ->> 'linea'
JOIN productos po ON po.sku = l.sku
JOIN variantes v ON v.sku = l.sku
JOIN variantes v2 ON v2.modelo = v.modelo
     AND upper(coalesce(v2.talla, '')) = upper(coalesce(nullif(trim(a.j ->> 'talla'), ''), v.talla, ''))
     AND lower(coalesce(v2.color, '')) = lower(coalesce(regexp_replace(nullif(trim(a.j ->> 'color'), ''),
                                                                      '^(blanc|negr|roj|amarill)a$', '\\1o', 'i'),
                                                       v.color, ''))
JOIN productos pn ON pn.sku = v2.sku
LEFT JOIN precios_tienda pt ON pt.tienda = p.tienda AND pt.sku = v2.sku
LEFT JOIN stock s ON s.tienda = p.tienda AND s.sku = v2.sku
LIMIT 1
"""

MODIFICACION = OperacionConEfecto(
    nombre="modificar_articulos",
    herramientas=("modificar_articulos",),
    regla="modificar_articulos",
    hechos=("pedido_existe", "estado_pedido", "linea_modificacion", "variante_modificacion", "en_revision",
            "rechazadas_pedido"),
    matriz=EnMatriz(singular="esta modificación de artículos", plural="modificaciones de artículos",
                    limites={"encargado": Decimal("1000.00"), "gerente": None, "regional": None}),
    # La diferencia por la pasarela: a favor del cliente, un reembolso (concepto «modificacion»);
    # a su cargo, un cobro. No ocupa unidades del libro: el pedido aún no ha salido.
    libro=EnLibro(tabla="modificaciones_articulos", prefijo="MA", importe="diferencia", creado="creada",
                  movimientos=("reembolso", "cobro"), conceptos=("modificacion",), antes_del_envio=True,
                  reserva=True),
    titulo="Modificación de artículos de un pedido sin enviar",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="linea", etiqueta="Línea del pedido"),
        Campo(nombre="talla", etiqueta="Talla nueva"),
        Campo(nombre="color", etiqueta="Color nuevo"),
    ),
    historial=EnHistorial(clave="modificaciones", etiqueta="Modificación de artículos",
                          plural="modificaciones de artículos",
                          detalle="{pedido} · {producto_original} → {producto_nuevo}",
                          sql=HISTORIAL_MODIFICACIONES_SQL),
    texto_espera=_espera,
    offline=Offline(
        intencion="modificar_articulos",
        # «cámbiamelo a la talla L», «lo quiero en color azul», «¿me lo podéis cambiar a la L?»:
        # empieza donde el verbo para que la cláusula no se lea también como cambio de producto.
        patron=(r"\b(?:cambi\w*|modific\w*|pas\w*|pon\w*|quier\w*|prefer\w*|prefier\w*)\s+"
                r"(?:[\w-]+\s+){0,6}?(?:(?:a|en|por)\s+)?(?:la\s+|una\s+|el\s+)?(?:talla|color)\b"
                r"|\b(?:cambi\w*|modific\w*)\s+(?:[\w-]+\s+){0,4}?(?:la\s+)?(?:talla|color)\b"),
        palabra="cambio de talla o color", clave_numero="modificacion"),
    instantanea=EnInstantanea(
        tablas={"modificaciones_articulos": INSTANTANEA_MODIFICACIONES_SQL},
        numeros=(Numeracion(marcador="modificacion", prefijo="MA",
                            sql="SELECT numero, id FROM modificaciones_articulos"),),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_MODIFICACION_SQL, dinero=("Pagado por la unidad", "Precio del nuevo", "Diferencia")),
)

OPERACION = MODIFICACION
