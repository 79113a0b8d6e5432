"""El reembolso de una devolución (sql/007_libro.sql)."""

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
    Numeracion,
    Offline,
    OperacionConEfecto,
)

__all__ = ["OPERACION", "HISTORIAL_REEMBOLSOS_SQL", "INSTANTANEA_REEMBOLSOS_SQL", "REEMBOLSO"]


def _espera_reembolso(args: Mapping[str, Any]) -> str:
    importe = importe_legible(args) or "el importe indicado"
    return f"el reembolso de {importe} del pedido {args.get('pedido')}"


HISTORIAL_REEMBOLSOS_SQL = """coalesce((SELECT jsonb_agg(jsonb_build_object(
             'numero', r.numero, 'pedido', r.pedido_id, 'importe', r.importe::text,
             'estado', r.estado, 'concepto', r.concepto, 'fecha', r.creado)
             ORDER BY r.creado DESC)
            FROM reembolsos r WHERE r.cliente_id = %(cliente)s
             AND r.creado >= now() - make_interval(days => %(dias)s)), '[]')"""

INSTANTANEA_REEMBOLSOS_SQL = """
SELECT pedido_id AS pedido, importe, concepto, estado,
       coalesce((SELECT jsonb_agg(x ORDER BY x) FROM jsonb_array_elements(lineas) x), '[]') AS lineas
FROM reembolsos ORDER BY pedido_id, concepto, importe
"""

REEMBOLSO = OperacionConEfecto(
    nombre="reembolso",
    herramientas=("reembolsar",),
    regla="reembolso",
    hechos=("pedido_existe", "estado_pedido", "entregado_en", "dias_entregado",
            "devoluciones_recientes", "elegibilidad", "vales_pedido", "en_revision", "rechazadas_pedido"),
    matriz=EnMatriz(singular="este reembolso", plural="reembolsos",
                    limites=LIMITES_POR_DEFECTO, dos_firmas_por_encima=DOS_FIRMAS_POR_DEFECTO),
    libro=EnLibro(tabla="reembolsos", prefijo="RE", importe="importe", creado="creado",
                  movimientos=("reembolso",), compensa="reembolso_id"),
    titulo="Reembolso",
    decisiones=("approve", "edit", "reject"),
    campos=(
        Campo(nombre="pedido", etiqueta="Pedido"),
        Campo(nombre="importe", etiqueta="Importe", dinero=True),
        Campo(nombre="lineas", etiqueta="Líneas"),
        Campo(nombre="motivo", etiqueta="Motivo del cliente"),
    ),
    campos_editables=("importe",),
    historial=EnHistorial(clave="reembolsos", etiqueta="Reembolso", plural="reembolsos",
                          detalle="{pedido} · {importe:euros} · {estado}", sql=HISTORIAL_REEMBOLSOS_SQL),
    texto_espera=_espera_reembolso,
    offline=Offline(intencion="reembolso", patron=r"\b(?:devol\w*|devuelv\w*|reembols\w*)",
                    palabra="reembolso", clave_numero="reembolso"),
    instantanea=EnInstantanea(
        tablas={"reembolsos": INSTANTANEA_REEMBOLSOS_SQL},
        numeros=(Numeracion(marcador="reembolso", prefijo="RE",
                            sql="SELECT numero, id FROM reembolsos WHERE concepto = 'devolucion'"),),
    ),
)

OPERACION = REEMBOLSO
