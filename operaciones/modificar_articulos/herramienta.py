"""Modificar los artículos de un pedido pendiente: otra talla o color del mismo producto.

Una transacción, con el pedido bloqueado (``FOR UPDATE``) y la línea leída después, en otra
sentencia (la foto de después de esperar al candado): comprueba que el pedido sigue
``pendiente``, que la variante pedida es del mismo modelo (``variantes``), distinta, con
precio y stock en la tienda del pedido; vuelve a decidir la regla bajo el candado del
cliente (``libro.exigir_veredicto_vigente``); mueve el stock en los dos sentidos (la unidad
original vuelve, la nueva sale: ``libro.mover_stock``), cambia la línea (una línea de varias
unidades se parte: la unidad cambiada va a una línea nueva), ajusta el importe del pedido y
apunta la modificación (``MA-...``) y, si hay diferencia, su cobro o su reembolso (concepto
``modificacion``) en la cola de movimientos de la pasarela. Después de confirmar, el
movimiento se ejecuta (``movimientos.ejecutar``); si la pasarela falla, la modificación ya
está hecha y el movimiento queda pendiente: la bandeja lo completa sin mover el dinero dos
veces (la pasarela deduplica por el número del asiento).

Idempotente por (hilo, ``tool_call_id``): repetir la llamada devuelve la misma modificación
(``repetido: true``) y reintenta su movimiento si seguía pendiente; repetirla con otros datos
es un conflicto. Un pedido enviado, entregado o cancelado no se modifica: el error dice por
qué y qué puede hacer el cliente, sin escribir nada.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import psycopg
from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro, movimientos
from caja.pasarela import COBRO, Pasarela
from herramientas import politica_fijada
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, json_resultado, sin_sangria
from herramientas.esquemas import DESCRIPCION_PEDIDO
from herramientas.pedidos import normalizar_id
from nucleo import dinero
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import (
    AprobacionCaducada,
    ConflictoIdempotencia,
    ErrorDominio,
    ErrorPasarela,
)
from nucleo.puertos import Revalidador
from operaciones.modificar_articulos.declaracion import MODIFICACION

__all__ = ["MAX_POR_TURNO", "ModificarArticulosArgs", "crear", "crear_modificar_articulos", "modificar_articulos",
           "no_pendiente"]

# Una modificación por turno: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 1

SELECT_MODIFICACION_POR_CLAVE_SQL = """
SELECT m.id, m.numero, m.pedido_id, m.cliente_id, m.tienda, m.linea, m.linea_nueva, m.sku_original,
       m.sku_nuevo, m.diferencia, m.liquidacion, m.clave_idempotencia, m.thread_id, m.tool_call_id,
       m.trace_id, po.nombre AS nombre_original, pn.nombre AS nombre_nuevo, vn.talla, vn.color
FROM modificaciones_articulos m
JOIN productos po ON po.sku = m.sku_original
JOIN productos pn ON pn.sku = m.sku_nuevo
LEFT JOIN variantes vn ON vn.sku = m.sku_nuevo
WHERE m.clave_idempotencia = %(clave)s
"""

# El estado del pedido, leído después de bloquearlo (la foto de después de esperar).
SELECT_ESTADO_SQL = "SELECT estado FROM pedidos WHERE id = %(pedido)s"

# La línea y la variante pedida de su mismo modelo (lo que no se pide, como está), con su
# stock; en su propia sentencia, después de bloquear el pedido (docs/trampas.md).
SELECT_LINEA_Y_VARIANTE_SQL = """
SELECT l.linea, l.sku, l.unidades, l.precio_unitario, pr.nombre, v.modelo,
       v2.sku AS sku_nuevo, pn.nombre AS nombre_nuevo,
       (SELECT coalesce(jsonb_agg(concat_ws(' ', 'talla ' || o.talla, 'color ' || o.color) ORDER BY o.sku), '[]')
        FROM variantes o JOIN stock so ON so.sku = o.sku AND so.tienda = %(tienda)s
        WHERE o.modelo = v.modelo AND o.sku <> l.sku AND so.unidades > 0) AS opciones
FROM lineas_pedido l
JOIN productos pr ON pr.sku = l.sku
LEFT JOIN variantes v ON v.sku = l.sku
LEFT JOIN variantes v2 ON v2.modelo = v.modelo
     AND upper(coalesce(v2.talla, '')) = upper(coalesce(%(talla)s, v.talla, ''))
     AND lower(coalesce(v2.color, '')) = lower(coalesce(regexp_replace(%(color)s, '^(blanc|negr|roj|amarill)a$', '\\1o', 'i'),
                                                        v.color, ''))
LEFT JOIN productos pn ON pn.sku = v2.sku
WHERE l.pedido_id = %(pedido)s AND l.linea = %(linea)s
"""

# El precio de la variante nueva en la tienda del pedido, bloqueado en su propia sentencia: un
# cambio de precio a la vez espera a que esta transacción termine.
SELECT_PRECIO_SQL = "SELECT pvp FROM precios_tienda WHERE tienda = %(tienda)s AND sku = %(sku)s FOR SHARE"

# Sin bloquear: solo para decir pronto «no hay stock» con las opciones; lo que cuenta es
# ``libro.mover_stock`` (un UPDATE que no baja de cero), después del candado del cliente.
HAY_STOCK_SQL = "SELECT 1 FROM stock WHERE tienda = %(tienda)s AND sku = %(sku)s AND unidades > 0"

CAMBIAR_LINEA_SQL = """
UPDATE lineas_pedido SET sku = %(sku)s, precio_unitario = %(precio)s
WHERE pedido_id = %(pedido)s AND linea = %(linea)s
"""
QUITAR_UNIDAD_SQL = """
UPDATE lineas_pedido SET unidades = unidades - 1 WHERE pedido_id = %(pedido)s AND linea = %(linea)s
"""
LINEA_NUEVA_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
SELECT %(pedido)s, max(linea) + 1, %(sku)s, 1, %(precio)s FROM lineas_pedido WHERE pedido_id = %(pedido)s
RETURNING linea
"""
AJUSTAR_IMPORTE_SQL = "UPDATE pedidos SET importe = importe + %(diferencia)s WHERE id = %(pedido)s"

INSERT_MODIFICACION_SQL = """
INSERT INTO modificaciones_articulos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
                                      linea, linea_nueva, sku_original, sku_nuevo, precio_original,
                                      precio_nuevo, diferencia, liquidacion, aprobado_por, trace_id)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s, %(tienda)s,
        %(linea)s, %(linea_nueva)s, %(sku_original)s, %(sku_nuevo)s, %(precio_original)s,
        %(precio_nuevo)s, %(diferencia)s, %(liquidacion)s, %(aprobado_por)s, %(trace_id)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

# La diferencia en la cola de movimientos (caja/movimientos.py): la clave de
# idempotencia del asiento es la de la modificación más «:diferencia»; uno por modificación.
INSERT_REEMBOLSO_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda, importe,
                        motivo, concepto, modificacion_id, trace_id, proximo_intento)
VALUES (%(clave)s || ':diferencia', %(thread_id)s, %(tool_call_id)s, %(pedido_id)s, %(cliente_id)s, %(tienda)s,
        %(importe)s, %(motivo)s, 'modificacion', %(id)s, %(trace_id)s, now() + make_interval(secs => %(reserva)s))
"""
INSERT_COBRO_SQL = """
INSERT INTO cobros (clave_idempotencia, modificacion_id, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
                    importe, trace_id, proximo_intento)
VALUES (%(clave)s || ':diferencia', %(id)s, %(thread_id)s, %(tool_call_id)s, %(pedido_id)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(trace_id)s, now() + make_interval(secs => %(reserva)s))
"""
SELECT_MOVIMIENTO_SQL = """
SELECT 'reembolso' AS tipo, id FROM reembolsos WHERE modificacion_id = %(id)s
UNION ALL SELECT 'cobro', id FROM cobros WHERE modificacion_id = %(id)s
"""

# Lo que puede hacer el cliente cuando el pedido ya salió (lo lee el modelo y se lo dice).
ALTERNATIVAS = ("cuando lo recibas, puedes pedir el cambio de ese artículo por otra talla o color "
                "(un cambio tras la entrega) o devolverlo y que te reembolsemos")


# Los colores que cambian con el género (la misma expresión que las consultas de la variante).
RE_FEMENINO = re.compile(r"^(blanc|negr|roj|amarill)a$")


class _YaHecha(Exception):
    """Deshace la transacción: la misma clave se confirmó en otra a la vez."""


def _color(color: str | None) -> str | None:
    """El color como lo guardan las variantes: en minúsculas y en masculino («blanca» -> «blanco»)."""
    return RE_FEMENINO.sub(r"\1o", (color or "").strip().lower()) or None


def no_pendiente(pedido: str, estado: str) -> str:
    """Por qué un pedido que no está pendiente no se modifica, y qué se puede hacer."""
    if estado == "cancelado":
        return f"el pedido {pedido} está cancelado: no hay artículos que cambiar"
    que = "ya se ha entregado" if estado == "entregado" else "ya ha salido"
    return f"el pedido {pedido} {que} (estado: {estado}), así que sus artículos ya no se pueden cambiar: {ALTERNATIVAS}"


def modificar_articulos(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    linea: int,
    talla: str | None = None,
    color: str | None = None,
    pasarela: Pasarela,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
) -> dict[str, Any]:
    """Cambia una unidad de la ``linea`` del pedido pendiente por su variante en ``talla``/``color``.

    ``diferencia`` (en el resultado, sin signo) y ``liquidacion.tipo`` (``ninguna``, ``cobro``
    o ``reembolso``) dicen quién paga. Una comprobación fallida no escribe nada.
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    argumentos = {"pedido": normalizar_id(pedido), "linea": int(linea),
                  "talla": (talla or "").strip().upper() or None, "color": _color(color)}
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_MODIFICACION_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
    if fila is None:
        if not (argumentos["talla"] or argumentos["color"]):
            raise ErrorDominio("no se ha indicado la talla ni el color nuevos: no se ha cambiado nada")
        try:
            with pool.connection() as conexion:
                fila = _apuntar(conexion, llamada, argumentos)
            return _liquidar(pool, fila, pasarela, repetido=False)
        except _YaHecha:
            with pool.connection() as conexion:
                fila = conexion.execute(SELECT_MODIFICACION_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
    _comprobar_misma(fila, contexto, argumentos)
    return _liquidar(pool, fila, pasarela, repetido=True)


def _apuntar(conexion: psycopg.Connection, llamada: libro.Llamada, a: dict[str, Any]) -> dict:
    pedido, clave = a["pedido"], {"clave": llamada.clave}
    with conexion.transaction():
        fila_pedido = libro.bloquear_pedido(conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id)
        if conexion.execute(SELECT_MODIFICACION_POR_CLAVE_SQL, clave).fetchone():
            raise _YaHecha
        estado = conexion.execute(SELECT_ESTADO_SQL, {"pedido": pedido}).fetchone()["estado"]
        if estado != "pendiente":
            raise ErrorDominio(no_pendiente(pedido, estado), pedido=pedido, estado=estado)
        tienda = fila_pedido["tienda"]
        linea = conexion.execute(SELECT_LINEA_Y_VARIANTE_SQL, {**a, "tienda": tienda}).fetchone()
        _comprobar_linea(conexion, pedido, tienda, a, linea)
        libro.exigir_veredicto_vigente(conexion, llamada)
        precio = conexion.execute(SELECT_PRECIO_SQL, {"tienda": tienda, "sku": linea["sku_nuevo"]}).fetchone()
        if precio is None:
            raise ErrorDominio(f"{linea['nombre_nuevo']} no se vende en la tienda del pedido: no se puede cambiar")
        _comprobar_lo_evaluado(politica_fijada.evaluacion(conexion, llamada), linea, precio["pvp"])
        libro.mover_stock(conexion, tienda=tienda, sku_original=linea["sku"], sku_nuevo=linea["sku_nuevo"])
        datos = {"pedido": pedido, "linea": linea["linea"], "sku": linea["sku_nuevo"], "precio": precio["pvp"]}
        if linea["unidades"] == 1:
            conexion.execute(CAMBIAR_LINEA_SQL, datos)
            linea_nueva = linea["linea"]
        else:
            conexion.execute(QUITAR_UNIDAD_SQL, datos)
            linea_nueva = conexion.execute(LINEA_NUEVA_SQL, datos).fetchone()["linea"]
        diferencia = precio["pvp"] - linea["precio_unitario"]
        conexion.execute(AJUSTAR_IMPORTE_SQL, {"pedido": pedido, "diferencia": diferencia})
        liquidacion = "ninguna" if diferencia == 0 else ("cobro" if diferencia > 0 else "reembolso")
        insertada = conexion.execute(INSERT_MODIFICACION_SQL, {
            **llamada.parametros(), "pedido": pedido, "tienda": tienda, "linea": linea["linea"],
            "linea_nueva": linea_nueva, "sku_original": linea["sku"], "sku_nuevo": linea["sku_nuevo"],
            "precio_original": linea["precio_unitario"], "precio_nuevo": precio["pvp"], "diferencia": diferencia,
            "liquidacion": liquidacion,
        }).fetchone()
        if insertada is None:
            raise _YaHecha  # deshace el stock y la línea de esta transacción
        fila = conexion.execute(SELECT_MODIFICACION_POR_CLAVE_SQL, clave).fetchone()
        if liquidacion != "ninguna":
            conexion.execute(INSERT_COBRO_SQL if liquidacion == "cobro" else INSERT_REEMBOLSO_SQL, {
                **fila, "clave": fila["clave_idempotencia"], "importe": abs(diferencia),
                "reserva": movimientos.RESERVA_SEGUNDOS,
                "motivo": f"diferencia a favor del cliente en la modificación {fila['numero']}"})
        return fila


def _comprobar_linea(conexion: psycopg.Connection, pedido: str, tienda: str, a: dict[str, Any],
                     linea: dict | None) -> None:
    if linea is None:
        raise ErrorDominio(f"el pedido {pedido} no tiene la línea {a['linea']}: revisa `linea` en consultar_pedido",
                           pedido=pedido)
    if linea["modelo"] is None:
        raise ErrorDominio(f"{linea['nombre']} no tiene otras tallas ni colores: no se puede modificar", pedido=pedido)
    opciones = ", ".join(linea["opciones"]) or "ninguna con stock"
    if linea["sku_nuevo"] is None:
        pedida = ", ".join(f"{que} {a[que]}" for que in ("talla", "color") if a[que])
        raise ErrorDominio(f"{linea['nombre']} no existe en {pedida}; hay: {opciones}", pedido=pedido)
    if linea["sku_nuevo"] == linea["sku"]:
        raise ErrorDominio(f"la línea {linea['linea']} del pedido {pedido} ya es {linea['nombre']}: no hay nada "
                           "que cambiar", pedido=pedido)
    libres = {f["linea"]: f for f in libro.lineas_del_libro(conexion, pedido)}.get(linea["linea"])
    if libres is not None and libres["unidades_libres"] < libres["unidades"]:
        raise ErrorDominio(f"la línea {linea['linea']} del pedido {pedido} ya tiene unidades reembolsadas o "
                           "cambiadas: no se modifica", pedido=pedido)
    if not conexion.execute(HAY_STOCK_SQL, {"tienda": tienda, "sku": linea["sku_nuevo"]}).fetchone():
        raise ErrorDominio(f"no queda stock de {linea['nombre_nuevo']} en la tienda del pedido; hay: {opciones}",
                           pedido=pedido)


def _comprobar_lo_evaluado(evaluacion: dict | None, linea: dict, precio: Decimal) -> None:
    """Lo que vio la política (y quien firmó) al proponerla sigue siendo lo de ahora: la misma
    prenda en la línea, la misma variante nueva y el mismo precio. Si no, ``AprobacionCaducada``."""
    umbrales = (evaluacion or {}).get("umbrales") or {}
    if not umbrales.get("sku_linea"):
        return
    vistos = (umbrales.get("sku_linea"), umbrales.get("sku_nuevo"), umbrales.get("precio_nuevo"))
    if vistos != (linea["sku"], linea["sku_nuevo"], dinero.texto(precio)):
        raise AprobacionCaducada(
            f"{libro.CADUCADA}: la línea {linea['linea']} o el precio de {linea['nombre_nuevo']} han cambiado desde "
            "que se propuso; consulta el pedido otra vez y vuelve a proponer el cambio")


def _liquidar(pool: ConnectionPool, fila: dict, pasarela: Pasarela, *, repetido: bool) -> dict[str, Any]:
    """Ejecuta el cobro o el reembolso si sigue pendiente y compone el resultado."""
    aviso = enlace = None
    mov = _movimiento(pool, fila["id"])
    if mov is not None and not mov.completado:
        try:
            mov = movimientos.ejecutar(pool, pasarela, mov).movimiento
        except ErrorPasarela as exc:
            enlace = exc.datos.get("enlace")
            que = "el cobro" if mov.tipo == COBRO else "la devolución"
            aviso = (f"la modificación está hecha, pero {que} de la diferencia ({mov.referencia}, "
                     f"{dinero.eur(mov.importe)}) queda pendiente por la pasarela de pagos; el sistema lo completará "
                     "solo, sin mover el dinero dos veces: dile al cliente que le avisaremos por aquí")
            mov = _movimiento(pool, fila["id"])
    resultado: dict[str, Any] = {
        "modificacion": fila["numero"], "pedido": fila["pedido_id"], "linea": fila["linea_nueva"],
        "articulo_anterior": fila["nombre_original"], "articulo_nuevo": fila["nombre_nuevo"],
        "talla": fila["talla"], "color": fila["color"],
        "diferencia": dinero.texto(abs(fila["diferencia"])), "liquidacion": {"tipo": fila["liquidacion"]},
        "estado": "hecha", "repetido": repetido,
    }
    if mov is not None:
        resultado["liquidacion"].update(numero=mov.referencia, importe=dinero.texto(mov.importe),
                                        estado="completado" if mov.completado else "pendiente")
        if enlace:
            resultado["liquidacion"]["enlace_pago"] = enlace
    if aviso:
        resultado["aviso"] = aviso
    return resultado


def _movimiento(pool: ConnectionPool, modificacion_id: int) -> movimientos.Movimiento | None:
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_MOVIMIENTO_SQL, {"id": modificacion_id}).fetchone()
        return movimientos.movimiento(conexion, fila["tipo"], fila["id"]) if fila else None


def _comprobar_misma(fila: dict, contexto: ContextoCliente, a: dict[str, Any]) -> None:
    pedida = all(a[que] is None or str(fila[que] or "").lower() == a[que].lower() for que in ("talla", "color"))
    if fila["cliente_id"] != contexto.cliente_id or fila["pedido_id"] != a["pedido"] or fila["linea"] != a["linea"] \
            or not pedida:
        raise ConflictoIdempotencia(
            f"esta llamada ya se ejecutó con otros datos (modificación {fila['numero']}); no se ha hecho nada nuevo",
            modificacion=fila["numero"])


class ModificarArticulosArgs(BaseModel):
    """Argumentos de modificar_articulos."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    linea: int = Field(ge=1, description=(
        "Número de la línea del pedido cuyo artículo se cambia: el campo `linea` de ese producto en "
        "`consultar_pedido`. Se cambia una unidad de esa línea."))
    talla: str | None = Field(default=None, max_length=20, description=(
        "Talla nueva que pide el cliente, tal cual (por ejemplo «L» o «42»); vacía si solo cambia el color."))
    color: str | None = Field(default=None, max_length=40, description=(
        "Color nuevo que pide el cliente (por ejemplo «azul»); vacío si solo cambia la talla."))


def crear_modificar_articulos(dependencias: Dependencias) -> BaseTool:
    pool, pasarela = dependencias.pool, dependencias.pasarela

    @tool(MODIFICACION.herramienta, args_schema=ModificarArticulosArgs)
    def modificar_articulos_tool(pedido: str, linea: int, runtime: ToolRuntime, talla: str | None = None,
                                 color: str | None = None) -> str:
        """Cambia un artículo de un pedido del cliente que aún está pendiente (sin enviar) por otra talla o color del mismo producto, si hay stock en la tienda del pedido. La diferencia de precio se cobra o se devuelve al cliente por la pasarela, una sola vez.

        Úsala solo cuando el cliente lo pida, después de `consultar_pedido`, con la línea del artículo y la talla o el color nuevos que diga el cliente (no los inventes). Un pedido enviado, entregado o cancelado no se modifica: dile al cliente que, cuando lo reciba, puede pedir un cambio de talla o color o devolverlo. Si la diferencia de precio pasa del umbral de la tienda, queda a la espera de la aprobación de un encargado; no la repitas ni la reformules mientras tanto. Devuelve JSON con el número de la modificación (MA-...), el pedido, `articulo_anterior`, `articulo_nuevo`, la `diferencia` (sin signo) y `liquidacion.tipo`: "cobro" (la paga el cliente), "reembolso" (se le devuelve) o "ninguna"; si el movimiento queda "pendiente", díselo así, nunca que ya está hecho. `repetido: true` quiere decir que esta misma modificación ya estaba hecha. Si falla porque esa variante no existe o no tiene stock, el mensaje dice qué tallas y colores hay.
        """
        return json_resultado(modificar_articulos(
            pool, contexto=contexto_de(runtime), pedido=pedido, linea=linea, talla=talla, color=color,
            pasarela=pasarela, **datos_de_ejecucion(runtime, dependencias)))

    return sin_sangria(modificar_articulos_tool)


crear = crear_modificar_articulos
