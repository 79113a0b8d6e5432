"""Sustituciones: una unidad de una línea del pedido por otro producto de su categoría.

Idempotentes por (hilo, tool_call_id) como los reembolsos. Todo ocurre en una
transacción: si al ejecutar ya no hay stock o el precio cambió desde que se propuso
(lo que vio el encargado), falla con ``AprobacionCaducada`` y no cambia nada. El stock
se mueve con ``UPDATE ... WHERE unidades > 0``: nunca baja de cero aunque haya carreras.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from psycopg_pool import ConnectionPool

from agente.nucleo.contexto import ContextoCliente
from agente.nucleo.errores import (
    AprobacionCaducada,
    ConflictoIdempotencia,
    ErrorDominio,
    PedidoNoEncontrado,
    ProductoNoEncontrado,
)
from herramientas.pedidos import clave_idempotencia, formato_eur, normalizar_id, texto_dinero

SELECT_SUSTITUCION_POR_CLAVE_SQL = """
SELECT s.id, s.numero, s.pedido_id, s.cliente_id, s.sku_original, s.sku_nuevo,
       s.diferencia, p.nombre AS nombre_nuevo
FROM sustituciones s JOIN productos p ON p.sku = s.sku_nuevo
WHERE s.clave_idempotencia = %(clave)s
"""

BLOQUEAR_PEDIDO_SQL = """
SELECT id, tienda FROM pedidos
WHERE id = %(pedido)s AND cliente_id = %(cliente_id)s
FOR UPDATE
"""

# Unidades de la línea que aún no se han cambiado: un cambio no se repite sobre la misma unidad.
SELECT_LINEA_CON_SKU_SQL = """
SELECT l.linea,
       l.unidades - (SELECT count(*) FROM sustituciones s
                     WHERE s.pedido_id = l.pedido_id AND s.sku_original = l.sku) AS sin_cambiar
FROM lineas_pedido l WHERE l.pedido_id = %(pedido)s AND l.sku = %(sku)s
ORDER BY l.linea LIMIT 1
"""

# FOR SHARE: un cambio de precio a la vez espera a que esta transacción termine.
SELECT_PRODUCTOS_SQL = """
SELECT sku, nombre, categoria, pvp FROM productos WHERE sku = ANY(%(skus)s) FOR SHARE
"""

SELECT_EVALUACION_SQL = """
SELECT herramienta, args, umbrales FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

RETIRAR_UNIDAD_SQL = """
UPDATE stock SET unidades = unidades - 1
WHERE tienda = %(tienda)s AND sku = %(sku)s AND unidades > 0
RETURNING unidades
"""

DEVOLVER_UNIDAD_SQL = """
INSERT INTO stock (sku, tienda, unidades) VALUES (%(sku)s, %(tienda)s, 1)
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = stock.unidades + 1
"""

INSERT_SUSTITUCION_SQL = """
INSERT INTO sustituciones (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                           tienda, sku_original, sku_nuevo, pvp_original, pvp_nuevo,
                           aprobado_por, trace_id)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s,
        %(tienda)s, %(sku_original)s, %(sku_nuevo)s, %(pvp_original)s, %(pvp_nuevo)s,
        %(aprobado_por)s, %(trace_id)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING numero
"""

CADUCADA = "la aprobación ha caducado"


class _YaHecha(Exception):
    """Deshace la transacción: la misma clave se confirmó en otra a la vez."""


def sustituir(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    sku_original: str,
    sku_nuevo: str,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
) -> dict[str, Any]:
    """Cambia una unidad de ``sku_original`` del pedido por ``sku_nuevo``.

    ``diferencia`` = pvp de catálogo del nuevo menos el del original (positiva: el
    cliente paga más). El precio «al proponer» sale de ``evaluaciones_politica.umbrales``
    (claves ``pvp_original`` y ``pvp_nuevo``) de esta misma llamada, si la política lo
    guardó con los mismos SKU.
    """
    clave = clave_idempotencia(thread_id, tool_call_id)
    pedido = normalizar_id(pedido)
    sku_original = normalizar_id(sku_original)
    sku_nuevo = normalizar_id(sku_nuevo)
    argumentos = {"pedido": pedido, "sku_original": sku_original, "sku_nuevo": sku_nuevo}

    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, {"clave": clave}).fetchone()
    if fila is not None:
        return _repetida(fila, contexto=contexto, **argumentos)
    if sku_original == sku_nuevo:
        raise ErrorDominio(f"el producto nuevo es el mismo que el original ({sku_original})")

    try:
        with pool.connection() as conexion, conexion.transaction():
            fila_pedido = conexion.execute(
                BLOQUEAR_PEDIDO_SQL, {"pedido": pedido, "cliente_id": contexto.cliente_id}
            ).fetchone()
            if fila_pedido is None:
                raise PedidoNoEncontrado(pedido)
            ya = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, {"clave": clave}).fetchone()
            if ya is not None:
                raise _YaHecha
            tienda = fila_pedido["tienda"]
            linea = conexion.execute(
                SELECT_LINEA_CON_SKU_SQL, {"pedido": pedido, "sku": sku_original}
            ).fetchone()
            if linea is None:
                raise ErrorDominio(
                    f"el producto {sku_original} no está en el pedido {pedido}", pedido=pedido
                )
            if linea["sin_cambiar"] <= 0:
                raise ErrorDominio(
                    f"el producto {sku_original} del pedido {pedido} ya se cambió antes", pedido=pedido
                )
            productos = {
                p["sku"]: p
                for p in conexion.execute(
                    SELECT_PRODUCTOS_SQL, {"skus": [sku_original, sku_nuevo]}
                ).fetchall()
            }
            if sku_nuevo not in productos:
                raise ProductoNoEncontrado(sku_nuevo)
            original, nuevo = productos[sku_original], productos[sku_nuevo]
            if original["categoria"] != nuevo["categoria"]:
                raise ErrorDominio(
                    f"{sku_nuevo} ({nuevo['categoria']}) no es de la misma categoría que "
                    f"{sku_original} ({original['categoria']}): solo se cambia dentro de la categoría"
                )
            _comprobar_precios(
                conexion,
                thread_id=thread_id,
                tool_call_id=tool_call_id,
                argumentos=argumentos,
                actuales={"pvp_original": original, "pvp_nuevo": nuevo},
            )
            _mover_stock(conexion, tienda=tienda, sku_original=sku_original, sku_nuevo=sku_nuevo)
            insertada = conexion.execute(
                INSERT_SUSTITUCION_SQL,
                {
                    "clave": clave,
                    "thread_id": thread_id,
                    "tool_call_id": tool_call_id,
                    "cliente_id": contexto.cliente_id,
                    "tienda": tienda,
                    "pvp_original": original["pvp"],
                    "pvp_nuevo": nuevo["pvp"],
                    "aprobado_por": aprobado_por,
                    "trace_id": trace_id,
                    **argumentos,
                },
            ).fetchone()
            if insertada is None:
                raise _YaHecha  # deshace el movimiento de stock de esta transacción
    except _YaHecha:
        with pool.connection() as conexion:
            fila = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, {"clave": clave}).fetchone()
        return _repetida(fila, contexto=contexto, **argumentos)

    return {
        "sustitucion": insertada["numero"],
        "pedido": pedido,
        "sku_original": sku_original,
        "sku_nuevo": sku_nuevo,
        "nombre_nuevo": nuevo["nombre"],
        "diferencia": texto_dinero(nuevo["pvp"] - original["pvp"]),
        "repetido": False,
    }


def _repetida(
    fila: dict, *, contexto: ContextoCliente, pedido: str, sku_original: str, sku_nuevo: str
) -> dict[str, Any]:
    if (
        fila["cliente_id"] != contexto.cliente_id
        or fila["pedido_id"] != pedido
        or fila["sku_original"] != sku_original
        or fila["sku_nuevo"] != sku_nuevo
    ):
        raise ConflictoIdempotencia(
            "esta llamada ya se ejecutó con otros datos (sustitución "
            f"{fila['numero']}); no se ha hecho nada nuevo",
            sustitucion=fila["numero"],
        )
    return {
        "sustitucion": fila["numero"],
        "pedido": fila["pedido_id"],
        "sku_original": fila["sku_original"],
        "sku_nuevo": fila["sku_nuevo"],
        "nombre_nuevo": fila["nombre_nuevo"],
        "diferencia": texto_dinero(fila["diferencia"]),
        "repetido": True,
    }


def _precio_guardado(umbrales: dict, clave: str) -> Decimal | None:
    valor = umbrales.get(clave)
    if valor is None:
        return None
    try:
        return Decimal(str(valor))
    except InvalidOperation:
        return None


def _comprobar_precios(
    conexion, *, thread_id: str, tool_call_id: str, argumentos: dict, actuales: dict
) -> None:
    """Compara el pvp de ahora con el que vio la política al evaluar esta misma llamada.

    Solo si la evaluación es de ``sustituir`` con los mismos SKU: si un encargado editó
    los SKU, lo que aprobó es lo que se ejecuta ahora y no hay precio previo que comparar.
    """
    evaluacion = conexion.execute(
        SELECT_EVALUACION_SQL, {"thread_id": thread_id, "tool_call_id": tool_call_id}
    ).fetchone()
    if evaluacion is None or evaluacion["herramienta"] != "sustituir":
        return
    args = evaluacion["args"] or {}
    if any(
        normalizar_id(str(args.get(k, ""))) != argumentos[k] for k in ("sku_original", "sku_nuevo")
    ):
        return
    umbrales = evaluacion["umbrales"] or {}
    for clave, producto in actuales.items():
        antes = _precio_guardado(umbrales, clave)
        if antes is not None and antes != producto["pvp"]:
            raise AprobacionCaducada(
                f"{CADUCADA}: el precio de {producto['sku']} ha cambiado desde que se propuso "
                f"el cambio ({formato_eur(antes)} entonces, {formato_eur(producto['pvp'])} "
                "ahora); consulta de nuevo las alternativas y vuelve a proponerlo",
                sku=producto["sku"],
            )


def _mover_stock(conexion, *, tienda: str, sku_original: str, sku_nuevo: str) -> None:
    # Siempre en el mismo orden de SKU: dos cambios cruzados no se bloquean mutuamente.
    for sku in sorted((sku_original, sku_nuevo)):
        if sku == sku_original:
            conexion.execute(DEVOLVER_UNIDAD_SQL, {"tienda": tienda, "sku": sku})
            continue
        if conexion.execute(RETIRAR_UNIDAD_SQL, {"tienda": tienda, "sku": sku}).fetchone() is None:
            raise AprobacionCaducada(
                f"{CADUCADA}: ya no queda stock de {sku} en la tienda; consulta de nuevo las "
                "alternativas y vuelve a proponer el cambio",
                sku=sku,
            )
