"""El cambio de dirección de envío (issue 27; sql/019_direccion.sql)."""

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

__all__ = ["OPERACION", "DIRECCION", "HISTORIAL_DIRECCIONES_SQL", "INSTANTANEA_DIRECCIONES_SQL", "TARJETA_DIRECCION_SQL"]


def _espera_direccion(args: Mapping[str, Any]) -> str:
    destino = " ".join(str(args.get(c) or "").strip() for c in ("codigo_postal", "localidad")).strip()
    return f"el cambio de la dirección de envío del pedido {args.get('pedido')}" + (
        f" a {args.get('calle')}, {destino}" if args.get("calle") and destino else "")


HISTORIAL_DIRECCIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', d.numero, 'pedido', d.pedido_id, 'fecha', d.creado,
             'anterior', coalesce(d.calle_anterior || ', ' || d.codigo_postal_anterior || ' '
                                  || d.localidad_anterior, 'sin dirección'),
             'nueva', d.calle || ', ' || d.codigo_postal || ' ' || d.localidad)
             ORDER BY d.creado DESC)
            FROM cambios_direccion d WHERE d.cliente_id = %(cliente)s
             AND d.creado >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_DIRECCIONES_SQL = """
SELECT pedido_id AS pedido, provincia_anterior, calle, codigo_postal, localidad, provincia
FROM cambios_direccion ORDER BY pedido_id, codigo_postal, calle
"""

# No mueve dinero ni género: su sitio en el libro es cambios_direccion (la antigua y la
# nueva), sin movimiento de pasarela. El «importe» de la matriz es el del pedido.
# Lo que la tarjeta del encargado añade a los argumentos (EnTarjeta).
TARJETA_DIRECCION_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j)
SELECT coalesce(p.calle || ', ' || p.codigo_postal || ' ' || p.localidad
                || coalesce(' (' || p.provincia || ')', ''), 'sin dirección') AS "Dirección actual",
       concat_ws(', ', a.j ->> 'calle', concat_ws(' ', a.j ->> 'codigo_postal', a.j ->> 'localidad'))
           AS "Dirección nueva",
       p.estado AS "Estado del pedido"
FROM a JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
"""

DIRECCION = OperacionConEfecto(
    nombre="direccion",
    herramientas=("cambiar_direccion",),
    regla="direccion",
    hechos=("pedido_existe", "estado_pedido", "importe_pedido", "direccion_envio"),
    matriz=EnMatriz(singular="este cambio de dirección", plural="cambios de dirección",
                    limites={"encargado": Decimal("1000.00"), "gerente": None, "regional": None}),
    libro=EnLibro(tabla="cambios_direccion", prefijo="CD", importe="importe", creado="creado"),
    titulo="Cambio de dirección de envío",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="calle", etiqueta="Calle y número nuevos"),
        Campo(nombre="codigo_postal", etiqueta="Código postal nuevo"),
        Campo(nombre="localidad", etiqueta="Localidad nueva"),
    ),
    historial=EnHistorial(clave="direcciones", etiqueta="Cambio de dirección", plural="cambios de dirección",
                          detalle="{pedido} · {anterior} → {nueva}", sql=HISTORIAL_DIRECCIONES_SQL),
    texto_espera=_espera_direccion,
    offline=Offline(
        intencion="direccion",
        # «cambia la dirección de envío», «cambio de dirección», «nueva dirección de entrega»:
        # empieza donde el verbo para que la cláusula no se lea también como cambio de producto.
        patron=(r"\b(?:(?:cambi\w*|modific\w*|actualiz\w*|corrig\w*|correg\w*|pon\w*)\s+"
                r"(?:[\w-]+\s+){0,5}?direccion\w*|(?:nueva\s+)?direccion\s+de\s+(?:envio|entrega)|"
                r"(?:nueva|otra)\s+direccion)"),
        palabra="cambio de dirección", clave_numero="cambio_direccion"),
    instantanea=EnInstantanea(
        tablas={"cambios_direccion": INSTANTANEA_DIRECCIONES_SQL},
        numeros=(Numeracion(marcador="cambio_direccion", prefijo="CD",
                            sql="SELECT numero, id FROM cambios_direccion"),),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_DIRECCION_SQL),
)


# -- vale de compensación (issue 27, sql/018_vale.sql) ------------------------------------------

OPERACION = DIRECCION
