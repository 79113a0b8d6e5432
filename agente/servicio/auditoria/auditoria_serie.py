"""Auditoría en serie: lo que ninguna ejecución de una en una habría dejado pasar.

Cada regla de recuento de la política se decide leyendo lo ya hecho («el cliente ya
recibió un vale en 90 días»). Dos conversaciones a la vez leen las dos «ninguno» y los
dos efectos salen sin firma; en cualquier orden en serie, el segundo la habría pedido.
Estas comprobaciones miran el resultado, no cómo se llegó a él: toman cada efecto **sin
firma** (ningún firmante de su tienda aprobó ni editó su llamada: lo mismo que mira
``sin_firma`` del informe, ``FIRMADO_SQL``) y cuentan lo que ya había antes de él (por
``creado`` y, a igualdad, por ``id``). Un efecto firmado nunca es hallazgo aquí: alguien
lo vio.

Cada comprobación es UNA sentencia (constantes ``*_SQL``) con la misma forma por fila
(``hallazgo``, ``referencia``, ``cliente_id``, ``pedido_id``, ``linea``, ``detalle``);
cero filas = cuadra:

- ``vales_en_la_ventana``: un vale sin firma de un cliente que ya tenía otro (no anulado)
  en los ``VALE_VENTANA_DIAS`` días anteriores (regla «vale»: uno por cliente).
- ``reenvios_repetidos``: un reenvío sin firma de una línea ya reenviada (regla
  «reenvio»: el segundo lo firma alguien).
- ``devoluciones_de_mas``: un reembolso de devolución sin firma con ya
  ``devoluciones_max_30d`` devoluciones o más del cliente en los
  ``ventana_devoluciones_dias`` anteriores (regla «reembolso»). Los dos valores, los de la
  instantánea de su veredicto (``evaluaciones_politica.valores``); sin ella, los de hoy de
  la tienda (con sus defectos).
- ``compensaciones_encadenadas``: las demás reglas de recuento: un vale sin firma de una
  línea con unidades ya compensadas (regla «vale»); un reembolso sin firma de un pedido con
  un cambio o un vale (regla «reembolso»); un cambio sin firma de un pedido con un
  reembolso, otro cambio o un vale (regla «sustitucion»).
- ``sobrecompensacion``: una línea cuyo total compensado sin firma pasa de lo pagado por
  ella: unidades reembolsadas, cambiadas (lo pagado por la unidad; la diferencia devuelta
  sale de ahí y no se suma otra vez) o canceladas, tal como las apunta el libro, más cada
  vale (su importe) y cada reenvío (lo pagado por las unidades reenviadas, una vez por
  reenvío).
- ``cancelado_y_enviado``: un pedido cancelado (fila en ``cancelaciones`` o estado
  ``cancelado``) que consta enviado o entregado (estado, ``enviado_en``, ``entregado_en``
  o un reenvío).
- ``reembolsado_y_reabierto``: un pedido con reembolsos que vuelve a estar ``pendiente``
  o ``enviado`` (la API de la tienda lo pisó). No cuentan los reembolsos de una operación
  que solo se hace antes del envío (``EnLibro.antes_del_envio``): ajustan el precio de un
  pedido que sigue pendiente.
"""

from __future__ import annotations

from typing import Any

import psycopg

from nucleo.operaciones import OPERACIONES, VALE_VENTANA_DIAS
from politicas.defectos import DEFECTOS

__all__ = [
    "COMPROBACIONES",
    "FIRMADO_SQL",
    "FIRMAS_SQL",
    "auditar_serie",
]

# Las firmas de cada llamada: una fila por (decisión, tool_call_id) con el tipo decidido.
FIRMAS_SQL = """
firmas AS (
    SELECT d.thread_id, d.encargado_id, t.tool_call_id, d.decisiones -> (t.n::int - 1) ->> 'type' AS tipo
    FROM decisiones_encargado d
    CROSS JOIN LATERAL jsonb_array_elements_text(d.peticion -> 'tool_call_ids')
        WITH ORDINALITY AS t(tool_call_id, n)
)"""
# El efecto ``e`` lo aprobó (o editó) un firmante de su tienda, o un regional de ella.
FIRMADO_SQL = """EXISTS (
      SELECT 1 FROM firmas f JOIN encargados en ON en.id = f.encargado_id
      WHERE f.thread_id = e.thread_id AND f.tool_call_id = e.tool_call_id
        AND f.tipo IN ('approve', 'edit')
        AND (en.tienda = e.tienda OR EXISTS (
                 SELECT 1 FROM tiendas_regionales tr
                 WHERE tr.encargado_id = en.id AND tr.tienda = e.tienda AND en.rol = 'regional'))
  )"""
# Los efectos sin firma, por (tipo, id) de la vista ``efectos``.
_SIN_FIRMA = f"""WITH {FIRMAS_SQL.strip()},
sin_firma AS (
    SELECT e.tipo, e.id FROM efectos e WHERE NOT {FIRMADO_SQL}
)"""  # noqa: S608 - constantes de este módulo

# Con uno cualquiera en la ventana basta el anterior (no anulado) del cliente: una ventana
# de funciones, no un recuento por vale (un cliente con muchos vales no lo vuelve cuadrático).
VALES_EN_LA_VENTANA_SQL = _SIN_FIRMA + """,
anteriores AS (
    SELECT o.id, lag(o.numero) OVER w AS numero, lag(o.creado) OVER w AS creado
    FROM vales o
    WHERE o.estado <> 'anulado'
    WINDOW w AS (PARTITION BY o.cliente_id ORDER BY o.creado, o.id)
)
SELECT 'vale_de_mas_en_la_ventana' AS hallazgo, v.numero AS referencia, v.cliente_id, v.pedido_id,
       v.linea, 'el cliente ya tenía ' || a.numero || ' (del ' || to_char(a.creado, 'DD/MM/YYYY')
       || ') en los ' || %(ventana_vales)s::text || ' días anteriores' AS detalle
FROM vales v
JOIN sin_firma s ON s.tipo = 'vale' AND s.id = v.id
JOIN anteriores a ON a.id = v.id
WHERE a.creado > v.creado - make_interval(days => %(ventana_vales)s)
ORDER BY v.creado, v.id
"""  # noqa: S608 - constantes de este módulo

REENVIOS_REPETIDOS_SQL = _SIN_FIRMA + """,
anteriores AS (
    SELECT o.id, lag(o.numero) OVER w AS numero
    FROM reenvios o
    WINDOW w AS (PARTITION BY o.pedido_id, o.linea ORDER BY o.creado, o.id)
)
SELECT 'reenvio_de_una_linea_ya_reenviada' AS hallazgo, r.numero AS referencia, r.cliente_id,
       r.pedido_id, r.linea, 'la línea ya se había reenviado en ' || a.numero AS detalle
FROM reenvios r
JOIN sin_firma s ON s.tipo = 'reenvio' AND s.id = r.id
JOIN anteriores a ON a.id = r.id
WHERE a.numero IS NOT NULL
ORDER BY r.creado, r.id
"""  # noqa: S608 - constantes de este módulo

# Las devoluciones de antes: las de la tabla ``devoluciones`` (la que cuenta la regla),
# creadas antes que el reembolso o, en el mismo instante, de un reembolso anterior.
DEVOLUCIONES_DE_MAS_SQL = _SIN_FIRMA + """
SELECT 'devoluciones_por_encima_del_maximo' AS hallazgo, r.numero AS referencia, r.cliente_id,
       r.pedido_id, NULL::int AS linea,
       'el cliente ya tenía ' || previas.n::text || ' devoluciones en los ' || v.ventana::text
       || ' días anteriores (máximo sin firma: ' || v.maximo::text || ', ' || v.origen || ')' AS detalle
FROM reembolsos r
JOIN sin_firma s ON s.tipo = 'reembolso' AND s.id = r.id
LEFT JOIN evaluaciones_politica ev ON ev.thread_id = r.thread_id AND ev.tool_call_id = r.tool_call_id
LEFT JOIN politicas_tienda pt ON pt.tienda = r.tienda
CROSS JOIN LATERAL (
    SELECT coalesce((ev.valores ->> 'devoluciones_max_30d')::int, pt.devoluciones_max_30d,
                    %(defecto_maximo)s) AS maximo,
           coalesce((ev.valores ->> 'ventana_devoluciones_dias')::int, pt.ventana_devoluciones_dias,
                    %(defecto_ventana)s) AS ventana,
           CASE WHEN ev.valores ? 'devoluciones_max_30d' THEN 'valores de su veredicto'
                ELSE 'valores de hoy de la tienda' END AS origen
) v
CROSS JOIN LATERAL (
    SELECT count(*) AS n
    FROM devoluciones d
    WHERE d.cliente_id = r.cliente_id
      AND (d.creada < r.creado OR (d.creada = r.creado AND d.reembolso_id < r.id))
      AND d.creada > r.creado - make_interval(days => v.ventana)
) previas
WHERE r.concepto = 'devolucion' AND previas.n >= v.maximo
ORDER BY r.creado, r.id
"""  # noqa: S608 - constantes de este módulo

COMPENSACIONES_ENCADENADAS_SQL = _SIN_FIRMA + """
SELECT 'vale_de_una_linea_ya_compensada' AS hallazgo, v.numero AS referencia, v.cliente_id,
       v.pedido_id, v.linea, count(*)::text || ' unidades ya compensadas en el libro' AS detalle
FROM vales v
JOIN sin_firma s ON s.tipo = 'vale' AND s.id = v.id
JOIN compensaciones_unidad c ON c.pedido_id = v.pedido_id AND c.linea = v.linea AND c.creada < v.creado
WHERE v.estado <> 'anulado'
GROUP BY v.numero, v.cliente_id, v.pedido_id, v.linea
UNION ALL
SELECT 'reembolso_tras_un_cambio_o_un_vale', r.numero, r.cliente_id, r.pedido_id, NULL,
       'el pedido ya tenía ' || previos.numeros
FROM reembolsos r
JOIN sin_firma s ON s.tipo = 'reembolso' AND s.id = r.id
CROSS JOIN LATERAL (
    SELECT string_agg(numero, ', ' ORDER BY numero) AS numeros FROM (
        SELECT o.numero FROM sustituciones o
        WHERE o.pedido_id = r.pedido_id AND o.estado <> 'anulada' AND o.creada < r.creado
        UNION ALL
        SELECT o.numero FROM vales o
        WHERE o.pedido_id = r.pedido_id AND o.estado <> 'anulado' AND o.creado < r.creado
    ) x
) previos
WHERE r.concepto = 'devolucion' AND previos.numeros IS NOT NULL
UNION ALL
SELECT 'cambio_tras_otra_compensacion', c.numero, c.cliente_id, c.pedido_id, c.linea,
       'el pedido ya tenía ' || previos.numeros
FROM sustituciones c
JOIN sin_firma s ON s.tipo = 'sustitucion' AND s.id = c.id
CROSS JOIN LATERAL (
    SELECT string_agg(numero, ', ' ORDER BY numero) AS numeros FROM (
        SELECT o.numero FROM reembolsos o
        WHERE o.pedido_id = c.pedido_id AND o.concepto = 'devolucion' AND o.creado < c.creada
        UNION ALL
        SELECT o.numero FROM sustituciones o
        WHERE o.pedido_id = c.pedido_id AND o.estado <> 'anulada'
          AND (o.creada, o.id) < (c.creada, c.id)
        UNION ALL
        SELECT o.numero FROM vales o
        WHERE o.pedido_id = c.pedido_id AND o.estado <> 'anulado' AND o.creado < c.creada
    ) x
) previos
WHERE c.estado <> 'anulada' AND previos.numeros IS NOT NULL
ORDER BY 1, 2
"""  # noqa: S608 - constantes de este módulo

# Un reenvío cuenta por su valor cada vez (sale otra unidad), no por sus filas del libro:
# el segundo reenvío de una unidad no añade fila.
SOBRECOMPENSACION_SQL = _SIN_FIRMA + """,
partes AS (
    SELECT c.pedido_id, c.linea, c.importe, o.numero
    FROM compensaciones_unidad c
    JOIN reembolsos o ON o.id = c.reembolso_id
    JOIN sin_firma s ON s.tipo = 'reembolso' AND s.id = o.id
    UNION ALL
    SELECT c.pedido_id, c.linea, c.importe, o.numero
    FROM compensaciones_unidad c
    JOIN sustituciones o ON o.id = c.sustitucion_id
    JOIN sin_firma s ON s.tipo = 'sustitucion' AND s.id = o.id
    UNION ALL
    SELECT c.pedido_id, c.linea, c.importe, o.numero
    FROM compensaciones_unidad c
    JOIN cancelaciones o ON o.id = c.cancelacion_id
    JOIN sin_firma s ON s.tipo = 'cancelacion' AND s.id = o.id
    UNION ALL
    SELECT o.pedido_id, o.linea, o.valor, o.numero
    FROM reenvios o JOIN sin_firma s ON s.tipo = 'reenvio' AND s.id = o.id
    UNION ALL
    SELECT o.pedido_id, o.linea, o.importe, o.numero
    FROM vales o JOIN sin_firma s ON s.tipo = 'vale' AND s.id = o.id
    WHERE o.estado <> 'anulado'
)
SELECT 'linea_compensada_sin_firma_por_encima_de_lo_pagado' AS hallazgo,
       string_agg(DISTINCT p.numero, ', ' ORDER BY p.numero) AS referencia, pe.cliente_id, l.pedido_id, l.linea,
       'pagado ' || l.importe::text || ', compensado sin firma ' || sum(p.importe)::text AS detalle
FROM partes p
JOIN lineas_pedido l ON l.pedido_id = p.pedido_id AND l.linea = p.linea
JOIN pedidos pe ON pe.id = l.pedido_id
GROUP BY pe.cliente_id, l.pedido_id, l.linea, l.importe
HAVING sum(p.importe) > l.importe
ORDER BY l.pedido_id, l.linea
"""  # noqa: S608 - constantes de este módulo

CANCELADO_Y_ENVIADO_SQL = """
SELECT 'pedido_cancelado_y_enviado' AS hallazgo, c.numero AS referencia, p.cliente_id,
       p.id AS pedido_id, NULL::int AS linea,
       'estado ' || p.estado || coalesce(', cancelado en ' || c.numero, '')
       || coalesce(', enviado el ' || p.enviado_en::text, '')
       || coalesce(', entregado el ' || p.entregado_en::text, '')
       || coalesce(', reenviado en ' || (SELECT string_agg(r.numero, ', ' ORDER BY r.id)
                                          FROM reenvios r WHERE r.pedido_id = p.id), '') AS detalle
FROM pedidos p
LEFT JOIN cancelaciones c ON c.pedido_id = p.id
WHERE (c.id IS NOT NULL OR p.estado = 'cancelado')
  AND (p.estado IN ('enviado', 'entregado') OR p.enviado_en IS NOT NULL OR p.entregado_en IS NOT NULL
       OR EXISTS (SELECT 1 FROM reenvios r WHERE r.pedido_id = p.id))
ORDER BY p.id
"""

REEMBOLSADO_Y_REABIERTO_SQL = """
SELECT 'pedido_reembolsado_vuelto_a_' || p.estado AS hallazgo,
       string_agg(r.numero, ', ' ORDER BY r.id) AS referencia, p.cliente_id, p.id AS pedido_id,
       NULL::int AS linea,
       'estado ' || p.estado || ' con ' || count(*)::text || ' reembolsos ('
       || string_agg(r.concepto, ', ' ORDER BY r.id) || ')' AS detalle
FROM pedidos p
JOIN reembolsos r ON r.pedido_id = p.id
WHERE p.estado IN ('pendiente', 'enviado') AND NOT r.concepto = ANY(%(ajustes)s::text[])
GROUP BY p.id, p.estado, p.cliente_id
ORDER BY p.id
"""

# Los conceptos de reembolso que ajustan el precio de un pedido aún sin enviar.
AJUSTES_ANTES_DEL_ENVIO = [c for op in OPERACIONES if op.libro.antes_del_envio for c in op.libro.conceptos]

COMPROBACIONES = ("vales_en_la_ventana", "reenvios_repetidos", "devoluciones_de_mas",
                  "compensaciones_encadenadas", "sobrecompensacion", "cancelado_y_enviado",
                  "reembolsado_y_reabierto")


def auditar_serie(conexion: psycopg.Connection) -> dict[str, list[dict[str, Any]]]:
    """Los hallazgos de cada comprobación (``COMPROBACIONES``), en listas vacías si cuadra."""
    devoluciones = {"defecto_maximo": DEFECTOS["devoluciones_max_30d"],
                    "defecto_ventana": DEFECTOS["ventana_devoluciones_dias"]}
    return {
        "vales_en_la_ventana": conexion.execute(
            VALES_EN_LA_VENTANA_SQL, {"ventana_vales": VALE_VENTANA_DIAS}).fetchall(),
        "reenvios_repetidos": conexion.execute(REENVIOS_REPETIDOS_SQL).fetchall(),
        "devoluciones_de_mas": conexion.execute(DEVOLUCIONES_DE_MAS_SQL, devoluciones).fetchall(),
        "compensaciones_encadenadas": conexion.execute(COMPENSACIONES_ENCADENADAS_SQL).fetchall(),
        "sobrecompensacion": conexion.execute(SOBRECOMPENSACION_SQL).fetchall(),
        "cancelado_y_enviado": conexion.execute(CANCELADO_Y_ENVIADO_SQL).fetchall(),
        "reembolsado_y_reabierto": conexion.execute(REEMBOLSADO_Y_REABIERTO_SQL, {"ajustes": AJUSTES_ANTES_DEL_ENVIO})
        .fetchall(),
    }
