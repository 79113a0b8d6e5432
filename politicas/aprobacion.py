"""Política de aprobación: qué llamadas a herramientas necesitan la firma del encargado.

``PoliticaAprobacion.necesita_encargado`` es el ``when`` de ``InterruptOnConfig`` en el
``HumanInTheLoopMiddleware`` de LangChain (modo ``batched``). Decide con las tablas de
negocio (pedidos, devoluciones, productos, politicas_tienda), nunca con el prompt ni con
el estado del agente.

Contrato:

- Devuelve siempre un ``bool`` de verdad. El middleware trata ``None`` (y cualquier
  valor falso) como "no interrumpir": la herramienta se ejecutaría sin revisión.
- Veredicto estable: el primero de cada ``(thread_id, tool_call_id)`` se guarda en
  ``evaluaciones_politica`` y toda evaluación posterior devuelve el guardado, aunque los
  datos hayan cambiado. Trampa: LangChain vuelve a llamar a ``when`` al reanudar; si
  entonces dijera ``False`` (la ventana de 30 días se desplazó, el encargado subió el
  límite...), el middleware se saltaría la decisión del encargado, incluso un rechazo,
  y ejecutaría la herramienta.
- Una sola sentencia SQL por veredicto: lee el guardado o lo calcula y lo inserta.
- Datos que no cuadran (pedido ajeno o inexistente, SKU desconocido, importe no
  válido): se cierra hacia el lado seguro, requiere encargado con el motivo (la
  herramienta lo rechazará igualmente al ejecutarse). Sin contexto del cliente
  (``runtime.context is None``, p. ej. una reanudación sin ``context=``) se lanza
  ``ContextoAusente``; un error de base de datos se propaga. Las dos cosas paran la
  ejecución sin que corra ninguna herramienta.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from types import MappingProxyType, SimpleNamespace
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from agente.nucleo.contexto import ContextoCliente, contexto_de
from agente.nucleo.errores import ContextoAusente

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)

HERRAMIENTAS_LECTURA = frozenset({"consultar_pedido", "consultar_politica", "stock_alternativas"})
HERRAMIENTAS_CON_FIRMA = ("reembolsar", "sustituir", "consultar_encargado")

# Los mismos valores que los DEFAULT de sql/002_politica.sql (lo comprueba un test):
# una tienda sin fila en politicas_tienda usa estos.
UMBRALES_POR_DEFECTO: Mapping[str, Any] = MappingProxyType(
    {
        "limite_reembolso": Decimal("60.00"),
        "devoluciones_max_30d": 2,
        "ventana_devoluciones_dias": 30,
        "dias_desde_entrega": 30,
        "diferencia_max_sustitucion": Decimal("0.00"),
    }
)

MOTIVO_PEDIDO_NO_ENCONTRADO = "pedido no encontrado para este cliente"
MOTIVO_CONSULTA = "consulta dirigida al encargado"
MOTIVO_IMPORTE_NO_VALIDO = "importe no válido"
_IMPORTE_MAXIMO = Decimal("10000000000")  # numeric(12,2)


@dataclass(frozen=True)
class Veredicto:
    """Resultado de evaluar una llamada.

    ``umbrales`` viene del JSON guardado: el dinero como texto ("60.00"), los días y
    recuentos como enteros. ``nuevo`` es True si esta evaluación lo calculó y guardó,
    False si devolvió uno ya guardado (o si la herramienta es de solo lectura).
    """

    requiere_encargado: bool
    motivos: tuple[str, ...]
    umbrales: Mapping[str, Any] = field(default_factory=dict, hash=False)
    herramienta: str = ""
    nuevo: bool = False

    def como_json(self) -> dict[str, Any]:
        return {
            "requiere_encargado": self.requiere_encargado,
            "motivos": list(self.motivos),
            "umbrales": dict(self.umbrales),
        }


# --- Sentencias -------------------------------------------------------------------
# Las tres EVALUAR_* tienen la misma forma: ``previa`` lee el veredicto guardado; si no
# hay, ``nueva`` lo calcula y lo inserta (ON CONFLICT DO NOTHING). El filtro
# ``NOT EXISTS (SELECT 1 FROM previa)`` es un filtro de una sola vez: con veredicto
# guardado no se lee ninguna tabla de negocio. Cero filas = otra sesión insertó la misma
# clave a la vez (carrera): se relee una vez con SELECT_EVALUACION_SQL.
# El dinero se formatea en español con to_char (separadores fijos, no de locale).

EVALUAR_REEMBOLSO_SQL = """
WITH previa AS (
    SELECT requiere_encargado, motivos, umbrales, herramienta, false AS nueva
    FROM evaluaciones_politica
    WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
),
umbral AS (
    SELECT coalesce(pt.limite_reembolso, %(limite_reembolso)s::numeric(12,2)) AS limite,
           coalesce(pt.devoluciones_max_30d, %(devoluciones_max_30d)s::int) AS devoluciones_max,
           coalesce(pt.ventana_devoluciones_dias, %(ventana_devoluciones_dias)s::int) AS ventana,
           coalesce(pt.dias_desde_entrega, %(dias_desde_entrega)s::int) AS dias_max
    FROM (VALUES (1)) AS una (fila)
    LEFT JOIN politicas_tienda pt ON pt.tienda = %(tienda)s::text
),
pedido AS (
    SELECT p.estado, p.entregado_en,
           floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int AS dias
    FROM pedidos p
    WHERE p.id = %(pedido)s::text AND p.cliente_id = %(cliente_id)s::text
),
hechos AS MATERIALIZED (
    SELECT u.limite, u.devoluciones_max, u.ventana, u.dias_max,
           EXISTS (SELECT 1 FROM pedido) AS existe,
           pe.estado, pe.entregado_en, pe.dias,
           %(importe)s::numeric(12,2) AS importe,
           (SELECT count(*)::int
              FROM devoluciones d
             WHERE d.cliente_id = %(cliente_id)s::text
               AND d.creada > now() - make_interval(days => u.ventana)) AS devoluciones
    FROM umbral u
    LEFT JOIN pedido pe ON true
),
evaluacion AS (
    SELECT h.*, array_remove(ARRAY[
        CASE WHEN NOT h.existe THEN 'pedido no encontrado para este cliente' END,
        CASE
            WHEN h.importe IS NULL THEN 'importe no válido'
            WHEN h.importe > h.limite THEN
                'importe ' || translate(to_char(h.importe, 'FM9,999,999,990.00'), ',.', '.,')
                || ' EUR supera el límite de '
                || translate(to_char(h.limite, 'FM9,999,999,990.00'), ',.', '.,')
                || ' EUR de la tienda'
        END,
        CASE WHEN h.devoluciones >= h.devoluciones_max THEN
            h.devoluciones::text
            || CASE WHEN h.devoluciones = 1 THEN ' devolución' ELSE ' devoluciones' END
            || CASE WHEN h.ventana = 1 THEN ' en el último día'
                    ELSE ' en los últimos ' || h.ventana::text || ' días' END
        END,
        CASE
            WHEN NOT h.existe THEN NULL
            WHEN h.estado = 'cancelado' THEN 'pedido cancelado'
            WHEN h.entregado_en IS NULL THEN 'pedido aún no entregado'
            WHEN h.dias > h.dias_max THEN
                'entregado hace ' || h.dias::text
                || CASE WHEN h.dias = 1 THEN ' día' ELSE ' días' END
                || ' (límite ' || h.dias_max::text || ')'
        END
    ]::text[], NULL) AS lista
    FROM hechos h
),
nueva AS (
    INSERT INTO evaluaciones_politica
        (thread_id, tool_call_id, herramienta, args, tienda, cliente_id,
         requiere_encargado, motivos, umbrales)
    SELECT %(thread_id)s, %(tool_call_id)s, %(herramienta)s, %(args)s, %(tienda)s,
           %(cliente_id)s, cardinality(e.lista) > 0, to_jsonb(e.lista),
           jsonb_build_object(
               'limite_reembolso', e.limite::text,
               'devoluciones_max_30d', e.devoluciones_max,
               'ventana_devoluciones_dias', e.ventana,
               'dias_desde_entrega', e.dias_max)
    FROM evaluacion e
    WHERE NOT EXISTS (SELECT 1 FROM previa)
    ON CONFLICT (thread_id, tool_call_id) DO NOTHING
    RETURNING requiere_encargado, motivos, umbrales, herramienta, true AS nueva
)
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM previa
UNION ALL
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM nueva
"""

EVALUAR_SUSTITUCION_SQL = """
WITH previa AS (
    SELECT requiere_encargado, motivos, umbrales, herramienta, false AS nueva
    FROM evaluaciones_politica
    WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
),
umbral AS (
    SELECT coalesce(pt.diferencia_max_sustitucion,
                    %(diferencia_max_sustitucion)s::numeric(12,2)) AS diferencia_max
    FROM (VALUES (1)) AS una (fila)
    LEFT JOIN politicas_tienda pt ON pt.tienda = %(tienda)s::text
),
hechos AS MATERIALIZED (
    SELECT u.diferencia_max,
           EXISTS (SELECT 1 FROM pedidos p
                    WHERE p.id = %(pedido)s::text AND p.cliente_id = %(cliente_id)s::text) AS existe,
           EXISTS (SELECT 1 FROM pedidos p
                     JOIN lineas_pedido l ON l.pedido_id = p.id
                    WHERE p.id = %(pedido)s::text AND p.cliente_id = %(cliente_id)s::text
                      AND l.sku = %(sku_original)s::text) AS en_pedido,
           o.pvp AS pvp_original,
           n.pvp AS pvp_nuevo,
           n.pvp - o.pvp AS diferencia
    FROM umbral u
    LEFT JOIN productos o ON o.sku = %(sku_original)s::text
    LEFT JOIN productos n ON n.sku = %(sku_nuevo)s::text
),
evaluacion AS (
    SELECT h.*, array_remove(ARRAY[
        CASE WHEN NOT h.existe THEN 'pedido no encontrado para este cliente' END,
        CASE
            WHEN h.pvp_original IS NULL THEN
                'producto no encontrado: ' || coalesce(%(sku_original)s::text, '(sin indicar)')
            WHEN h.existe AND NOT h.en_pedido THEN
                'el producto ' || %(sku_original)s::text || ' no está en el pedido'
        END,
        CASE WHEN h.pvp_nuevo IS NULL THEN
            'producto no encontrado: ' || coalesce(%(sku_nuevo)s::text, '(sin indicar)')
        END,
        CASE WHEN h.diferencia > h.diferencia_max THEN
            'el producto nuevo cuesta '
            || translate(to_char(h.diferencia, 'FM9,999,999,990.00'), ',.', '.,')
            || ' EUR más que el original'
            || CASE WHEN h.diferencia_max > 0 THEN
                   ' (límite '
                   || translate(to_char(h.diferencia_max, 'FM9,999,999,990.00'), ',.', '.,')
                   || ' EUR)'
               ELSE '' END
        END
    ]::text[], NULL) AS lista
    FROM hechos h
),
nueva AS (
    INSERT INTO evaluaciones_politica
        (thread_id, tool_call_id, herramienta, args, tienda, cliente_id,
         requiere_encargado, motivos, umbrales)
    SELECT %(thread_id)s, %(tool_call_id)s, %(herramienta)s, %(args)s, %(tienda)s,
           %(cliente_id)s, cardinality(e.lista) > 0, to_jsonb(e.lista),
           -- Los precios vistos al proponer: sustituir caduca la firma si cambian.
           jsonb_build_object('diferencia_max_sustitucion', e.diferencia_max::text,
                              'pvp_original', e.pvp_original::text,
                              'pvp_nuevo', e.pvp_nuevo::text)
    FROM evaluacion e
    WHERE NOT EXISTS (SELECT 1 FROM previa)
    ON CONFLICT (thread_id, tool_call_id) DO NOTHING
    RETURNING requiere_encargado, motivos, umbrales, herramienta, true AS nueva
)
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM previa
UNION ALL
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM nueva
"""

# Veredicto que no depende de datos de negocio (consultar_encargado, herramienta sin
# regla): se guarda igual, para que la bandeja muestre sus motivos.
EVALUAR_FIJA_SQL = """
WITH previa AS (
    SELECT requiere_encargado, motivos, umbrales, herramienta, false AS nueva
    FROM evaluaciones_politica
    WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
),
nueva AS (
    INSERT INTO evaluaciones_politica
        (thread_id, tool_call_id, herramienta, args, tienda, cliente_id,
         requiere_encargado, motivos, umbrales)
    SELECT %(thread_id)s, %(tool_call_id)s, %(herramienta)s, %(args)s, %(tienda)s,
           %(cliente_id)s, %(requiere_encargado)s, %(motivos)s, %(umbrales)s
    WHERE NOT EXISTS (SELECT 1 FROM previa)
    ON CONFLICT (thread_id, tool_call_id) DO NOTHING
    RETURNING requiere_encargado, motivos, umbrales, herramienta, true AS nueva
)
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM previa
UNION ALL
SELECT requiere_encargado, motivos, umbrales, herramienta, nueva FROM nueva
"""

SELECT_EVALUACION_SQL = """
SELECT requiere_encargado, motivos, umbrales, herramienta, false AS nueva
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

SELECT_EVALUACIONES_HILO_SQL = """
SELECT tool_call_id, requiere_encargado, motivos, umbrales, herramienta, false AS nueva
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s
ORDER BY evaluada, tool_call_id
"""


# --- Lectura de veredictos guardados (bandeja, API, descripción) ------------------


def _veredicto_de_fila(fila: Mapping[str, Any]) -> Veredicto:
    return Veredicto(
        requiere_encargado=bool(fila["requiere_encargado"]),
        motivos=tuple(str(m) for m in fila["motivos"] or ()),
        umbrales=dict(fila["umbrales"] or {}),
        herramienta=fila["herramienta"],
        nuevo=bool(fila["nueva"]),
    )


def leer_veredicto(
    conexion: psycopg.Connection, *, thread_id: str, tool_call_id: str
) -> Veredicto | None:
    """El veredicto guardado de una llamada, o None si nunca se evaluó."""
    with conexion.cursor(row_factory=dict_row) as cur:
        fila = cur.execute(
            SELECT_EVALUACION_SQL, {"thread_id": thread_id, "tool_call_id": tool_call_id}
        ).fetchone()
    return _veredicto_de_fila(fila) if fila else None


def veredictos_de_hilo(conexion: psycopg.Connection, *, thread_id: str) -> dict[str, Veredicto]:
    """Los veredictos guardados de un hilo, por ``tool_call_id`` (orden de evaluación)."""
    with conexion.cursor(row_factory=dict_row) as cur:
        filas = cur.execute(SELECT_EVALUACIONES_HILO_SQL, {"thread_id": thread_id}).fetchall()
    return {fila["tool_call_id"]: _veredicto_de_fila(fila) for fila in filas}


# --- Utilidades ------------------------------------------------------------------


def hilo_de(runtime: Any) -> str:
    """El ``thread_id`` de la ejecución.

    ``ToolRuntime.config`` (lo que recibe ``when``) es el RunnableConfig; el ``Runtime``
    del grafo (lo que recibe la descripción) no tiene config, pero sí
    ``execution_info.thread_id``; como último recurso, ``get_config()``.
    """
    config = getattr(runtime, "config", None)
    hilo = ((config or {}).get("configurable") or {}).get("thread_id")
    if not hilo:
        hilo = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if not hilo:
        from langgraph.config import get_config

        try:
            hilo = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # fuera de una ejecución del grafo
            hilo = None
    if not hilo:
        raise ContextoAusente(
            "falta el thread_id de la ejecución (config['configurable']['thread_id']): "
            "sin él no se puede guardar un veredicto estable"
        )
    return str(hilo)


def importe_de(valor: Any) -> Decimal | None:
    """El importe pedido como Decimal con dos decimales, o None si no es válido.

    Válido: número finito, > 0, como mucho dos decimales y dentro de numeric(12,2).
    Se aceptan int, Decimal, float y texto con punto decimal ("120.00"), como el
    esquema Decimal de la herramienta.
    """
    if isinstance(valor, bool) or valor is None:
        return None
    try:
        importe = Decimal(str(valor).strip())
    except (InvalidOperation, ValueError):
        return None
    if not importe.is_finite() or importe <= 0 or importe >= _IMPORTE_MAXIMO:
        return None
    redondeado = importe.quantize(Decimal("0.01"))
    return redondeado if redondeado == importe else None


def _texto(valor: Any) -> str | None:
    return valor if isinstance(valor, str) and valor else None


def _json(valor: Any) -> str:
    return json.dumps(valor, ensure_ascii=False, default=str)


# --- La política ------------------------------------------------------------------


class PoliticaAprobacion:
    """Decide si una llamada necesita al encargado y guarda el veredicto.

    Uso::

        politica = PoliticaAprobacion(pool=pool)
        InterruptOnConfig(allowed_decisions=[...], when=politica.necesita_encargado, ...)

    ``pool`` es un ``psycopg_pool.ConnectionPool`` síncrono (el middleware llama a
    ``when`` de forma síncrona incluso con ``ainvoke``) con conexiones en autocommit.
    """

    def __init__(self, *, pool: ConnectionPool, recordados: int = 4096) -> None:
        self._pool = pool
        # El veredicto guardado no cambia nunca: se recuerda en el proceso para que la
        # descripción (justo después del ``when``) y la reevaluación al reanudar en este
        # mismo proceso no vuelvan a la base.
        self._recordados: OrderedDict[tuple[str, str], Veredicto] = OrderedDict()
        self._max_recordados = recordados
        self._cerrojo = threading.Lock()

    def necesita_encargado(self, req: ToolCallRequest) -> bool:
        """El ``when`` del middleware: True si la llamada espera la firma del encargado.

        ``req`` es el ``ToolCallRequest`` que arma el middleware en ``after_model``
        (``tool=None``; ``req.runtime.context`` es el ``ContextoCliente``;
        ``req.runtime.config`` el RunnableConfig con el thread_id). Se vuelve a llamar
        al reanudar: por eso devuelve el veredicto guardado de ese ``tool_call_id``.
        Devuelve un ``bool`` real (``None`` equivaldría a "no interrumpir").

        Raises:
            ContextoAusente: sin contexto del cliente o sin thread_id.
            psycopg.Error, psycopg_pool.PoolTimeout...: cualquier fallo de la base.
        """
        llamada = req.tool_call
        herramienta = llamada.get("name") or ""
        if herramienta in HERRAMIENTAS_LECTURA:
            return False
        veredicto = self.evaluar(
            thread_id=hilo_de(req.runtime),
            tool_call_id=llamada.get("id"),
            herramienta=herramienta,
            args=llamada.get("args"),
            contexto=contexto_de(req.runtime),
        )
        return veredicto.requiere_encargado is True

    def evaluar(
        self,
        *,
        thread_id: str,
        tool_call_id: str | None,
        herramienta: str,
        args: Mapping[str, Any] | None,
        contexto: ContextoCliente | Mapping[str, Any] | None,
    ) -> Veredicto:
        """El veredicto de una llamada: el guardado si existe; si no, lo calcula y guarda.

        Una sentencia SQL (dos solo si otra sesión guardó la misma llamada a la vez).
        Las herramientas de solo lectura devuelven ``requiere_encargado=False`` sin tocar
        la base.
        """
        if herramienta in HERRAMIENTAS_LECTURA:
            return Veredicto(requiere_encargado=False, motivos=(), herramienta=herramienta)
        # Mismo criterio y mensaje que las herramientas (None -> ContextoAusente, dict -> ok).
        contexto = contexto_de(SimpleNamespace(context=contexto))
        if not thread_id:
            raise ContextoAusente("falta el thread_id de la ejecución")
        if not tool_call_id:
            raise ValueError(f"la llamada a {herramienta!r} no tiene tool_call_id")
        with self._cerrojo:
            recordado = self._recordados.get((thread_id, tool_call_id))
        if recordado is not None and recordado.herramienta == herramienta:
            return replace(recordado, nuevo=False)
        args = dict(args or {})
        sql, parametros = self._sentencia(herramienta, args)
        parametros.update(
            thread_id=thread_id,
            tool_call_id=tool_call_id,
            herramienta=herramienta,
            args=Jsonb(args, dumps=_json),
            tienda=contexto.tienda,
            cliente_id=contexto.cliente_id,
        )
        clave = {"thread_id": thread_id, "tool_call_id": tool_call_id}
        with self._pool.connection() as conexion, conexion.cursor(row_factory=dict_row) as cur:
            fila = cur.execute(sql, parametros).fetchone()
            if fila is None:
                # Carrera: otra sesión insertó la misma clave entre nuestra lectura y el
                # INSERT (ON CONFLICT esperó a su commit); su veredicto es el que vale.
                fila = cur.execute(SELECT_EVALUACION_SQL, clave).fetchone()
        if fila is None:
            raise RuntimeError(
                f"veredicto de {thread_id}/{tool_call_id} ni guardado ni legible tras la carrera"
            )
        veredicto = _veredicto_de_fila(fila)
        if veredicto.herramienta != herramienta:
            # La misma clave con otra herramienta no debería existir; ante la duda, firma.
            logger.warning(
                "tool_call_id %s evaluado antes para %s y ahora para %s",
                tool_call_id, veredicto.herramienta, herramienta,
            )
            veredicto = Veredicto(
                requiere_encargado=True,
                motivos=(*veredicto.motivos, "la llamada no coincide con la evaluada antes"),
                umbrales=veredicto.umbrales,
                herramienta=herramienta,
                nuevo=False,
            )
        logger.debug(
            "veredicto %s/%s %s: %s %s", thread_id, tool_call_id, herramienta,
            veredicto.requiere_encargado, list(veredicto.motivos),
        )
        with self._cerrojo:
            self._recordados[(thread_id, tool_call_id)] = veredicto
            while len(self._recordados) > self._max_recordados:
                self._recordados.popitem(last=False)
        return veredicto

    def veredicto_guardado(self, *, thread_id: str, tool_call_id: str) -> Veredicto | None:
        """El veredicto guardado (motivos, umbrales) de una llamada, o None."""
        with self._pool.connection() as conexion:
            return leer_veredicto(conexion, thread_id=thread_id, tool_call_id=tool_call_id)

    @staticmethod
    def _sentencia(herramienta: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        if herramienta == "reembolsar":
            return EVALUAR_REEMBOLSO_SQL, {
                "pedido": _texto(args.get("pedido")),
                "importe": importe_de(args.get("importe")),
                "limite_reembolso": UMBRALES_POR_DEFECTO["limite_reembolso"],
                "devoluciones_max_30d": UMBRALES_POR_DEFECTO["devoluciones_max_30d"],
                "ventana_devoluciones_dias": UMBRALES_POR_DEFECTO["ventana_devoluciones_dias"],
                "dias_desde_entrega": UMBRALES_POR_DEFECTO["dias_desde_entrega"],
            }
        if herramienta == "sustituir":
            return EVALUAR_SUSTITUCION_SQL, {
                "pedido": _texto(args.get("pedido")),
                "sku_original": _texto(args.get("sku_original")),
                "sku_nuevo": _texto(args.get("sku_nuevo")),
                "diferencia_max_sustitucion": UMBRALES_POR_DEFECTO["diferencia_max_sustitucion"],
            }
        if herramienta == "consultar_encargado":
            motivos = [MOTIVO_CONSULTA]
        else:
            # Una herramienta con firma configurada pero sin regla aquí: firma siempre.
            motivos = [f"herramienta sin regla de aprobación: {herramienta or '(sin nombre)'}"]
        return EVALUAR_FIJA_SQL, {
            "requiere_encargado": True,
            "motivos": Jsonb(motivos),
            "umbrales": Jsonb({}),
        }
