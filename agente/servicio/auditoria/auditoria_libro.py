"""Auditoría del libro de compensaciones: cada euro y cada unidad cuadran.

Siete comprobaciones, cada una UNA sentencia SQL (constantes ``*_SQL``) que devuelve
una fila por hallazgo con la misma forma (``hallazgo``, ``referencia``, ``pedido_id``,
``linea``, ``unidad``, ``detalle``). Cero filas = todo cuadra. Las restricciones de la
base (clave primaria del libro, disparador de precio) impiden la mayoría de estos
hallazgos en una base sana; las comprobaciones siguen aquí para una base restaurada de
otro sitio, tocada a mano o anterior al libro.

- ``unidades``: una unidad compensada dos veces, por encima de su precio o que no
  existe; una línea con más compensado o devuelto que lo pagado; un reembolso de
  devolución cuyas unidades no suman su importe; un cambio sin su unidad; compensaciones
  migradas que no cabían en el libro.
- ``pasarela``: cada movimiento de la pasarela tiene exactamente un asiento (reembolso o
  cobro) con la misma referencia, importe y tipo, y cada asiento completado su
  movimiento. Un asiento pendiente con movimiento es una caída entre pasos: no es un
  hallazgo aquí (lo cuenta ``pendientes`` si dura).
- ``pendientes``: reembolsos o cobros pendientes desde hace más de ``segundos``.
- ``diferencias``: un cambio cuya diferencia no está liquidada como dice su
  ``liquidacion`` (sin reembolso o cobro, con otro importe, hecho sin cobro confirmado,
  anulado sin devolver el cobro, o anterior al libro con diferencia).
- ``marcados``: movimientos pendientes marcados para una persona tras N fallos.
- ``fallos_tardios``: movimientos que el proveedor dio por completados y después por
  fallidos (``estados_proveedor.fallo_tardio``): el cliente creyó tener su dinero (o la
  tienda, su cobro) y una persona tiene que decidir. No cuentan además en ``marcados``
  ni en ``pendientes``: un hallazgo por suceso.
- ``cancelaciones``: una cancelación (sql/016) sin su reembolso o con otro importe que
  el suyo, sin todas las unidades de su pedido en el libro, o de un pedido que no
  consta como cancelado.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

__all__ = [
    "COMPROBACIONES",
    "SELECT_CANCELACIONES_SQL",
    "SELECT_DIFERENCIAS_SQL",
    "SELECT_FALLOS_TARDIOS_SQL",
    "SELECT_MARCADOS_SQL",
    "SELECT_PASARELA_PROVEEDOR_SQL",
    "SELECT_PASARELA_SQL",
    "SELECT_PENDIENTES_SQL",
    "SELECT_UNIDADES_SQL",
    "auditar_libro",
    "total_hallazgos",
]

SELECT_UNIDADES_SQL = """
WITH c AS (
    SELECT c.*, l.unidades AS unidades_linea, l.precio_unitario
    FROM compensaciones_unidad c
    LEFT JOIN lineas_pedido l ON l.pedido_id = c.pedido_id AND l.linea = c.linea
),
devuelto AS (
    SELECT c.pedido_id, c.linea, c.importe FROM c WHERE c.reembolso_id IS NOT NULL
    UNION ALL
    SELECT s.pedido_id, s.linea, r.importe
    FROM reembolsos r JOIN sustituciones s ON s.id = r.sustitucion_id
    WHERE r.concepto = 'diferencia'
),
por_linea AS (
    SELECT l.pedido_id, l.linea, l.importe AS pagado,
           (SELECT coalesce(sum(c.importe), 0) FROM c
             WHERE c.pedido_id = l.pedido_id AND c.linea = l.linea) AS compensado,
           (SELECT coalesce(sum(d.importe), 0) FROM devuelto d
             WHERE d.pedido_id = l.pedido_id AND d.linea = l.linea) AS devuelto
    FROM lineas_pedido l
    WHERE EXISTS (SELECT 1 FROM devuelto d WHERE d.pedido_id = l.pedido_id AND d.linea = l.linea)
       OR EXISTS (SELECT 1 FROM c WHERE c.pedido_id = l.pedido_id AND c.linea = l.linea)
),
asignado AS (
    SELECT reembolso_id, sum(importe) AS total FROM c
    WHERE reembolso_id IS NOT NULL GROUP BY reembolso_id
)
SELECT 'unidad_compensada_dos_veces' AS hallazgo, NULL::text AS referencia, pedido_id, linea,
       unidad, count(*)::text || ' compensaciones' AS detalle
FROM c GROUP BY pedido_id, linea, unidad HAVING count(*) > 1
UNION ALL
SELECT 'unidad_por_encima_de_su_precio', coalesce(r.numero, s.numero), c.pedido_id, c.linea,
       c.unidad, c.importe::text || ' de ' || c.precio_unitario::text
FROM c
LEFT JOIN reembolsos r ON r.id = c.reembolso_id
LEFT JOIN sustituciones s ON s.id = c.sustitucion_id
WHERE c.importe > c.precio_unitario
UNION ALL
SELECT 'unidad_inexistente', NULL, c.pedido_id, c.linea, c.unidad,
       'la línea tiene ' || coalesce(c.unidades_linea::text, 'ninguna') || ' unidades'
FROM c WHERE c.unidades_linea IS NULL OR c.unidad > c.unidades_linea
UNION ALL
SELECT 'linea_por_encima_de_lo_pagado', NULL, p.pedido_id, p.linea, NULL,
       'pagado ' || p.pagado::text || ', compensado ' || p.compensado::text
       || ', devuelto ' || p.devuelto::text
FROM por_linea p WHERE p.compensado > p.pagado OR p.devuelto > p.pagado
UNION ALL
SELECT 'reembolso_sin_sus_unidades', r.numero, r.pedido_id, NULL, NULL,
       'importe ' || r.importe::text || ', unidades ' || coalesce(a.total, 0)::text
FROM reembolsos r LEFT JOIN asignado a ON a.reembolso_id = r.id
WHERE r.concepto = 'devolucion' AND coalesce(a.total, 0) <> r.importe
  AND NOT EXISTS (SELECT 1 FROM compensaciones_sin_unidad m WHERE m.reembolso_id = r.id)
UNION ALL
SELECT 'reembolso_de_otro_concepto_con_unidades', r.numero, r.pedido_id, NULL, NULL, r.concepto
FROM reembolsos r JOIN asignado a ON a.reembolso_id = r.id
WHERE r.concepto <> 'devolucion'
UNION ALL
SELECT 'cambio_sin_su_unidad', s.numero, s.pedido_id, s.linea, NULL, s.estado
FROM sustituciones s
WHERE s.estado <> 'anulada'
  AND NOT EXISTS (SELECT 1 FROM c WHERE c.sustitucion_id = s.id)
  AND NOT EXISTS (SELECT 1 FROM compensaciones_sin_unidad m WHERE m.sustitucion_id = s.id)
UNION ALL
SELECT 'compensacion_anterior_sin_unidad', coalesce(r.numero, s.numero),
       coalesce(r.pedido_id, s.pedido_id), NULL, NULL, m.importe::text || ': ' || m.motivo
FROM compensaciones_sin_unidad m
LEFT JOIN reembolsos r ON r.id = m.reembolso_id
LEFT JOIN sustituciones s ON s.id = m.sustitucion_id
ORDER BY 1, 3, 4, 5
"""

SELECT_PASARELA_SQL = """
WITH libro AS (SELECT * FROM libro_movimientos),
cruce AS (
    SELECT l.tipo AS tipo_libro, l.referencia AS ref_libro, l.importe AS importe_libro,
           l.completado, l.pedido_id, m.tipo AS tipo_pasarela, m.referencia AS ref_pasarela,
           m.importe AS importe_pasarela
    FROM libro l FULL JOIN pasarela_movimientos m ON m.referencia = l.referencia
)
SELECT CASE WHEN ref_libro IS NULL THEN 'movimiento_sin_asiento'
            WHEN ref_pasarela IS NULL THEN 'asiento_completado_sin_movimiento'
            WHEN tipo_libro <> tipo_pasarela THEN 'tipo_distinto'
            ELSE 'importe_distinto' END AS hallazgo,
       coalesce(ref_libro, ref_pasarela) AS referencia, pedido_id, NULL::int AS linea,
       NULL::int AS unidad,
       'libro ' || coalesce(tipo_libro || ' ' || importe_libro::text, '-')
       || ', pasarela ' || coalesce(tipo_pasarela || ' ' || importe_pasarela::text, '-') AS detalle
FROM cruce
WHERE ref_libro IS NULL
   OR (ref_pasarela IS NULL AND completado)
   OR (ref_pasarela IS NOT NULL AND (tipo_libro <> tipo_pasarela OR importe_libro <> importe_pasarela))
UNION ALL
SELECT 'referencia_repetida_en_el_libro', referencia, min(pedido_id), NULL, NULL,
       count(*)::text || ' asientos'
FROM libro GROUP BY referencia HAVING count(*) > 1
ORDER BY 2, 1
"""

# Con un proveedor real (Stripe), los movimientos son los suyos (``PasarelaConEventos.registros``),
# no la tabla de la simulada: la misma comprobación sobre sus registros, y una referencia
# repetida en el proveedor (dos reembolsos por un asiento) es un hallazgo.
REGISTROS_PROVEEDOR = (
    "(SELECT * FROM unnest(%(referencias)s::text[], %(tipos)s::text[], %(importes)s::numeric[])"
    " AS x(referencia, tipo, importe))"
)
SELECT_PASARELA_PROVEEDOR_SQL = SELECT_PASARELA_SQL.replace(
    "pasarela_movimientos", REGISTROS_PROVEEDOR
).replace("ORDER BY 2, 1", """UNION ALL
SELECT 'referencia_repetida_en_el_proveedor', referencia, NULL, NULL, NULL,
       count(*)::text || ' movimientos'
FROM """ + REGISTROS_PROVEEDOR + """ p GROUP BY referencia HAVING count(*) > 1
ORDER BY 2, 1""")

SELECT_PENDIENTES_SQL = """
SELECT 'pendiente_demasiado_tiempo' AS hallazgo, referencia, pedido_id, NULL::int AS linea,
       NULL::int AS unidad,
       tipo || ' de ' || importe::text || ' pendiente desde ' || creado::text
       || ', ' || intentos::text || ' intentos'
       || coalesce(', último error: ' || ultimo_error, '') AS detalle
FROM libro_movimientos
WHERE NOT completado AND estado = 'pendiente' AND fallo_tardio_en IS NULL
  AND creado < now() - make_interval(secs => %(segundos)s)
ORDER BY creado, referencia
"""

SELECT_DIFERENCIAS_SQL = """
WITH cambios AS (
    SELECT s.numero, s.pedido_id, s.linea, s.estado, s.liquidacion, s.diferencia,
           rd.importe AS reembolsado, c.importe AS cobrado, c.estado AS estado_cobro,
           ra.importe AS devuelto_del_cobro
    FROM sustituciones s
    LEFT JOIN reembolsos rd ON rd.sustitucion_id = s.id AND rd.concepto = 'diferencia'
    LEFT JOIN reembolsos ra ON ra.sustitucion_id = s.id AND ra.concepto = 'anulacion'
    LEFT JOIN cobros c ON c.sustitucion_id = s.id
),
hallazgos AS (
    SELECT *, CASE
        WHEN liquidacion = 'anterior_al_libro' AND diferencia <> 0 THEN 'diferencia_anterior_al_libro_sin_liquidar'
        WHEN liquidacion = 'ninguna' AND diferencia <> 0 THEN 'diferencia_sin_liquidar'
        WHEN liquidacion = 'reembolso' AND diferencia >= 0 THEN 'reembolso_sin_diferencia_a_favor'
        WHEN liquidacion = 'reembolso' AND reembolsado IS NULL THEN 'diferencia_a_favor_sin_reembolso'
        WHEN liquidacion = 'reembolso' AND reembolsado <> -diferencia THEN 'reembolso_de_la_diferencia_con_otro_importe'
        WHEN liquidacion <> 'reembolso' AND reembolsado IS NOT NULL THEN 'reembolso_de_diferencia_sin_liquidacion'
        WHEN liquidacion = 'cobro' AND diferencia <= 0 THEN 'cobro_sin_diferencia_a_cargo'
        WHEN liquidacion = 'cobro' AND cobrado IS NULL THEN 'diferencia_a_cargo_sin_cobro'
        WHEN liquidacion = 'cobro' AND cobrado <> diferencia THEN 'cobro_con_otro_importe'
        WHEN liquidacion <> 'cobro' AND cobrado IS NOT NULL THEN 'cobro_sin_liquidacion'
        WHEN liquidacion = 'cobro' AND estado = 'hecha' AND estado_cobro <> 'confirmado' THEN 'cambio_hecho_sin_cobro_confirmado'
        WHEN liquidacion = 'cobro' AND estado = 'pendiente_cobro' AND estado_cobro = 'confirmado' THEN 'cobro_confirmado_sin_completar_el_cambio'
        WHEN estado = 'anulada' AND estado_cobro = 'confirmado'
             AND (devuelto_del_cobro IS NULL OR devuelto_del_cobro <> cobrado) THEN 'cambio_anulado_sin_devolver_el_cobro'
        WHEN estado <> 'anulada' AND devuelto_del_cobro IS NOT NULL THEN 'devolucion_de_cobro_sin_anular'
    END AS hallazgo
    FROM cambios
)
SELECT hallazgo, numero AS referencia, pedido_id, linea, NULL::int AS unidad,
       liquidacion || ', diferencia ' || diferencia::text || ', reembolsado '
       || coalesce(reembolsado::text, '-') || ', cobrado ' || coalesce(cobrado::text, '-')
       || coalesce(' (' || estado_cobro || ')', '') AS detalle
FROM hallazgos
WHERE hallazgo IS NOT NULL
ORDER BY numero
"""

SELECT_MARCADOS_SQL = """
SELECT 'marcado_para_una_persona' AS hallazgo, referencia, pedido_id, NULL::int AS linea,
       NULL::int AS unidad,
       tipo || ' de ' || importe::text || ': ' || intentos::text || ' intentos, marcado '
       || coalesce(marcado_en::text, '?') || coalesce(', último error: ' || ultimo_error, '')
       AS detalle
FROM libro_movimientos
WHERE requiere_persona AND NOT completado AND fallo_tardio_en IS NULL
ORDER BY marcado_en, referencia
"""

SELECT_FALLOS_TARDIOS_SQL = """
SELECT 'fallo_tardio_en_el_proveedor' AS hallazgo, referencia, pedido_id, NULL::int AS linea,
       NULL::int AS unidad,
       tipo || ' de ' || importe::text || ' dado por completado y fallido después ('
       || fallo_tardio_en::text || ')' || coalesce(': ' || ultimo_error, '') AS detalle
FROM libro_movimientos
WHERE fallo_tardio_en IS NOT NULL AND NOT completado
ORDER BY fallo_tardio_en, referencia
"""

SELECT_CANCELACIONES_SQL = """
WITH c AS (
    SELECT c.id, c.numero, c.pedido_id, c.importe, p.estado,
           r.importe AS devuelto,
           (SELECT count(*) FROM compensaciones_unidad u WHERE u.cancelacion_id = c.id) AS unidades,
           (SELECT coalesce(sum(l.unidades), 0) FROM lineas_pedido l WHERE l.pedido_id = c.pedido_id)
               AS unidades_pedido
    FROM cancelaciones c
    JOIN pedidos p ON p.id = c.pedido_id
    LEFT JOIN reembolsos r ON r.cancelacion_id = c.id
)
SELECT CASE WHEN importe > 0 AND devuelto IS NULL THEN 'cancelacion_sin_reembolso'
            WHEN devuelto IS NOT NULL AND devuelto <> importe THEN 'reembolso_de_cancelacion_con_otro_importe'
            WHEN unidades <> unidades_pedido THEN 'cancelacion_sin_sus_unidades'
            ELSE 'cancelacion_de_pedido_no_cancelado' END AS hallazgo,
       numero AS referencia, pedido_id, NULL::int AS linea, NULL::int AS unidad,
       'importe ' || importe::text || ', devuelto ' || coalesce(devuelto::text, '-')
       || ', unidades ' || unidades::text || ' de ' || unidades_pedido::text
       || ', pedido ' || estado AS detalle
FROM c
WHERE (importe > 0 AND devuelto IS NULL) OR devuelto <> importe OR unidades <> unidades_pedido
   OR estado <> 'cancelado'
ORDER BY numero
"""

COMPROBACIONES = ("unidades", "pasarela", "pendientes", "diferencias", "marcados", "fallos_tardios",
                  "cancelaciones")


def auditar_libro(
    conexion: psycopg.Connection, *, pendientes_mas_de_segundos: float = 3600,
    registros_pasarela: Sequence | None = None,
) -> dict[str, list[dict]]:
    """Los hallazgos de cada comprobación (``COMPROBACIONES``), en listas vacías si cuadra.

    ``pendientes_mas_de_segundos``: a partir de cuánto un movimiento pendiente es hallazgo.
    ``registros_pasarela``: los movimientos de un proveedor real (``RegistroPasarela``);
    sin ellos, la comprobación ``pasarela`` lee la tabla de la simulada.
    """
    if registros_pasarela is None:
        pasarela = conexion.execute(SELECT_PASARELA_SQL).fetchall()
    else:
        pasarela = conexion.execute(SELECT_PASARELA_PROVEEDOR_SQL, {
            "referencias": [r.referencia for r in registros_pasarela],
            "tipos": [r.tipo for r in registros_pasarela],
            "importes": [r.importe for r in registros_pasarela],
        }).fetchall()
    return {
        "unidades": conexion.execute(SELECT_UNIDADES_SQL).fetchall(),
        "pasarela": pasarela,
        "pendientes": conexion.execute(
            SELECT_PENDIENTES_SQL, {"segundos": pendientes_mas_de_segundos}
        ).fetchall(),
        "diferencias": conexion.execute(SELECT_DIFERENCIAS_SQL).fetchall(),
        "marcados": conexion.execute(SELECT_MARCADOS_SQL).fetchall(),
        "fallos_tardios": conexion.execute(SELECT_FALLOS_TARDIOS_SQL).fetchall(),
        "cancelaciones": conexion.execute(SELECT_CANCELACIONES_SQL).fetchall(),
    }


def total_hallazgos(informe: dict[str, list[dict]]) -> int:
    return sum(len(filas) for filas in informe.values())
