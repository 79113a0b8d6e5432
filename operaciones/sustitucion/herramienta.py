"""Sustituciones: una unidad de una línea del pedido por otro producto de su categoría.

Idempotentes por (hilo, tool_call_id). Solo de un pedido entregado; el cambio ocupa la
primera unidad libre de la línea en el libro. La diferencia (pvp del nuevo en la tienda del
pedido menos lo pagado) se liquida por la pasarela salvo si es menor que
``diferencia_minima_liquidable`` fijado al evaluar la llamada. Cómo se liquida en cada caso
(más barato, más caro, mismo precio) y qué pasa si falla: ``operaciones/sustitucion/README.md``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import asignacion, estados_proveedor, libro, movimientos
from caja.pasarela import CADUCADO, COBRO, EN_CURSO, Pasarela
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
    ProductoNoEncontrado,
)
from nucleo.puertos import Revalidador
from operaciones.sustitucion.declaracion import CAMBIO

__all__ = ["MAX_POR_TURNO", "SustituirArgs", "crear", "crear_sustituir", "sustituir"]

# Dos cambios por turno: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 2

SELECT_SUSTITUCION_POR_CLAVE_SQL = """
SELECT s.id, s.numero, s.pedido_id, s.cliente_id, s.tienda, s.sku_original, s.sku_nuevo,
       s.diferencia, s.estado, s.liquidacion, s.linea, s.clave_idempotencia, s.thread_id,
       s.tool_call_id, s.trace_id, p.nombre AS nombre_nuevo
FROM sustituciones s JOIN productos p ON p.sku = s.sku_nuevo
WHERE s.clave_idempotencia = %(clave)s
"""

# El movimiento de dinero ligado a un cambio: el reembolso de la diferencia o el cobro.
SELECT_LIQUIDACION_SQL = """
SELECT tipo, id, referencia, importe, estado, completado, concepto, sustitucion_id,
       thread_id, pedido_id, intentos, requiere_persona
FROM libro_movimientos
WHERE sustitucion_id = %(id)s AND concepto = %(concepto)s
"""

SELECT_ESTADO_SQL = "SELECT estado FROM sustituciones WHERE id = %(id)s"

# El pvp es el de la tienda del pedido (sql/030): el de otra tienda nunca liquida este
# cambio. NULL si la tienda no vende el producto. FOR SHARE: un cambio de precio a la vez
# espera a que esta transacción termine.
SELECT_PRODUCTOS_SQL = """
SELECT p.sku, p.nombre, p.categoria FROM productos p WHERE p.sku = ANY(%(skus)s) FOR SHARE
"""
# Los precios de la tienda, bloqueados en su propia sentencia: una subconsulta de la anterior
# vería la foto de antes de esperar al candado de los productos (docs/trampas.md).
SELECT_PRECIOS_SQL = """
SELECT sku, pvp FROM precios_tienda WHERE tienda = %(tienda)s AND sku = ANY(%(skus)s) FOR SHARE
"""

SELECT_STOCK_SQL = """
SELECT unidades FROM stock WHERE tienda = %(tienda)s AND sku = %(sku)s
"""

INSERT_SUSTITUCION_SQL = """
INSERT INTO sustituciones (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                           tienda, sku_original, sku_nuevo, pvp_original, pvp_nuevo,
                           precio_pagado, linea, estado, liquidacion, completada_en,
                           aprobado_por, trace_id, valores_politica)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s,
        %(tienda)s, %(sku_original)s, %(sku_nuevo)s, %(pvp_original)s, %(pvp_nuevo)s,
        %(precio_pagado)s, %(linea)s, %(estado)s, %(liquidacion)s,
        CASE WHEN %(estado)s = 'hecha' THEN now() END, %(aprobado_por)s, %(trace_id)s,
        %(valores_politica)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

CADUCADA = libro.CADUCADA


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
    pasarela: Pasarela,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
) -> dict[str, Any]:
    """Cambia una unidad de ``sku_original`` del pedido por ``sku_nuevo`` y liquida la diferencia.

    ``diferencia`` (en el resultado) = pvp del nuevo en la tienda del pedido menos lo pagado
    por la unidad (positiva: el cliente paga). ``liquidacion`` dice cómo se liquidó:
    ``ninguna``, ``renunciada``, ``reembolso`` o ``cobro``, con el número y estado del movimiento. El
    precio «al proponer» sale de ``evaluaciones_politica.umbrales`` de esta misma
    llamada (claves ``pvp_original`` y ``pvp_nuevo``), si la política lo guardó con los
    mismos SKU. Repetir la clave con el cobro pendiente lo reintenta.
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    argumentos = {
        "pedido": normalizar_id(pedido),
        "sku_original": normalizar_id(sku_original),
        "sku_nuevo": normalizar_id(sku_nuevo),
    }

    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
    if fila is not None:
        _comprobar_misma_operacion(fila, contexto=contexto, **argumentos)
        return _liquidar(pool, fila, pasarela, repetido=True)
    if argumentos["sku_original"] == argumentos["sku_nuevo"]:
        raise ErrorDominio(f"el producto nuevo es el mismo que el original ({argumentos['sku_original']})")

    try:
        fila = _apuntar(pool, llamada, argumentos)
    except _YaHecha:
        with pool.connection() as conexion:
            fila = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
        _comprobar_misma_operacion(fila, contexto=contexto, **argumentos)
        return _liquidar(pool, fila, pasarela, repetido=True)
    return _liquidar(pool, fila, pasarela, repetido=False)


def _apuntar(pool: ConnectionPool, llamada: libro.Llamada, argumentos: dict) -> dict:
    """Comprueba y apunta el cambio (y su reembolso o cobro) en una transacción."""
    pedido, sku_original, sku_nuevo = (
        argumentos["pedido"], argumentos["sku_original"], argumentos["sku_nuevo"]
    )
    clave = {"clave": llamada.clave}
    with pool.connection() as conexion, conexion.transaction():
        fila_pedido = libro.bloquear_pedido(
            conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id
        )
        if conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, clave).fetchone():
            raise _YaHecha
        tienda = fila_pedido["tienda"]
        hechos = libro.elegibilidad(conexion, pedido, llamada=llamada)
        libro.exigir_entregado(hechos)
        unidad = _unidad_libre(conexion, pedido=pedido, sku=sku_original)
        libro.exigir_veredicto_vigente(conexion, llamada, hechos=hechos)
        skus = {"skus": [sku_original, sku_nuevo], "tienda": tienda}
        productos = {p["sku"]: {**p, "pvp": None} for p in conexion.execute(SELECT_PRODUCTOS_SQL, skus)}
        for precio in conexion.execute(SELECT_PRECIOS_SQL, skus):
            productos[precio["sku"]]["pvp"] = precio["pvp"]
        if sku_nuevo not in productos:
            raise ProductoNoEncontrado(sku_nuevo)
        original, nuevo = productos[sku_original], productos[sku_nuevo]
        if original["categoria"] != nuevo["categoria"]:
            raise ErrorDominio(
                f"{sku_nuevo} ({nuevo['categoria']}) no es de la misma categoría que "
                f"{sku_original} ({original['categoria']}): solo se cambia dentro de la categoría"
            )
        for producto in (original, nuevo):
            if producto["pvp"] is None:
                raise ErrorDominio(
                    f"{producto['sku']} no tiene precio en la tienda del pedido ({tienda}): no se "
                    "vende allí y no se puede cambiar; ofrece solo productos de stock_alternativas",
                    sku=producto["sku"],
                )
        evaluacion = politica_fijada.evaluacion(conexion, llamada)
        politica_fijada.comprobar_precios(
            evaluacion, argumentos=argumentos, actuales={"pvp_original": original, "pvp_nuevo": nuevo},
        )
        diferencia = nuevo["pvp"] - unidad.precio
        valores = politica_fijada.valores_de_politica(conexion, evaluacion, tienda)
        minimo = Decimal(valores["diferencia_minima_liquidable"])
        if diferencia == 0:
            liquidacion = "ninguna"
        elif abs(diferencia) < minimo:
            liquidacion = "renunciada"
        else:
            liquidacion = "cobro" if diferencia > 0 else "reembolso"
        if liquidacion == "cobro":
            # El stock no se mueve hasta que se confirme el cobro, pero ha de haberlo ahora.
            _exigir_stock(conexion, tienda=tienda, sku=sku_nuevo)
            estado = "pendiente_cobro"
        else:
            libro.mover_stock(conexion, tienda=tienda, sku_original=sku_original, sku_nuevo=sku_nuevo)
            estado = "hecha"
        insertada = conexion.execute(
            INSERT_SUSTITUCION_SQL,
            {
                **llamada.parametros(),
                "tienda": tienda,
                "pvp_original": original["pvp"],
                "pvp_nuevo": nuevo["pvp"],
                "precio_pagado": unidad.precio,
                "linea": unidad.linea,
                "estado": estado,
                "liquidacion": liquidacion,
                "valores_politica": Jsonb(valores),
                **argumentos,
            },
        ).fetchone()
        if insertada is None:
            raise _YaHecha  # deshace el movimiento de stock de esta transacción
        libro.apuntar_unidades(
            conexion, pedido=pedido, asignacion=[(unidad, unidad.precio)],
            sustitucion_id=insertada["id"],
        )
        fila = conexion.execute(SELECT_SUSTITUCION_POR_CLAVE_SQL, clave).fetchone()
        if liquidacion == "reembolso":
            movimientos.apuntar_reembolso_de_sustitucion(
                conexion, sustitucion=fila, concepto="diferencia", importe=-diferencia,
                motivo=f"diferencia a favor del cliente en el cambio {fila['numero']}",
            )
        elif liquidacion == "cobro":
            movimientos.apuntar_cobro(conexion, sustitucion=fila, importe=diferencia)
        return fila


def _unidad_libre(conexion, *, pedido: str, sku: str) -> asignacion.UnidadLibre:
    """La primera unidad libre de ``sku`` en el pedido (orden de línea y unidad)."""
    libres = libro.unidades_libres(conexion, pedido)
    unidad = next((u for u in libres if u.sku == sku), None)
    if unidad is not None:
        return unidad
    hay = any(f["sku"] == sku for f in libro.lineas_del_libro(conexion, pedido))
    if not hay:
        raise ErrorDominio(f"el producto {sku} no está en el pedido {pedido}", pedido=pedido)
    raise ErrorDominio(
        f"todas las unidades de {sku} del pedido {pedido} ya se reembolsaron o se cambiaron: "
        "cada unidad se compensa una sola vez",
        pedido=pedido,
    )


def _exigir_stock(conexion, *, tienda: str, sku: str) -> None:
    fila = conexion.execute(SELECT_STOCK_SQL, {"tienda": tienda, "sku": sku}).fetchone()
    if fila is None or fila["unidades"] <= 0:
        raise AprobacionCaducada(
            f"{CADUCADA}: ya no queda stock de {sku} en la tienda; consulta de nuevo las "
            "alternativas y vuelve a proponer el cambio",
            sku=sku,
        )


def _liquidar(pool: ConnectionPool, fila: dict, pasarela: Pasarela, *, repetido: bool) -> dict:
    """Ejecuta lo pendiente del cambio (su cobro o reembolso, y la devolución de un cobro
    si se anuló) y compone el resultado con el estado que queda en la base."""
    aviso = None
    principal = _movimiento_de(pool, fila["id"], "diferencia")
    if principal is not None and not principal.completado:
        try:
            movimientos.ejecutar(pool, pasarela, principal)
        except ErrorPasarela as exc:
            if principal.tipo == COBRO and exc.datos.get("estado") == EN_CURSO and exc.datos.get("enlace"):
                return _resultado(pool, fila, aviso=estados_proveedor.aviso_enlace(
                    fila['numero'], principal, exc), repetido=repetido,
                                  enlace=exc.datos["enlace"])
            if principal.tipo == COBRO and exc.datos.get("estado") == CADUCADO:
                return _resultado(pool, fila, aviso=(
                    "el enlace de pago de la diferencia caducó sin pagarse: el cambio queda anulado "
                    "y no se ha cobrado nada"), repetido=repetido)
            if principal.tipo == COBRO:
                raise ErrorPasarela(
                    f"la pasarela de pagos no ha podido cobrar todavía la diferencia de "
                    f"{dinero.eur(principal.importe)} del cambio {fila['numero']} "
                    f"({exc.mensaje}). El cambio queda pendiente de ese cobro y no se ha "
                    "cambiado ningún producto; el sistema reintentará el cobro sin cobrar dos "
                    "veces. Dile al cliente que queda pendiente y que le avisaremos por aquí; "
                    "no propongas el cambio otra vez",
                    sustitucion=fila["numero"],
                    estado="pendiente_cobro",
                ) from exc
            aviso = (
                f"el cambio está hecho, pero la devolución de la diferencia "
                f"({principal.referencia}, {dinero.eur(principal.importe)}) queda pendiente por "
                "un fallo de la pasarela; el sistema la completará sola, sin pagar dos veces: "
                "dile al cliente que le avisaremos por aquí"
            )
    anulacion = _movimiento_de(pool, fila["id"], "anulacion")
    if anulacion is not None and not anulacion.completado:
        try:
            movimientos.ejecutar(pool, pasarela, anulacion)
        except ErrorPasarela:
            pass  # queda en la cola de movimientos; el resultado lo dice
    return _resultado(pool, fila, aviso=aviso, repetido=repetido)


def _movimiento_de(pool: ConnectionPool, sustitucion_id: int, concepto: str):
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_LIQUIDACION_SQL, {"id": sustitucion_id, "concepto": concepto}).fetchone()
    return movimientos.Movimiento.de_fila(fila) if fila else None


def _resultado(pool: ConnectionPool, fila: dict, *, aviso: str | None, repetido: bool,
               enlace: str | None = None) -> dict:
    with pool.connection() as conexion:
        estado = conexion.execute(SELECT_ESTADO_SQL, {"id": fila["id"]}).fetchone()["estado"]
    principal = _movimiento_de(pool, fila["id"], "diferencia")
    resultado: dict[str, Any] = {
        "sustitucion": fila["numero"],
        "pedido": fila["pedido_id"],
        "sku_original": fila["sku_original"],
        "sku_nuevo": fila["sku_nuevo"],
        "nombre_nuevo": fila["nombre_nuevo"],
        "linea": fila["linea"],
        "diferencia": dinero.texto(fila["diferencia"]),
        "estado": estado,
        "liquidacion": {"tipo": fila["liquidacion"]},
        "repetido": repetido,
    }
    if principal is not None:
        resultado["liquidacion"].update(
            numero=principal.referencia,
            importe=dinero.texto(principal.importe),
            estado="completado" if principal.completado else "pendiente",
        )
        if enlace:
            resultado["liquidacion"]["enlace_pago"] = enlace
    if estado == "anulada":
        devolucion = _movimiento_de(pool, fila["id"], "anulacion")
        resultado["aviso"] = (
            f"se cobró la diferencia pero ya no quedaba stock de {fila['sku_nuevo']}: el cambio "
            f"queda anulado, no se ha cambiado ningún producto y el cobro se devuelve al "
            f"cliente (reembolso {devolucion.referencia}, "
            f"{'hecho' if devolucion.completado else 'pendiente: le avisaremos por aquí'})"
        )
    elif aviso:
        resultado["aviso"] = aviso
    return resultado


def _comprobar_misma_operacion(fila: dict, *, contexto: ContextoCliente, pedido: str, sku_original: str,
                               sku_nuevo: str) -> None:
    if (fila["cliente_id"], fila["pedido_id"], fila["sku_original"], fila["sku_nuevo"]) != (
            contexto.cliente_id, pedido, sku_original, sku_nuevo):
        raise ConflictoIdempotencia(
            f"esta llamada ya se ejecutó con otros datos (sustitución {fila['numero']}); no se ha hecho nada nuevo",
            sustitucion=fila["numero"])


class SustituirArgs(BaseModel):
    """Argumentos de sustituir."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    sku_original: str = Field(description=(
        "SKU del producto del pedido que el cliente devuelve; tiene que ser el `sku` de una "
        "línea de ese pedido según `consultar_pedido` a la que le queden `unidades_libres` "
        "(una unidad ya reembolsada o cambiada no se puede cambiar)."))
    sku_nuevo: str = Field(description=(
        "SKU del producto que el cliente recibe a cambio. Elígelo de la lista `alternativas` "
        "de `stock_alternativas` para `sku_original` (misma categoría y con stock), y solo "
        "después de que el cliente haya aceptado ese producto y su diferencia de precio: si "
        "es más caro se le cobra la diferencia, y si es más barato se le devuelve."))


def crear_sustituir(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool
    pasarela = dependencias.pasarela

    @tool(CAMBIO.herramienta, args_schema=SustituirArgs)
    def sustituir_herramienta(pedido: str, sku_original: str, sku_nuevo: str, runtime: ToolRuntime) -> str:
        """Cambia una unidad de un producto de un pedido entregado del cliente (`sku_original`) por otro de la misma categoría con stock en su tienda (`sku_nuevo`) y liquida la diferencia de precio con su medio de pago original: si el nuevo es más barato le devuelve la diferencia (un reembolso RE-...), si es más caro se la cobra (un cobro CO-...). La diferencia es el precio del nuevo menos lo que pagó por esa unidad.

        Úsala solo cuando el cliente haya aceptado el cambio y la diferencia, después de `consultar_pedido` y de `stock_alternativas`, con un `sku_nuevo` de esa lista. Un pedido cancelado o aún no entregado no se puede cambiar, ni una unidad ya reembolsada o cambiada. Según la política de la tienda puede quedar a la espera de la aprobación de un encargado. Devuelve JSON con el número de sustitución (SU-...), los dos SKU, el nombre del producto nuevo, la `diferencia` (positiva: la paga el cliente; negativa: se le devuelve), el `estado` ("hecha") y la `liquidacion`: `tipo` ("ninguna", "renunciada" si la tienda no liquida diferencias tan pequeñas, "reembolso" o "cobro"), con su `numero`, `importe` y `estado` ("completado" o "pendiente"). Si hay un `aviso`, cuéntaselo al cliente: por ejemplo, que la devolución de la diferencia queda pendiente y le avisaremos por aquí. `repetido: true` quiere decir que el cambio ya estaba hecho. Si falla al cobrar la diferencia, el cambio no está hecho: queda pendiente del cobro, no se ha cambiado ningún producto y el sistema reintentará el cobro; dile al cliente que le avisaremos por aquí y no lo propongas otra vez. Si falla con «la aprobación ha caducado», el stock o el precio cambiaron desde la propuesta y no se ha cambiado nada: vuelve a consultar alternativas y pregunta al cliente.
        """
        return json_resultado(sustituir(pool, contexto=contexto_de(runtime), pedido=pedido, sku_original=sku_original,
                                        sku_nuevo=sku_nuevo, pasarela=pasarela,
                                        **datos_de_ejecucion(runtime, dependencias)))

    return sin_sangria(sustituir_herramienta)


crear = crear_sustituir
