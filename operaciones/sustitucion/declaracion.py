"""El cambio de un producto por otro (la operación «sustitucion»), con la diferencia liquidada por la pasarela."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo.defectos_operacion import DOS_FIRMAS_POR_DEFECTO, LIMITES_POR_DEFECTO
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

__all__ = ["OPERACION", "CAMBIO", "HISTORIAL_CAMBIOS_SQL", "INSTANTANEA_COBROS_SQL", "INSTANTANEA_SUSTITUCIONES_SQL", "TARJETA_CAMBIO_SQL"]


def _espera_cambio(args: Mapping[str, Any]) -> str:
    return (
        f"el cambio de {args.get('sku_original')} por {args.get('sku_nuevo')} "
        f"del pedido {args.get('pedido')}"
    )


HISTORIAL_CAMBIOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', s.numero, 'pedido', s.pedido_id, 'estado', s.estado, 'fecha', s.creada,
             'producto_original', po.nombre, 'producto_nuevo', pn.nombre)
             ORDER BY s.creada DESC)
            FROM sustituciones s
            JOIN productos po ON po.sku = s.sku_original
            JOIN productos pn ON pn.sku = s.sku_nuevo
            WHERE s.cliente_id = %(cliente)s
             AND s.creada >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_SUSTITUCIONES_SQL = """
SELECT pedido_id AS pedido, sku_original, sku_nuevo, diferencia
FROM sustituciones ORDER BY pedido_id, sku_original, sku_nuevo
"""
INSTANTANEA_COBROS_SQL = """
SELECT pedido_id AS pedido, importe, estado FROM cobros ORDER BY pedido_id, importe
"""

# Lo que la tarjeta del encargado añade a los argumentos (EnTarjeta). El precio del nuevo es
# el de la tienda del pedido (precios_tienda, sql/030), el mismo con el que se liquida.
TARJETA_CAMBIO_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j)
SELECT po.nombre AS "Producto original", l.precio_unitario AS "Pagado por unidad",
       pn.nombre AS "Producto nuevo", pt.pvp AS "Precio del nuevo",
       abs(pt.pvp - l.precio_unitario) AS "Diferencia",
       CASE WHEN l.precio_unitario IS NULL THEN 'el producto original no está en el pedido'
            WHEN pt.pvp IS NULL THEN 'ninguna: el producto nuevo no tiene precio en la tienda del pedido'
            WHEN pt.pvp > l.precio_unitario THEN 'la paga el cliente (cobro por la pasarela)'
            WHEN pt.pvp < l.precio_unitario THEN 'se le devuelve al cliente'
            ELSE 'ninguna: mismo precio' END AS "Quién paga la diferencia",
       coalesce((SELECT s.unidades FROM stock s WHERE s.tienda = p.tienda AND s.sku = pn.sku), 0)
           AS "Stock del nuevo en la tienda"
FROM a
JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
JOIN productos po ON po.sku = upper(trim(a.j ->> 'sku_original'))
JOIN productos pn ON pn.sku = upper(trim(a.j ->> 'sku_nuevo'))
LEFT JOIN precios_tienda pt ON pt.tienda = p.tienda AND pt.sku = pn.sku
LEFT JOIN LATERAL (SELECT lp.precio_unitario FROM lineas_pedido lp
                   WHERE lp.pedido_id = p.id AND lp.sku = po.sku ORDER BY lp.linea LIMIT 1) l ON true
"""

CAMBIO = OperacionConEfecto(
    nombre="sustitucion",
    herramientas=("sustituir",),
    regla="sustitucion",
    hechos=("pedido_existe", "sku_original_en_pedido", "pvp_original", "pvp_nuevo", "nombre_original", "nombre_nuevo",
            "elegibilidad",
            "libres_sku_original", "vales_pedido", "en_revision", "rechazadas_pedido"),
    matriz=EnMatriz(singular="este cambio", plural="cambios de producto",
                    limites=LIMITES_POR_DEFECTO, dos_firmas_por_encima=DOS_FIRMAS_POR_DEFECTO),
    # La diferencia se liquida por la pasarela: a favor, un reembolso; a cargo, un cobro.
    libro=EnLibro(tabla="sustituciones", prefijo="SU", importe="diferencia", creado="creada",
                  movimientos=("reembolso", "cobro"), compensa="sustitucion_id"),
    titulo="Cambio de producto",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="sku_original", etiqueta="Producto original"),
        Campo(nombre="sku_nuevo", etiqueta="Producto nuevo"),
    ),
    historial=EnHistorial(clave="cambios", etiqueta="Cambio", plural="cambios",
                          detalle="{pedido} · {producto_original} → {producto_nuevo}",
                          sql=HISTORIAL_CAMBIOS_SQL),
    texto_espera=_espera_cambio,
    offline=Offline(intencion="cambio", patron=r"\b(?:cambi\w*|sustitu\w*|reemplaz\w*)",
                    palabra="cambio", clave_numero="sustitucion"),
    instantanea=EnInstantanea(
        tablas={"sustituciones": INSTANTANEA_SUSTITUCIONES_SQL, "cobros": INSTANTANEA_COBROS_SQL},
        numeros=(
            Numeracion(marcador="sustitucion", prefijo="SU", sql="SELECT numero, id FROM sustituciones"),
            Numeracion(marcador="diferencia", prefijo="RE",
                       sql="SELECT numero, id FROM reembolsos WHERE concepto IN ('diferencia', 'anulacion')"),
            Numeracion(marcador="cobro", prefijo="CO", sql="SELECT numero, id FROM cobros"),
        ),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_CAMBIO_SQL, dinero=("Pagado por unidad", "Precio del nuevo", "Diferencia")),
)

OPERACION = CAMBIO
