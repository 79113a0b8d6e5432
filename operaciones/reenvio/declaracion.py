"""Reenviar lo que no llegó o llegó roto (issue 27; sql/017_reenvio.sql)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo.defectos_operacion import LIMITES_POR_DEFECTO
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

__all__ = ["OPERACION", "HISTORIAL_REENVIOS_SQL", "INSTANTANEA_REENVIOS_SQL", "MOTIVOS_REENVIO", "REENVIO",
           "TARJETA_REENVIO_SQL"]


# -- Reenvío de lo que no llegó o llegó roto (sql/017_reenvio.sql) ------------------------------

# Cómo lee el cliente el motivo (nunca la clave interna).
MOTIVOS_REENVIO = {"no_llego": "no ha llegado", "llego_roto": "llegó roto o inservible"}


def _espera_reenvio(args: Mapping[str, Any]) -> str:
    unidades = args.get("unidades") or 1
    que = "una unidad" if str(unidades) == "1" else f"{unidades} unidades"
    return f"el reenvío sin cargo de {que} de la línea {args.get('linea')} del pedido {args.get('pedido')}"


HISTORIAL_REENVIOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', v.numero, 'pedido', v.pedido_id, 'producto', pr.nombre,
             'unidades', v.unidades, 'valor', v.valor::text, 'vez', v.vez,
             'motivo', CASE v.motivo WHEN 'no_llego' THEN 'no llegó' ELSE 'llegó roto' END,
             'fecha', v.creado)
             ORDER BY v.creado DESC)
            FROM reenvios v JOIN productos pr ON pr.sku = v.sku
            WHERE v.cliente_id = %(cliente)s
             AND v.creado >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_REENVIOS_SQL = """
SELECT pedido_id AS pedido, linea, sku, unidades, motivo, valor::text AS valor, vez
FROM reenvios ORDER BY pedido_id, linea, vez
"""

# Lo que la tarjeta del encargado añade a los argumentos (EnTarjeta).
TARJETA_REENVIO_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j,
                  CASE WHEN %(args)s::jsonb ->> 'unidades' ~ '^[0-9]{1,9}$'
                       THEN (%(args)s::jsonb ->> 'unidades')::int ELSE 1 END AS unidades)
SELECT pr.nombre AS "Producto", a.unidades || ' de ' || lp.unidades AS "Unidades a reenviar",
       lp.precio_unitario * a.unidades AS "Valor del reenvío",
       CASE WHEN p.enviado_en IS NULL THEN 'sin fecha de envío'
            ELSE (current_date - p.enviado_en::date) || ' días' END AS "Enviado hace",
       coalesce((SELECT s.unidades FROM stock s WHERE s.tienda = p.tienda AND s.sku = lp.sku), 0)
           AS "Stock en la tienda"
FROM a
JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
JOIN lineas_pedido lp ON lp.pedido_id = p.id
 AND lp.linea = CASE WHEN a.j ->> 'linea' ~ '^[0-9]{1,9}$' THEN (a.j ->> 'linea')::int END
JOIN productos pr ON pr.sku = lp.sku
"""

REENVIO = OperacionConEfecto(
    nombre="reenvio",
    herramientas=("reenviar",),
    regla="reenvio",
    hechos=("pedido_existe", "estado_pedido", "entregado_en", "enviado_en", "dias_enviado", "linea_reenvio", "en_revision", "rechazadas_pedido"),
    matriz=EnMatriz(singular="este reenvío", plural="reenvíos", limites=LIMITES_POR_DEFECTO),
    # Sin pasarela: no se cobra ni se paga; las unidades quedan compensadas en el libro.
    libro=EnLibro(tabla="reenvios", prefijo="RV", importe="valor", creado="creado", compensa="reenvio_id"),
    titulo="Reenvío sin cargo",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="linea", etiqueta="Línea del pedido"),
        Campo(nombre="unidades", etiqueta="Unidades a reenviar"),
        Campo(nombre="motivo", etiqueta="Motivo (no llegó o llegó roto)"),
        Campo(nombre="descripcion", etiqueta="Lo que cuenta el cliente"),
    ),
    historial=EnHistorial(clave="reenvios", etiqueta="Reenvío", plural="reenvíos",
                          detalle="{pedido} · {producto} · {motivo}", sql=HISTORIAL_REENVIOS_SQL),
    texto_espera=_espera_reenvio,
    offline=Offline(
        intencion="reenvio",
        # «no me ha llegado», «reenviadme», «mandadme otro»; «llegó roto» a secas no (puede
        # ser una devolución o un vale): hace falta pedir otro.
        patron=(r"\b(?:reenvi\w*|no (?:me |nos )?(?:ha|han) llegado|no (?:me |nos )?(?:llego|llegaron)"
                r"|nunca (?:me |nos )?(?:llego|ha llegado)|(?:mand|envi|repon)\w* (?:me |nos )?"
                r"(?:otr[oa]s?|un[oa] nuev[oa]s?)\b)"),
        palabra="reenvío", clave_numero="reenvio"),
    instantanea=EnInstantanea(
        tablas={"reenvios": INSTANTANEA_REENVIOS_SQL},
        numeros=(Numeracion(marcador="reenvio", prefijo="RV", sql="SELECT numero, id FROM reenvios"),),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_REENVIO_SQL, dinero=("Valor del reenvío",)),
)

OPERACION = REENVIO
