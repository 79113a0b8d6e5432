"""La política de modificar artículos: su valor por tienda, sus hechos y su frase.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` y ``HECHOS`` los de cada ``politicas.hechos.Hecho`` (expresiones SQL
escalares sobre ``t``, la tienda, y ``p``, el pedido del cliente). El defecto es el
``DEFAULT`` de ``operaciones/modificar_articulos/sql/045_modificar_articulos.sql``.

La variante nueva se busca entre las del mismo modelo que la línea (``variantes``): la talla
y el color pedidos, y lo que no se pide, como está (pedir la talla L de una camisa azul M es
la azul L); un color en femenino («blanca») es el de las variantes («blanco»). La misma búsqueda hacen la herramienta y la tarjeta.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero

__all__ = ["HECHOS", "VALORES", "texto_cliente"]

VALORES = (
    dict(
        nombre="umbral_modificacion_articulos", etiqueta="Diferencia máxima al modificar artículos sin firma",
        tipo="dinero", unidad="EUR", minimo=Decimal("0.00"), defecto=Decimal("60.00"), endurece="bajar",
        regla="modificar_articulos",
        descripcion="Cambiar la talla o el color de un artículo de un pedido sin enviar con una diferencia de "
                    "precio mayor (a cobrar o a devolver) pide firma."),
)

HECHOS = (
    # La línea que se modifica: su producto, lo pagado por unidad, su modelo y las otras
    # variantes de su modelo con stock en la tienda del pedido (para decir qué hay).
    dict(nombre="linea_modificacion", parametros=("linea",), sql=(
        "(SELECT jsonb_build_object('sku', l.sku, 'nombre', pr.nombre, 'precio', l.precio_unitario::text,"
        " 'unidades', l.unidades, 'modelo', v.modelo, 'talla', v.talla, 'color', v.color,"
        " 'opciones', (SELECT coalesce(jsonb_agg(concat_ws(' ', 'talla ' || o.talla, 'color ' || o.color)"
        " ORDER BY o.sku), '[]') FROM variantes o JOIN stock so ON so.sku = o.sku AND so.tienda = p.tienda"
        " WHERE o.modelo = v.modelo AND o.sku <> l.sku AND so.unidades > 0))"
        " FROM lineas_pedido l JOIN productos pr ON pr.sku = l.sku LEFT JOIN variantes v ON v.sku = l.sku"
        " WHERE l.pedido_id = p.id AND l.linea = %(linea)s::int)")),
    # La variante pedida del mismo modelo, con su precio y su stock en la tienda del pedido.
    dict(nombre="variante_modificacion", parametros=("linea", "talla", "color"), sql=(
        "(SELECT jsonb_build_object('sku', v2.sku, 'nombre', pn.nombre, 'pvp', pt.pvp::text,"
        " 'stock', coalesce(s.unidades, 0))"
        " FROM lineas_pedido l JOIN variantes v ON v.sku = l.sku JOIN variantes v2 ON v2.modelo = v.modelo"
        " AND upper(coalesce(v2.talla, '')) = upper(coalesce(nullif(trim(%(talla)s::text), ''), v.talla, ''))"
        " AND lower(coalesce(v2.color, '')) = lower(coalesce(regexp_replace(nullif(trim(%(color)s::text), ''),"
        " '^(blanc|negr|roj|amarill)a$', '\\1o', 'i'), v.color, ''))"
        " JOIN productos pn ON pn.sku = v2.sku"
        " LEFT JOIN precios_tienda pt ON pt.tienda = p.tienda AND pt.sku = v2.sku"
        " LEFT JOIN stock s ON s.tienda = p.tienda AND s.sku = v2.sku"
        " WHERE l.pedido_id = p.id AND l.linea = %(linea)s::int LIMIT 1)")),
)


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Su línea en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return (
        "- Cambio de talla o color antes del envío: en un pedido que aún no ha salido, un artículo se "
        "puede cambiar por otra talla o color del mismo producto si hay stock en la tienda; la diferencia "
        "de precio se cobra o se devuelve. Si la diferencia pasa de "
        f"{dinero.eur(valores['umbral_modificacion_articulos'])}, necesita la aprobación de un encargado. "
        "Un pedido ya enviado no se modifica: al recibirlo se puede cambiar o devolver."
    )
