"""Cancelar un pedido sin enviar (issue 27; sql/016_cancelacion.sql)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nucleo.defectos_operacion import (
    DOS_FIRMAS_POR_DEFECTO,
    LIMITES_POR_DEFECTO,
    importe_legible,
)
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

__all__ = ["OPERACION", "CANCELACION", "HISTORIAL_CANCELACIONES_SQL", "INSTANTANEA_CANCELACIONES_SQL", "TARJETA_CANCELACION_SQL"]


def _espera_cancelacion(args: Mapping[str, Any]) -> str:
    importe = importe_legible(args)
    if importe is None:
        return f"la cancelación del pedido {args.get('pedido')}"
    return f"la cancelación del pedido {args.get('pedido')} y la devolución de {importe}"


HISTORIAL_CANCELACIONES_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', c.numero, 'pedido', c.pedido_id, 'importe', c.importe::text,
             'motivo', c.motivo, 'fecha', c.creada)
             ORDER BY c.creada DESC)
            FROM cancelaciones c WHERE c.cliente_id = %(cliente)s
             AND c.creada >= now() - make_interval(days => %(dias)s)), '[]')"""
INSTANTANEA_CANCELACIONES_SQL = """
SELECT c.pedido_id AS pedido, c.importe, p.estado AS estado_pedido,
       (SELECT count(*)::int FROM compensaciones_unidad u WHERE u.cancelacion_id = c.id) AS unidades
FROM cancelaciones c JOIN pedidos p ON p.id = c.pedido_id ORDER BY c.pedido_id
"""

# Lo que la tarjeta del encargado añade a los argumentos (EnTarjeta).
TARJETA_CANCELACION_SQL = """
WITH a AS (SELECT %(args)s::jsonb AS j)
SELECT p.importe AS "Pagado por el pedido (se devuelve entero)", p.estado AS "Estado del pedido",
       (SELECT string_agg(lp.unidades || ' × ' || pr.nombre, '; ' ORDER BY lp.linea)
        FROM lineas_pedido lp JOIN productos pr ON pr.sku = lp.sku WHERE lp.pedido_id = p.id)
           AS "Productos (vuelven al stock)"
FROM a JOIN pedidos p ON p.id = upper(trim(a.j ->> 'pedido')) AND p.cliente_id = %(cliente)s
"""

CANCELACION = OperacionConEfecto(
    nombre="cancelacion",
    herramientas=("cancelar_pedido",),
    regla="cancelacion",
    hechos=("pedido_existe", "estado_pedido", "importe_pedido", "en_revision", "rechazadas_pedido"),
    # Las mismas filas que el reembolso: lo que sale es dinero devuelto.
    matriz=EnMatriz(singular="esta cancelación", plural="cancelaciones",
                    limites=LIMITES_POR_DEFECTO, dos_firmas_por_encima=DOS_FIRMAS_POR_DEFECTO),
    # Lo pagado vuelve con un reembolso de concepto 'cancelacion' (uno por pedido).
    libro=EnLibro(tabla="cancelaciones", prefijo="CA", importe="importe", creado="creada",
                  movimientos=("reembolso",), compensa="cancelacion_id"),
    titulo="Cancelación de pedido",
    decisiones=("approve", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="importe", etiqueta="Importe a devolver", dinero=True),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    historial=EnHistorial(clave="cancelaciones", etiqueta="Cancelación", plural="cancelaciones",
                          detalle="{pedido} · {importe:euros}", sql=HISTORIAL_CANCELACIONES_SQL),
    texto_espera=_espera_cancelacion,
    offline=Offline(intencion="cancelacion",
                    # «cancelado» o «anulada» describen, no piden: no cuentan.
                    patron=r"\b(?:cancel|anul)(?!ad[oa]s?\b)\w*",
                    palabra="cancelación", clave_numero="cancelacion"),
    instantanea=EnInstantanea(
        tablas={"cancelaciones": INSTANTANEA_CANCELACIONES_SQL},
        numeros=(Numeracion(marcador="cancelacion", prefijo="CA", sql="SELECT numero, id FROM cancelaciones"),
                 Numeracion(marcador="devolucion_cancelacion", prefijo="RE",
                            sql="SELECT numero, id FROM reembolsos WHERE concepto = 'cancelacion'")),
    ),
    tarjeta=EnTarjeta(sql=TARJETA_CANCELACION_SQL, dinero=("Pagado por el pedido (se devuelve entero)",)),
)


OPERACION = CANCELACION
