"""Reenvíos: un envío nuevo, sin cargo, de lo que no llegó o llegó roto.

Idempotentes por (hilo, tool_call_id) como los reembolsos. En una transacción, con el
pedido bloqueado: se comprueba que puede salir (enviado y ya fuera de plazo de reparto, o
entregado), se retiran las unidades del stock de la tienda del pedido, se apunta la fila
del reenvío (``reenvios``, número RV-...) ligada a la línea original y las unidades quedan
compensadas en el libro (``compensaciones_unidad.reenvio_id``): ya no se reembolsan ni se
cambian. Un segundo reenvío de las mismas unidades no las vuelve a apuntar (ya lo estaban).

No hay pasarela: no se cobra ni se devuelve nada. Si no hay stock, nada sale y el error
ofrece el reembolso. Lo imposible (sin enviar, cancelado, en plazo de reparto, unidades ya
reembolsadas o cambiadas) se rechaza siempre, firme quien firme.

``dias_reparto_maximos`` es el valor fijado al evaluar la llamada (la instantánea de su
veredicto), no el vivo; sin veredicto, el vigente de la tienda.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, json_resultado, sin_sangria
from herramientas.esquemas import DESCRIPCION_PEDIDO
from herramientas.pedidos import normalizar_id
from nucleo import dinero, fechas
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import ConflictoIdempotencia, ErrorDominio
from nucleo.puertos import Revalidador
from operaciones.reenvio.declaracion import REENVIO

__all__ = ["DIAS_REPARTO_POR_DEFECTO", "MAX_POR_TURNO", "ReenviarArgs", "crear", "crear_reenviar", "reenviar"]

# Dos reenvíos por turno (dos líneas de un pedido): el registro lo toma de aquí
# (``Herramienta.de_operacion``).
MAX_POR_TURNO = 2

# El DEFAULT de politicas_tienda.dias_reparto_maximos (herramientas/ no importa politicas/).
DIAS_REPARTO_POR_DEFECTO = 3
MOTIVOS = {"no_llego": "no llegó", "llego_roto": "llegó roto"}

SELECT_PEDIDO_SQL = """
SELECT p.estado, p.enviado_en, p.entregado_en, t.nombre AS nombre_tienda
FROM pedidos p JOIN tiendas t ON t.id = p.tienda
WHERE p.id = %(pedido)s
"""

SELECT_LINEA_SQL = """
SELECT l.linea, l.sku, pr.nombre, l.unidades, l.precio_unitario
FROM lineas_pedido l JOIN productos pr ON pr.sku = l.sku
WHERE l.pedido_id = %(pedido)s AND l.linea = %(linea)s
"""

SELECT_REENVIADAS_SQL = """
SELECT unidad FROM compensaciones_unidad
WHERE pedido_id = %(pedido)s AND linea = %(linea)s AND reenvio_id IS NOT NULL
ORDER BY unidad
"""

SELECT_VECES_SQL = """
SELECT count(*)::int AS veces FROM reenvios WHERE pedido_id = %(pedido)s AND linea = %(linea)s
"""

SELECT_DIAS_SQL = """
SELECT coalesce((SELECT dias_reparto_maximos FROM politicas_tienda WHERE tienda = %(tienda)s),
                %(defecto)s) AS dias,
       coalesce((SELECT version FROM politicas_tienda WHERE tienda = %(tienda)s), 1) AS version
"""

SELECT_EVALUACION_SQL = """
SELECT valores FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

# Sin FOR UPDATE: la fila de stock es de toda la tienda y no se bloquea antes del candado del
# cliente (orden de candados: pedido, cliente, lo demás). La retirada vuelve a comprobarlo.
SELECT_STOCK_SQL = """
SELECT unidades FROM stock WHERE tienda = %(tienda)s AND sku = %(sku)s
"""

RETIRAR_STOCK_SQL = """
UPDATE stock SET unidades = unidades - %(unidades)s
WHERE tienda = %(tienda)s AND sku = %(sku)s AND unidades >= %(unidades)s
RETURNING unidades
"""

INSERT_REENVIO_SQL = """
INSERT INTO reenvios (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
                      linea, sku, unidades, motivo, descripcion, valor, vez, aprobado_por,
                      trace_id, valores_politica)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s, %(tienda)s,
        %(linea)s, %(sku)s, %(unidades)s, %(motivo)s, %(descripcion)s, %(valor)s, %(vez)s,
        %(aprobado_por)s, %(trace_id)s, %(valores_politica)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

# Las unidades que pasan a estar compensadas por este reenvío (las libres que ocupa).
INSERT_UNIDADES_SQL = """
INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reenvio_id, importe)
SELECT %(pedido)s, %(linea)s, u, %(reenvio_id)s, %(importe)s FROM unnest(%(unidades)s::int[]) AS u
"""

SELECT_REENVIO_POR_CLAVE_SQL = """
SELECT v.id, v.numero, v.pedido_id, v.cliente_id, v.linea, v.unidades, v.motivo, v.vez, v.valor,
       pr.nombre AS producto, t.nombre AS nombre_tienda
FROM reenvios v JOIN productos pr ON pr.sku = v.sku JOIN tiendas t ON t.id = v.tienda
WHERE v.clave_idempotencia = %(clave)s
"""


class _YaHecho(Exception):
    """Deshace la transacción: la misma clave se confirmó en otra a la vez."""


def reenviar(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    linea: int,
    unidades: int = 1,
    motivo: str,
    descripcion: str = "",
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
) -> dict[str, Any]:
    """Reenvía ``unidades`` de la ``linea`` del pedido sin cargo; devuelve el reenvío (RV-...)."""
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    argumentos = {"pedido": normalizar_id(pedido), "linea": linea, "unidades": unidades, "motivo": motivo}
    if motivo not in MOTIVOS:
        raise ErrorDominio(f"motivo no válido: {motivo!r} (no_llego o llego_roto)")
    if isinstance(unidades, bool) or not isinstance(unidades, int) or unidades < 1:
        raise ErrorDominio(f"número de unidades no válido: {unidades!r}")
    clave = {"clave": llamada.clave}
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_REENVIO_POR_CLAVE_SQL, clave).fetchone()
    if fila is None:
        try:
            _apuntar(pool, llamada, argumentos, descripcion=(descripcion or "")[:500])
            repetido = False
        except _YaHecho:
            repetido = True
        with pool.connection() as conexion:
            fila = conexion.execute(SELECT_REENVIO_POR_CLAVE_SQL, clave).fetchone()
    else:
        repetido = True
    _comprobar_misma_operacion(fila, contexto=contexto, **argumentos)
    return _resultado(fila, repetido=repetido)


def _apuntar(pool: ConnectionPool, llamada: libro.Llamada, args: dict, *, descripcion: str) -> None:
    pedido, numero_linea, unidades, motivo = args["pedido"], args["linea"], args["unidades"], args["motivo"]
    with pool.connection() as conexion, conexion.transaction():
        bloqueado = libro.bloquear_pedido(conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id)
        if conexion.execute(SELECT_REENVIO_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone():
            raise _YaHecho
        tienda = bloqueado["tienda"]
        datos = conexion.execute(SELECT_PEDIDO_SQL, {"pedido": pedido}).fetchone()
        valores = _valores_de_politica(conexion, llamada, tienda)
        _exigir_que_pueda_salir(pedido, datos, motivo, valores["dias_reparto_maximos"])
        linea = conexion.execute(SELECT_LINEA_SQL, {"pedido": pedido, "linea": numero_linea}).fetchone()
        if linea is None:
            lineas = ", ".join(str(n) for n in libro.numeros_de_linea(conexion, pedido))
            raise ErrorDominio(f"el pedido {pedido} no tiene la línea {numero_linea}; sus líneas son {lineas}",
                               pedido=pedido)
        if unidades > linea["unidades"]:
            raise ErrorDominio(f"la línea {numero_linea} del pedido {pedido} tiene {linea['unidades']} "
                               f"unidades: no se pueden reenviar {unidades}", pedido=pedido)
        libres = [u.unidad for u in libro.unidades_libres(conexion, pedido) if u.linea == numero_linea]
        reenviadas = [f["unidad"] for f in conexion.execute(
            SELECT_REENVIADAS_SQL, {"pedido": pedido, "linea": numero_linea})]
        if unidades > len(libres) + len(reenviadas):
            raise ErrorDominio(
                f"las unidades de «{linea['nombre']}» del pedido {pedido} ya se reembolsaron o se "
                "cambiaron: cada unidad se compensa una sola vez y no se puede reenviar", pedido=pedido)
        nuevas = libres[:unidades]
        stock = conexion.execute(SELECT_STOCK_SQL, {"tienda": tienda, "sku": linea["sku"]}).fetchone()
        if stock is None or stock["unidades"] < unidades:
            raise _sin_stock(pedido, linea, datos, unidades)
        # Tras las comprobaciones propias (que dan el error verdadero si sigue siendo imposible).
        libro.exigir_veredicto_vigente(conexion, llamada)
        # Ya con el candado del cliente; si otro se llevó el stock entretanto, nada se escribe.
        if conexion.execute(RETIRAR_STOCK_SQL, {"tienda": tienda, "sku": linea["sku"],
                                                "unidades": unidades}).fetchone() is None:
            raise _sin_stock(pedido, linea, datos, unidades)
        vez = conexion.execute(SELECT_VECES_SQL, {"pedido": pedido, "linea": numero_linea}).fetchone()["veces"] + 1
        insertado = conexion.execute(INSERT_REENVIO_SQL, {
            **llamada.parametros(), "pedido": pedido, "tienda": tienda, "linea": numero_linea,
            "sku": linea["sku"], "unidades": unidades, "motivo": motivo, "descripcion": descripcion or None,
            "valor": linea["precio_unitario"] * unidades, "vez": vez, "valores_politica": Jsonb(valores),
        }).fetchone()
        if insertado is None:
            raise _YaHecho  # deshace la retirada de stock de esta transacción
        if nuevas:
            conexion.execute(INSERT_UNIDADES_SQL, {
                "pedido": pedido, "linea": numero_linea, "reenvio_id": insertado["id"],
                "importe": linea["precio_unitario"], "unidades": nuevas})


def _sin_stock(pedido: str, linea: dict, datos: dict, unidades: int) -> ErrorDominio:
    return ErrorDominio(
        f"no queda stock de «{linea['nombre']}» en la tienda {datos['nombre_tienda']} para "
        f"reenviarlo: no se ha reenviado nada. La alternativa es devolverte lo que pagaste "
        f"por él ({dinero.eur(linea['precio_unitario'] * unidades)})", pedido=pedido,
        sin_stock=True)


def _exigir_que_pueda_salir(pedido: str, datos: dict, motivo: str, dias_maximos: int) -> None:
    """Sin enviar o cancelado, nunca; enviado y aún en plazo de reparto, tampoco (no llega tarde)."""
    estado = datos["estado"]
    if estado == "pendiente":
        raise ErrorDominio(
            f"el pedido {pedido} aún no ha salido de la tienda: no hay nada que reenviar", pedido=pedido,
            estado=estado)
    if estado == "cancelado":
        raise ErrorDominio(f"el pedido {pedido} está cancelado: no se reenvía", pedido=pedido, estado=estado)
    enviado = datos["enviado_en"]
    if estado == "enviado" and motivo == "no_llego" and enviado is not None:
        limite = enviado + timedelta(days=dias_maximos)
        if limite >= datetime.now(tz=enviado.tzinfo):
            raise ErrorDominio(
                f"el pedido {pedido} salió el {fechas.fecha(enviado)} y aún está dentro del plazo de "
                f"reparto ({dias_maximos} días): no llega tarde, debería llegarte como tarde el "
                f"{fechas.fecha(limite)}. No se ha reenviado nada; si ese día aún no lo tienes, "
                "escríbenos y lo reenviamos", pedido=pedido, estado=estado, llega_como_tarde=limite.isoformat())


def _valores_de_politica(conexion, llamada: libro.Llamada, tienda: str) -> dict[str, Any]:
    """Los días de reparto con los que se decide: la instantánea del veredicto de esta llamada
    (fijada al pausar) o, sin ella, los vigentes de la tienda. Se guardan con el reenvío."""
    evaluacion = conexion.execute(SELECT_EVALUACION_SQL, {
        "thread_id": llamada.thread_id, "tool_call_id": llamada.tool_call_id}).fetchone()
    instantanea = (evaluacion or {}).get("valores") or {}
    if "dias_reparto_maximos" in instantanea:
        return {"dias_reparto_maximos": int(instantanea["dias_reparto_maximos"]),
                "limite_reenvio": instantanea.get("limite_reenvio"),
                "version": instantanea.get("version"), "origen": "instantanea"}
    fila = conexion.execute(SELECT_DIAS_SQL, {"tienda": tienda, "defecto": DIAS_REPARTO_POR_DEFECTO}).fetchone()
    return {"dias_reparto_maximos": fila["dias"], "version": fila["version"], "origen": "vigente"}


def _comprobar_misma_operacion(fila: dict, *, contexto: ContextoCliente, pedido: str, linea: int,
                               unidades: int, motivo: str) -> None:
    if (fila["cliente_id"], fila["pedido_id"], fila["linea"], fila["unidades"], fila["motivo"]) != (
            contexto.cliente_id, pedido, linea, unidades, motivo):
        raise ConflictoIdempotencia(
            f"esta llamada ya se ejecutó con otros datos (reenvío {fila['numero']}); no se ha hecho nada nuevo",
            reenvio=fila["numero"])


def _resultado(fila: dict, *, repetido: bool) -> dict[str, Any]:
    return {
        "reenvio": fila["numero"],
        "pedido": fila["pedido_id"],
        "linea": fila["linea"],
        "producto": fila["producto"],
        "unidades": fila["unidades"],
        "motivo": MOTIVOS[fila["motivo"]],
        "tienda": fila["nombre_tienda"],
        "vez": fila["vez"],
        "cargo": "0.00",
        "repetido": repetido,
    }


class ReenviarArgs(BaseModel):
    """Argumentos de ``reenviar`` (lo que lee el modelo de cada uno)."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    linea: int = Field(
        description="Número de `linea` del pedido (de `consultar_pedido`) del producto que no llegó o "
                    "llegó roto. Si el pedido tiene varias líneas y no sabes cuál, pregunta al cliente.")
    unidades: int = Field(
        default=1, ge=1,
        description="Cuántas unidades de esa línea se reenvían (por defecto 1). No más de las que el "
                    "cliente dice que faltan o llegaron rotas.")
    motivo: Literal["no_llego", "llego_roto"] = Field(
        description="«no_llego»: el cliente no lo ha recibido (perdido en el reparto). «llego_roto»: "
                    "llegó roto o inservible y el cliente quiere otro igual. Si llegó con un defecto "
                    "leve y no quiere otro, esto no es un reenvío.")
    descripcion: str = Field(
        default="", max_length=500,
        description="Lo que cuenta el cliente, con sus palabras y en breve (lo lee el encargado).")


def crear_reenviar(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool

    @tool(REENVIO.herramienta, args_schema=ReenviarArgs)
    def reenviar_herramienta(pedido: str, linea: int, motivo: str, runtime: ToolRuntime,
                             unidades: int = 1, descripcion: str = "") -> str:
        """Envía de nuevo, sin ningún cargo, unidades de un producto de un pedido del cliente que no le ha llegado o que le llegó roto o inservible, desde el stock de la tienda del pedido. No cobra ni devuelve dinero: la pasarela de pagos no interviene. Las unidades reenviadas quedan compensadas: ya no se podrán reembolsar ni cambiar.

        Úsala solo cuando el cliente pida que le llegue el producto (otro igual) porque no le ha llegado o llegó roto, después de `consultar_pedido`, con la `linea` de ese producto. Si el cliente prefiere el dinero, es un reembolso, no un reenvío. Un pedido pendiente (aún sin enviar) o cancelado no se reenvía. Un pedido enviado hace pocos días aún no llega tarde: la herramienta lo rechaza y dice hasta qué fecha esperarlo; cuéntaselo al cliente y no lo reenvíes. Según la política de la tienda puede quedar a la espera de un encargado (un producto caro, una línea ya reenviada, un pedido que consta como entregado y el cliente dice que no llegó); no la repitas mientras tanto. Devuelve JSON con el número de reenvío (RV-...), el pedido, el nombre del `producto`, las `unidades`, la `tienda` desde la que sale, `vez` (1 = primer reenvío de esa línea) y `cargo` "0.00"; `repetido: true` quiere decir que ya estaba hecho y no se ha enviado dos veces. Si falla porque no queda stock, no se ha enviado nada: ofrece al cliente el reembolso de lo que pagó. Nunca le digas al cliente códigos de producto (SKU).
        """
        return json_resultado(reenviar(pool, contexto=contexto_de(runtime), pedido=pedido, linea=linea,
                              unidades=unidades, motivo=motivo, descripcion=descripcion, **datos_de_ejecucion(runtime, dependencias)))

    return sin_sangria(reenviar_herramienta)


crear = crear_reenviar
