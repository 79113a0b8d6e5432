"""El texto que lee el encargado en la petición de firma (``InterruptOnConfig.description``).

``DescripcionEncargado(pool=..., politica=...)`` es el callable
``(tool_call, state, runtime) -> str`` del middleware. Unas líneas en español con lo que
el encargado necesita para decidir: cliente, pedido y fechas, líneas afectadas (o
productos original y nuevo con sus precios en la tienda del pedido), importe, motivo del
cliente y los motivos de la política. Qué se redacta depende de la regla de la herramienta
(``politica.regla_de``), no de su nombre; el dinero, con ``nucleo.dinero.eur``. Una
operación con redacción propia la trae en su carpeta (``describir`` en su ``regla.py``, con
las piezas de ``politicas.redaccion``); sin ella, se describe con su título, el pedido y
sus campos con las etiquetas de la declaración.

Los motivos salen del veredicto guardado de ese ``tool_call_id``: en ``after_model`` el
``when`` corre antes que la descripción, así que ya está guardado y coincide con lo que
decidió la política (si faltara, se evalúa y se guarda aquí mismo). La descripción se
vuelve a generar al reanudar, como el ``when``: necesita también el contexto del cliente.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from psycopg.rows import dict_row

from nucleo import dinero
from nucleo.contexto import contexto_de
from nucleo.fechas import ZONA_TIENDAS
from nucleo.operacion import OperacionConEfecto
from nucleo.operaciones import OPERACIONES
from operaciones import carpetas
from politicas import redaccion
from politicas.aprobacion import PoliticaAprobacion, hilo_de
from politicas.veredicto import Veredicto

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["CLAVE_DESCRIPCIONES_FIJADAS", "DescripcionEncargado"]

# ``configurable`` de una reanudación: {tool_call_id: descripción} que vio quien firmó.
CLAVE_DESCRIPCIONES_FIJADAS = "descripciones_fijadas"


def _fijada(tool_call_id: Any) -> str | None:
    """La descripción guardada en la pausa, si esta ejecución es su reanudación.

    Al reanudar, LangGraph vuelve a ejecutar el nodo de la pausa hasta ``interrupt()``, que
    devuelve la decisión sin mirar la petición: la descripción se volvería a calcular (y a
    leer de la base) para nada. Quien reanuda pasa las que se enseñaron al firmar.
    """
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # fuera de una ejecución del grafo (pruebas unitarias)
        return None
    return (configurable.get(CLAVE_DESCRIPCIONES_FIJADAS) or {}).get(tool_call_id)


SELECT_DATOS_DESCRIPCION_SQL = """
SELECT c.nombre AS cliente,
       p.id AS pedido,
       p.estado,
       to_char(p.fecha AT TIME ZONE %(zona)s, 'DD/MM/YYYY') AS fecha,
       to_char(p.entregado_en AT TIME ZONE %(zona)s, 'DD/MM/YYYY') AS entregado_en,
       floor(extract(epoch FROM now() - p.entregado_en) / 86400)::int AS dias_entrega,
       p.importe,
       (SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'linea', l.linea, 'sku', l.sku, 'nombre', pr.nombre,
                   'unidades', l.unidades, 'importe', l.importe::text) ORDER BY l.linea), '[]')
          FROM lineas_pedido l JOIN productos pr ON pr.sku = l.sku
         WHERE l.pedido_id = p.id) AS lineas,
       (SELECT coalesce(jsonb_object_agg(pr.sku, jsonb_build_object(
                   'nombre', pr.nombre, 'pvp', pt.pvp::text)), '{}')
          FROM productos pr
          LEFT JOIN precios_tienda pt ON pt.sku = pr.sku AND pt.tienda = coalesce(p.tienda, c.tienda)
         WHERE pr.sku = ANY(%(skus)s::text[])) AS productos
FROM (VALUES (1)) AS una (fila)
LEFT JOIN clientes c ON c.id = %(cliente_id)s::text
LEFT JOIN pedidos p ON p.id = %(pedido)s::text AND p.cliente_id = %(cliente_id)s::text
"""

class DescripcionEncargado:
    """``InterruptOnConfig.description``: ``(tool_call, state, runtime) -> str``.

    ``runtime`` es el ``Runtime`` del grafo (sin ``config``): el thread_id sale de
    ``runtime.execution_info`` o de ``get_config()``. Una sentencia (los datos del
    pedido): el veredicto ya lo recuerda ``politica``, que lo acaba de dar en el ``when``.
    ``titulos``: ``herramienta -> título`` (``titulo_encargado`` del registro) para las
    herramientas sin regla conocida. ``operaciones``: las declaradas (las de una regla sin
    redacción propia se describen con sus campos).

    Raises:
        ContextoAusente: sin contexto del cliente (p. ej. reanudar sin ``context=``).
    """

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        politica: PoliticaAprobacion,
        titulos: Mapping[str, str] | None = None,
        operaciones: Sequence[OperacionConEfecto] = OPERACIONES,
    ) -> None:
        if not (hasattr(politica, "evaluar") and hasattr(politica, "regla_de")):
            raise TypeError("politica debe ser la PoliticaAprobacion del when")
        self._pool = pool
        self._politica = politica
        self._titulos = dict(titulos or {})
        # La redacción propia de una operación (``describir`` en su regla.py) o sus campos.
        propias = {n: getattr(carpetas.pieza(n, "regla"), "describir", None) for n in carpetas.nombres()}
        self._redactores: dict[str, Callable[..., list[str]]] = {
            op.regla: propias.get(op.nombre) or functools.partial(self._por_campos, op) for op in operaciones
        }
        self._redactores["consulta"] = self._consulta

    def __call__(self, tool_call: Mapping[str, Any], state: Any, runtime: Any) -> str:
        fijada = _fijada(tool_call.get("id"))
        if fijada is not None:
            return fijada
        contexto = contexto_de(runtime)
        herramienta = tool_call.get("name") or ""
        args = dict(tool_call.get("args") or {})
        veredicto = self._politica.evaluar(
            thread_id=hilo_de(runtime),
            tool_call_id=tool_call.get("id"),
            herramienta=herramienta,
            args=args,
            contexto=contexto,
        )
        skus = [s for s in (args.get("sku_original"), args.get("sku_nuevo")) if isinstance(s, str)]
        pedido = args.get("pedido") if isinstance(args.get("pedido"), str) else None
        with self._pool.connection() as conexion, conexion.cursor(row_factory=dict_row) as cur:
            datos = cur.execute(
                SELECT_DATOS_DESCRIPCION_SQL,
                {"zona": ZONA_TIENDAS, "cliente_id": contexto.cliente_id, "pedido": pedido,
                 "skus": skus},
            ).fetchone()
        cliente = f"{datos['cliente'] or contexto.nombre} (cliente {contexto.cliente_id})"
        redactor = self._redactores.get(self._politica.regla_de(herramienta) or "")
        if redactor is not None:
            lineas = redactor(args, datos, cliente)
        else:
            titulo = self._titulos.get(herramienta) or "Operación"
            lineas = [f"{titulo} ({herramienta}) solicitada para {cliente}."]
        lineas.append(self._motivos(veredicto))
        return "\n".join(lineas)

    def _por_campos(
        self, operacion: OperacionConEfecto, args: Mapping[str, Any], datos: Mapping[str, Any], cliente: str
    ) -> list[str]:
        """Una operación sin redacción propia: su título, el pedido y cada campo declarado."""
        texto = [f"{operacion.titulo} para {cliente}."]
        if "pedido" in args:
            texto.append(redaccion.pedido(args, datos))
        for campo in operacion.campos:
            valor = args.get(campo.nombre)
            if campo.nombre == "pedido" or valor in (None, "", [], {}):
                continue
            importe = dinero.importe_o_none(valor) if campo.dinero else None
            legible = dinero.eur(importe) if importe is not None else redaccion.del_cliente(
                ", ".join(map(str, valor)) if isinstance(valor, list | tuple) else valor)
            texto.append(f"{campo.etiqueta}: {legible}.")
        return texto

    @staticmethod
    def _consulta(args: Mapping[str, Any], datos: Mapping[str, Any], cliente: str) -> list[str]:
        del datos  # una consulta no va de un pedido
        return [
            f"Consulta de {cliente} para el encargado:",
            f"«{redaccion.del_cliente(args.get('pregunta', ''))}»",
        ]

    @staticmethod
    def _motivos(veredicto: Veredicto) -> str:
        if not veredicto.motivos:
            return "Política: no exige firma."
        return "Motivos de la política: " + "; ".join(veredicto.motivos) + "."
