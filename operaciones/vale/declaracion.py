"""La declaración del vale de compensación (issue 27; sql/018_vale.sql): solo importa ``nucleo``."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo.defectos_operacion import importe_legible
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

__all__ = ["OPERACION", "HISTORIAL_VALES_SQL", "INSTANTANEA_VALES_SQL", "TARJETA_VALE_SQL", "VALE", "VALE_DIAS_CADUCIDAD_DEFECTO", "VALE_IMPORTE_MAX_DEFECTO", "VALE_PORCENTAJE_MAX_DEFECTO", "VALE_VENTANA_DIAS"]


# Los defectos de la política (politicas.valores los declara con su dominio) y la ventana
# de «un vale por cliente»: los lee también el modelo offline para proponer un importe.
VALE_PORCENTAJE_MAX_DEFECTO = 10
VALE_IMPORTE_MAX_DEFECTO = Decimal("10.00")
VALE_DIAS_CADUCIDAD_DEFECTO = 365
VALE_VENTANA_DIAS = 90


def _espera_vale(args: Mapping[str, Any]) -> str:
    importe = importe_legible(args) or "el importe indicado"
    return f"el vale de compensación de {importe} por el pedido {args.get('pedido')}"


HISTORIAL_VALES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', v.numero, 'pedido', v.pedido_id, 'importe', v.importe::text,
             'estado', v.estado, 'caduca', v.caduca, 'motivo', v.motivo, 'fecha', v.creado)
             ORDER BY v.creado DESC)
            FROM vales v WHERE v.cliente_id = %(cliente)s
             AND v.creado >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_VALES_SQL = """
SELECT pedido_id AS pedido, linea, importe, estado FROM vales ORDER BY pedido_id, linea, importe
"""

# Lo que la tarjeta del encargado añade a los argumentos (EnTarjeta).
TARJETA_VALE_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j)
SELECT pr.nombre AS "Producto", lp.importe AS "Pagado por la línea",
       least(trunc(lp.importe * coalesce(pt.vale_porcentaje_max, 10) / 100, 2),
             coalesce(pt.vale_importe_max, 10.00)) AS "Máximo sin firma (política vigente)",
       coalesce(pt.vale_dias_caducidad, 365) || ' días' AS "Validez del vale"
FROM a
JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
JOIN lineas_pedido lp ON lp.pedido_id = p.id
 AND lp.linea = CASE WHEN a.j ->> 'linea' ~ '^[0-9]{1,9}$' THEN (a.j ->> 'linea')::int END
JOIN productos pr ON pr.sku = lp.sku
LEFT JOIN politicas_tienda pt ON pt.tienda = p.tienda
"""

VALE = OperacionConEfecto(
    nombre="vale",
    herramientas=("compensar_con_vale",),
    regla="vale",
    hechos=("pedido_existe", "estado_pedido", "importe_linea_vale", "vales_cliente_recientes",
            "compensaciones_linea_vale", "en_revision", "rechazadas_pedido"),
    matriz=EnMatriz(singular="este vale", plural="vales de compensación",
                    limites={"encargado": Decimal("50.00"), "gerente": Decimal("300.00"), "regional": None}),
    # Un pasivo (lo que la tienda debe en vales vivos), no un movimiento de la pasarela.
    libro=EnLibro(tabla="vales", prefijo="VA", importe="importe", creado="creado"),
    titulo="Vale de compensación",
    decisiones=("approve", "edit", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="linea", etiqueta="Línea del pedido"),
        Campo(nombre="importe", etiqueta="Importe del vale", dinero=True),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    campos_editables=("importe",),
    historial=EnHistorial(clave="vales", etiqueta="Vale", plural="vales",
                          detalle="{pedido} · {importe:euros} · caduca {caduca}", sql=HISTORIAL_VALES_SQL),
    texto_espera=_espera_vale,
    # «un vale», «compensáis», «no quiero devolverlo»: antes que «devolver» (lectura.py).
    offline=Offline(
        intencion="vale",
        patron=(r"\b(?:(?:un|el|mi|otro|del|algun|ese|este)\s+vales?\b|vales?\s+(?:de|por)\s+(?:compensacion|descuento|\d)"
                r"|compens\w*|no\s+(?:lo\s+|la\s+|los\s+|las\s+)?(?:quiero|voy\s+a|pienso)\s+devolver\w*)"),
        palabra="vale", clave_numero="vale"),
    instantanea=EnInstantanea(
        tablas={"vales": INSTANTANEA_VALES_SQL},
        numeros=(Numeracion(marcador="vale", prefijo="VA", sql="SELECT numero, id FROM vales"),),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_VALE_SQL, dinero=("Pagado por la línea", "Máximo sin firma (política vigente)")),
)

OPERACION = VALE
