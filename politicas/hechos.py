"""Los hechos sobre los que deciden las reglas, y la única consulta que los lee.

Un veredicto nuevo son dos sentencias: esta consulta de hechos y el INSERT del veredicto;
uno ya guardado, una (la misma consulta lo devuelve y no lee ninguna tabla de negocio).

La consulta de una regla tiene siempre la misma forma (``consulta_de_hechos``):

- ``previa``: el veredicto guardado de ``(thread_id, tool_call_id)``, si existe;
- ``tienda``: los umbrales de la tienda con sus defectos (``politicas.defectos``), como
  columnas con el nombre de ``politicas_tienda`` (``limite_reembolso``, ``version``...);
- ``hechos``: ``tienda`` más los hechos que pide la regla, cada uno una expresión SQL
  escalar sobre ``t`` (la tienda) y ``p`` (el pedido del cliente, ``LEFT JOIN``: sin
  pedido todas sus columnas son NULL). ``WHERE NOT EXISTS (SELECT 1 FROM previa)`` es un
  filtro de una sola vez: con veredicto guardado no se calcula ningún hecho. Trampa:
  sin ``MATERIALIZED`` el planificador funde ``hechos`` con el join final, el filtro pasa
  a ser un filtro del join y los hechos se calculan igual para descartarlos (EXPLAIN
  ANALYZE; lo comprueba tests/integracion/test_politicas.py).

Añadir un hecho es añadir un ``Hecho`` a ``CATALOGO`` (p. ej. las unidades ya
compensadas de un pedido) y nombrarlo en las reglas que lo usen. Los hechos propios de una
operación con carpeta van en su ``politica.py``, como datos (``HECHOS``: los argumentos de
cada ``Hecho``), y ``CATALOGO`` los junta con estos. Sus parámetros
``%(nombre)s`` los aporta la regla (``Regla.parametros``), salvo los comunes
(``PARAMETROS_COMUNES``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from psycopg import sql

from operaciones import carpetas
from politicas.defectos import DEFECTOS, columnas_con_defecto
from politicas.lectura_matriz import MATRIZ_VIGENTE_JSON_SQL

__all__ = [
    "CATALOGO",
    "COLUMNAS_PREVIA",
    "PARAMETROS_COMUNES",
    "SELECT_EN_REVISION_SQL",
    "ConsultaHechos",
    "Hecho",
    "consulta_de_hechos",
]

# Los pone la política en cada consulta: la llamada (hilo, id, herramienta y sus args como
# JSON), el cliente y el pedido de sus args.
PARAMETROS_COMUNES = frozenset(
    {"thread_id", "tool_call_id", "tienda", "cliente_id", "pedido", "herramienta", "args"}
)


@dataclass(frozen=True)
class Hecho:
    """Un dato para decidir: ``sql`` es una expresión escalar sobre ``t`` y ``p``."""

    nombre: str
    sql: str
    parametros: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.nombre.isidentifier():
            raise ValueError(f"nombre de hecho no válido: {self.nombre!r}")


# El hilo de la reserva más antigua de otra conversación del cliente sobre las mismas
# unidades del pedido (sql/029, ``reservas_pendientes``), o nada. La usan el hecho
# ``en_revision`` y la política al guardar un veredicto que pide firma, bajo el candado del
# cliente (``politicas.aprobacion``): dos pausas a la vez por lo mismo no abren dos tarjetas.
SELECT_EN_REVISION_SQL = (
    "SELECT r.thread_id FROM reservas_pendientes r"
    " WHERE r.cliente_id = %(cliente_id)s::text AND r.thread_id <> %(thread_id)s::text"
    " AND r.pedido_id = %(pedido)s::text AND (r.lineas IS NULL"
    " OR lineas_de_accion(%(pedido)s::text, %(herramienta)s::text, %(args)s::jsonb) IS NULL"
    " OR r.lineas && lineas_de_accion(%(pedido)s::text, %(herramienta)s::text, %(args)s::jsonb))"
    " ORDER BY r.creada LIMIT 1"
)

_COMUNES = (
        Hecho("pedido_existe", "p.id IS NOT NULL"),
        Hecho("estado_pedido", "p.estado"),
        Hecho("entregado_en", "p.entregado_en"),
        Hecho("importe_pedido", "p.importe"),
        Hecho("dias_entregado", "floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int"),
        Hecho(
            "devoluciones_recientes",
            "(SELECT count(*)::int FROM devoluciones d"
            " WHERE d.cliente_id = %(cliente_id)s::text"
            " AND d.creada > now() - make_interval(days => t.ventana_devoluciones_dias))",
        ),
        Hecho(
            "sku_original_en_pedido",
            "EXISTS (SELECT 1 FROM lineas_pedido l"
            " WHERE l.pedido_id = p.id AND l.sku = %(sku_original)s::text)",
            frozenset({"sku_original"}),
        ),
        # Cómo lee el producto quien firma: su nombre, no su SKU.
        Hecho("nombre_original", "(SELECT pr.nombre FROM productos pr WHERE pr.sku = %(sku_original)s::text)",
              frozenset({"sku_original"})),
        Hecho("nombre_nuevo", "(SELECT pr.nombre FROM productos pr WHERE pr.sku = %(sku_nuevo)s::text)",
              frozenset({"sku_nuevo"})),
        Hecho(
            "pvp_original",
            "(SELECT pr.pvp FROM precios_tienda pr WHERE pr.sku = %(sku_original)s::text"
            " AND pr.tienda = coalesce(p.tienda, %(tienda)s::text))",
            frozenset({"sku_original"}),
        ),
        # La elegibilidad de devoluciones y cambios vive en un solo sitio, la vista
        # elegibilidad_pedidos (sql/007_libro.sql), que leen también las herramientas.
        # Como JSON en una sola subconsulta: solo se usan booleanos y recuentos.
        Hecho(
            "elegibilidad",
            "(SELECT jsonb_build_object('entregado', e.entregado, 'estado', e.estado,"
            " 'dias_desde_entrega', e.dias_desde_entrega, 'ventana_dias', e.ventana_dias,"
            " 'dentro_de_ventana', e.dentro_de_ventana, 'reembolsos', e.reembolsos,"
            " 'sustituciones', e.sustituciones, 'unidades_libres', e.unidades_libres)"
            " FROM elegibilidad_pedidos e WHERE e.pedido_id = p.id)",
        ),
        # Unidades del producto original sin reembolsar ni cambiar (libro_lineas): sin
        # ninguna, el cambio es imposible y no se pide firma (lo rechaza la herramienta).
        Hecho(
            "libres_sku_original",
            "(SELECT coalesce(sum(ll.unidades_libres), 0)::int FROM libro_lineas ll"
            " WHERE ll.pedido_id = p.id AND ll.sku = %(sku_original)s::text)",
            frozenset({"sku_original"}),
        ),
        # El cambio de dirección: lo que vale el pedido y adónde va ahora (sql/019).
        Hecho("importe_pedido", "p.importe"),
        Hecho(
            "direccion_envio",
            "CASE WHEN p.codigo_postal IS NOT NULL THEN jsonb_build_object('calle', p.calle,"
            " 'codigo_postal', p.codigo_postal, 'localidad', p.localidad, 'provincia', p.provincia) END",
        ),
        # Vale de compensación (sql/018_vale.sql): lo pagado por la línea que compensa, los
        # vales del cliente en la ventana de «uno por cliente» y las unidades de la línea
        # ya reembolsadas o cambiadas (un vale encima es compensar dos veces).
        Hecho(
            "importe_linea_vale",
            "(SELECT l.unidades * l.precio_unitario FROM lineas_pedido l"
            " WHERE l.pedido_id = p.id AND l.linea = %(linea)s::int)",
            frozenset({"linea"}),
        ),
        Hecho(
            "vales_cliente_recientes",
            "(SELECT count(*)::int FROM vales v WHERE v.cliente_id = %(cliente_id)s::text"
            " AND v.estado <> 'anulado'"
            " AND v.creado > now() - make_interval(days => %(ventana_vales)s::int))",
            frozenset({"ventana_vales"}),
        ),
        Hecho(
            "compensaciones_linea_vale",
            "(SELECT (ll.unidades - ll.unidades_libres)::int FROM libro_lineas ll"
            " WHERE ll.pedido_id = p.id AND ll.linea = %(linea)s::int)",
            frozenset({"linea"}),
        ),
        # Los vales ya dados por un pedido: un reembolso o un cambio después lo mira una persona.
        Hecho("vales_pedido", "(SELECT count(*)::int FROM vales v WHERE v.pedido_id = p.id AND v.estado <> 'anulado')"),
        Hecho(
            "pvp_nuevo",
            "(SELECT pr.pvp FROM precios_tienda pr WHERE pr.sku = %(sku_nuevo)s::text"
            " AND pr.tienda = coalesce(p.tienda, %(tienda)s::text))",
            frozenset({"sku_nuevo"}),
        ),
        # Reenvío (sql/017): días desde que salió el pedido y la línea que se reenvía, con
        # sus unidades libres y ya reenviadas en el libro, los reenvíos previos de la línea
        # y el stock del producto en la tienda del pedido.
        Hecho("enviado_en", "p.enviado_en"),
        Hecho("dias_enviado", "floor(extract(epoch FROM now() - p.enviado_en) / 86400)::int"),
        Hecho(
            "linea_reenvio",
            "(SELECT jsonb_build_object('sku', l.sku, 'nombre', pr.nombre,"
            " 'precio', l.precio_unitario::text, 'unidades', l.unidades, 'libres', ll.unidades_libres,"
            " 'reenviadas', (SELECT count(*) FROM compensaciones_unidad c WHERE c.pedido_id = l.pedido_id"
            " AND c.linea = l.linea AND c.reenvio_id IS NOT NULL),"
            " 'reenvios', (SELECT count(*) FROM reenvios r WHERE r.pedido_id = l.pedido_id AND r.linea = l.linea),"
            " 'stock', coalesce((SELECT s.unidades FROM stock s WHERE s.tienda = p.tienda AND s.sku = l.sku), 0),"
            " 'vales', (SELECT count(*) FROM vales v WHERE v.pedido_id = l.pedido_id AND v.linea = l.linea"
            " AND v.estado <> 'anulado'))"
            " FROM lineas_pedido l JOIN productos pr ON pr.sku = l.sku"
            " JOIN libro_lineas ll ON ll.pedido_id = l.pedido_id AND ll.linea = l.linea"
            " WHERE l.pedido_id = p.id AND l.linea = %(linea)s::int)",
            frozenset({"linea"}),
        ),
        # Política serializable (sql/029): otra conversación del cliente tiene ya en la cola de
        # firmas una acción sobre las mismas unidades (el hilo de la más antigua), y cuántas
        # acciones sobre este pedido rechazó un encargado (o el plazo) en la ventana de
        # devoluciones: lo rechazado no sale sin firma por otra operación.
        Hecho("en_revision", f"({SELECT_EN_REVISION_SQL.replace('%(pedido)s::text', 'p.id')})"),
        Hecho(
            "rechazadas_pedido",
            "(SELECT count(*)::int FROM acciones_rechazadas x WHERE x.pedido_id = p.id"
            " AND x.decidida > now() - make_interval(days => t.ventana_devoluciones_dias))",
        ),
)


def _de_las_carpetas() -> tuple[Hecho, ...]:
    """Los ``HECHOS`` (datos) del ``politica.py`` de cada carpeta; uno que repite el nombre
    de otro con otra SQL es un error (dos reglas leerían cosas distintas con el mismo nombre)."""
    propios = [Hecho(h["nombre"], h["sql"], frozenset(h.get("parametros", ())))
               for modulo in carpetas.piezas("politica") for h in getattr(modulo, "HECHOS", ())]
    vistos = {h.nombre: h for h in _COMUNES}
    for hecho in propios:
        if vistos.setdefault(hecho.nombre, hecho) != hecho:
            raise ValueError(f"el hecho {hecho.nombre} está declarado dos veces con distinta SQL")
    return tuple(propios)


CATALOGO: Mapping[str, Hecho] = {h.nombre: h for h in (*_COMUNES, *_de_las_carpetas())}

# Lo que devuelve ``previa`` (y ``SELECT_EVALUACION_SQL``): el veredicto guardado.
COLUMNAS_PREVIA = (
    "requiere_encargado", "motivos", "umbrales", "herramienta", "version_politica",
    "autoridad_importe", "autoridad_firmas", "autoridad_rol", "autoridad_matriz_id",
    "autoridad_regla", "nueva", "matriz_autoridad",
)

_PLANTILLA = sql.SQL(
    """WITH previa AS (
    SELECT requiere_encargado, motivos, umbrales, herramienta, version_politica,
           autoridad_importe, autoridad_firmas, autoridad_rol, autoridad_matriz_id,
           autoridad_regla, false AS nueva
    FROM evaluaciones_politica
    WHERE {filtro_previa}
),
tienda AS (
    SELECT {umbrales}
    FROM (VALUES (1)) AS una (fila)
    LEFT JOIN politicas_tienda pt ON pt.tienda = %(tienda)s::text
),
hechos AS MATERIALIZED (
    SELECT t.*, {matriz} AS matriz_autoridad{hechos}
    FROM tienda t
    LEFT JOIN pedidos p ON p.id = %(pedido)s::text AND p.cliente_id = %(cliente_id)s::text
    WHERE NOT EXISTS (SELECT 1 FROM previa)
)
SELECT v.*, h.*
FROM (VALUES (1)) AS una (fila)
LEFT JOIN previa v ON true
LEFT JOIN hechos h ON true"""
)


@dataclass(frozen=True)
class ConsultaHechos:
    """La sentencia de hechos de una regla y los parámetros propios que necesita."""

    sql: str
    parametros: frozenset[str]


_PREVIA_DE_LA_LLAMADA = sql.SQL("thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s")
# Al revalidar en el efecto los hechos se calculan siempre: el veredicto guardado ya se leyó.
_SIN_PREVIA = sql.SQL("false")


@functools.cache
def consulta_de_hechos(nombres: tuple[str, ...], *, revalidar: bool = False) -> ConsultaHechos:
    """La consulta de ``previa`` + tienda + los hechos ``nombres`` (en ese orden).

    ``revalidar``: sin ``previa`` (nunca devuelve el veredicto guardado): los hechos de
    ahora, para volver a decidir dentro de la transacción del efecto.

    Raises:
        ValueError: un hecho que no está en ``CATALOGO`` o cuyo nombre choca con una
            columna del veredicto o de la tienda (la fila mezcla las tres).
    """
    desconocidos = [n for n in nombres if n not in CATALOGO]
    if desconocidos:
        raise ValueError(f"hechos desconocidos: {desconocidos}")
    choques = set(nombres) & (set(COLUMNAS_PREVIA) | set(DEFECTOS))
    if choques or len(set(nombres)) != len(nombres):
        raise ValueError(f"nombres de hechos repetidos o reservados: {sorted(choques) or nombres}")
    hechos = sql.SQL("").join(
        sql.SQL(",\n           {expresion} AS {nombre}").format(
            expresion=sql.SQL(CATALOGO[n].sql), nombre=sql.SQL(n)
        )
        for n in nombres
    )
    texto = _PLANTILLA.format(
        umbrales=columnas_con_defecto("pt"), hechos=hechos, matriz=sql.SQL(MATRIZ_VIGENTE_JSON_SQL),
        filtro_previa=_SIN_PREVIA if revalidar else _PREVIA_DE_LA_LLAMADA,
    ).as_string()
    propios = frozenset().union(*(CATALOGO[n].parametros for n in nombres))
    return ConsultaHechos(sql=texto, parametros=propios)
