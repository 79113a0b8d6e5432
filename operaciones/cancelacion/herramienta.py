"""Cancelar un pedido sin enviar: el pedido entero, su stock de vuelta y lo pagado devuelto.

Orden (como un reembolso de una devolución): 1) en una transacción, con el
pedido bloqueado y 'pendiente' (uno enviado, entregado o ya cancelado se rechaza con lo
que el cliente puede hacer), se apunta la cancelación, cada unidad de cada línea queda
compensada en el libro por ella (ya no se puede reembolsar ni cambiar), las unidades
vuelven al stock de la tienda del pedido, el pedido pasa a 'cancelado' y se apunta UN
reembolso 'pendiente' de concepto 'cancelacion' por lo pagado; COMMIT. 2) y 3) los hace
``movimientos.ejecutar`` (la cola de movimientos de la pasarela). Si la pasarela falla, el
pedido ya está cancelado y el reembolso queda pendiente: lo completa el sistema
(``movimientos.completar_pendientes``) y el cliente lo lee así, nunca «devuelto».

Idempotente por ``tool_call_id`` (clave ``hilo:llamada``): repetir la llamada termina el
trabajo sin mover dinero dos veces; la misma clave con otro pedido es
``ConflictoIdempotencia``. La cancelación es siempre del pedido entero: no hay
cancelación parcial (quitar una línea de un pedido sin enviar no se hace aquí).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro, movimientos
from caja.pasarela import Pasarela
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, json_resultado, sin_sangria
from herramientas.pedidos import normalizar_id
from nucleo import dinero
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import (
    ConflictoIdempotencia,
    ErrorDominio,
    ImporteNoValido,
)
from nucleo.puertos import Revalidador
from operaciones.cancelacion.declaracion import CANCELACION

__all__ = ["MAX_POR_TURNO", "CancelarPedidoArgs", "NoCancelable", "alternativas", "cancelar_pedido", "crear",
           "crear_cancelar_pedido"]

# Dos cancelaciones por turno como mucho: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 2

SELECT_CANCELACION_POR_CLAVE_SQL = """
SELECT c.id, c.numero, c.pedido_id, c.cliente_id, c.importe,
       r.id AS reembolso_id, r.numero AS reembolso, r.estado AS estado_reembolso,
       (SELECT count(*)::int FROM compensaciones_unidad u WHERE u.cancelacion_id = c.id) AS unidades
FROM cancelaciones c LEFT JOIN reembolsos r ON r.cancelacion_id = c.id
WHERE c.clave_idempotencia = %(clave)s
"""

SELECT_ESTADO_PEDIDO_SQL = "SELECT estado, importe FROM pedidos WHERE id = %(pedido)s"

INSERT_CANCELACION_SQL = """
INSERT INTO cancelaciones (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                           tienda, importe, motivo, aprobado_por, trace_id)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s, %(tienda)s,
        %(importe)s, %(motivo)s, %(aprobado_por)s, %(trace_id)s)
RETURNING id
"""

# Cada unidad de cada línea, compensada por la cancelación a su precio.
INSERT_UNIDADES_CANCELADAS_SQL = """
INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, cancelacion_id, importe)
SELECT l.pedido_id, l.linea, g.unidad, %(cancelacion_id)s, l.precio_unitario
FROM lineas_pedido l CROSS JOIN LATERAL generate_series(1, l.unidades) AS g(unidad)
WHERE l.pedido_id = %(pedido)s
"""

# Las unidades vuelven al stock de la tienda del pedido (una sentencia por pedido).
DEVOLVER_STOCK_SQL = """
INSERT INTO stock (sku, tienda, unidades)
SELECT l.sku, %(tienda)s, sum(l.unidades)::int FROM lineas_pedido l
WHERE l.pedido_id = %(pedido)s GROUP BY l.sku
ON CONFLICT (tienda, sku) DO UPDATE SET unidades = stock.unidades + EXCLUDED.unidades
"""

MARCAR_CANCELADO_SQL = "UPDATE pedidos SET estado = 'cancelado' WHERE id = %(pedido)s AND estado = 'pendiente'"

INSERT_REEMBOLSO_CANCELACION_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                        tienda, importe, motivo, concepto, cancelacion_id, aprobado_por, trace_id,
                        proximo_intento)
VALUES (%(clave)s || ':cancelacion', %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(motivo)s, 'cancelacion', %(cancelacion_id)s, %(aprobado_por)s,
        %(trace_id)s, now() + make_interval(secs => %(reserva)s))
"""


class NoCancelable(ErrorDominio):
    """El pedido ya salió o ya estaba cancelado: el mensaje dice qué puede hacer el cliente."""


def alternativas(estado: str) -> str:
    """Lo que el cliente puede hacer en vez de cancelar un pedido en ``estado`` (en español)."""
    if estado == "enviado":
        return ("ya ha salido del almacén y no se puede cancelar. Puede rechazar la entrega cuando "
                "llegue, o devolverlo cuando lo reciba; si no le llega, que nos avise y lo "
                "revisamos como pedido perdido")
    if estado == "entregado":
        return ("ya está entregado y no se puede cancelar. Puede devolverlo dentro del plazo de "
                "la tienda y se le reembolsa")
    if estado == "cancelado":
        return "ya estaba cancelado; no hay nada más que cancelar"
    return f"está en estado «{estado}» y no se puede cancelar"


def cancelar_pedido(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    importe: Decimal | str | int | float,
    motivo: str,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
    pasarela: Pasarela,
) -> dict[str, Any]:
    """Cancela el pedido entero ``pedido`` del cliente y devuelve lo pagado; resultado JSON-able.

    Raises:
        PedidoNoEncontrado: no es un pedido de este cliente.
        ImporteNoValido: ``importe`` no es lo pagado por el pedido (el mensaje dice lo pagado).
        NoCancelable: enviado, entregado o ya cancelado (con las alternativas).
        ConflictoIdempotencia: la misma llamada ya canceló otro pedido.
        ErrorPasarela: el pedido queda cancelado y la devolución pendiente (texto para el cliente).
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    pedido = normalizar_id(pedido)
    importe = dinero.importe(importe)
    clave = {"clave": llamada.clave}
    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_CANCELACION_POR_CLAVE_SQL, clave).fetchone()
    nueva = False
    if fila is None:
        fila, nueva = _apuntar(pool, llamada, pedido=pedido, importe=importe, motivo=motivo)
    if fila["pedido_id"] != pedido or fila["cliente_id"] != contexto.cliente_id or fila["importe"] != importe:
        raise ConflictoIdempotencia(
            f"esta llamada ya se ejecutó con otros datos (cancelación {fila['numero']}); no se ha hecho nada nuevo",
            cancelacion=fila["numero"])
    if fila["estado_reembolso"] == "pendiente":
        _emitir(pool, fila, pasarela)
    return {
        "cancelacion": fila["numero"],
        "pedido": fila["pedido_id"],
        "estado_pedido": "cancelado",
        "importe_devuelto": dinero.texto(fila["importe"]),
        "reembolso": fila["reembolso"],
        "estado_reembolso": "emitido" if fila["reembolso"] else "nada que devolver",
        "unidades": fila["unidades"],
        "repetido": not nueva,
    }


def _apuntar(
    pool: ConnectionPool, llamada: libro.Llamada, *, pedido: str, importe: Decimal, motivo: str
) -> tuple[dict, bool]:
    """Paso 1: cancelación, libro, stock, estado y reembolso pendiente. (fila, es_nueva)."""
    clave = {"clave": llamada.clave}
    with pool.connection() as conexion, conexion.transaction():
        fila_pedido = libro.bloquear_pedido(conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id)
        ya = conexion.execute(SELECT_CANCELACION_POR_CLAVE_SQL, clave).fetchone()
        if ya is not None:  # una llamada gemela confirmó mientras esperábamos el candado
            return ya, False
        estado = conexion.execute(SELECT_ESTADO_PEDIDO_SQL, {"pedido": pedido}).fetchone()["estado"]
        if estado != "pendiente":
            raise NoCancelable(f"el pedido {pedido} {alternativas(estado)}", estado=estado, pedido=pedido)
        if importe != fila_pedido["importe"]:
            # Se devuelve lo pagado, ni más ni menos: lo que autorizó la política o la firma.
            raise ImporteNoValido(
                f"el importe de una cancelación es lo pagado por el pedido entero, "
                f"{dinero.eur(fila_pedido['importe'])}, no {dinero.eur(importe)}; no se ha cancelado nada",
                pagado=dinero.texto(fila_pedido["importe"]))
        libro.exigir_veredicto_vigente(conexion, llamada)
        comunes = {**llamada.parametros(), "pedido": pedido, "tienda": fila_pedido["tienda"],
                   "importe": fila_pedido["importe"], "motivo": motivo}
        cancelacion_id = conexion.execute(INSERT_CANCELACION_SQL, comunes).fetchone()["id"]
        conexion.execute(INSERT_UNIDADES_CANCELADAS_SQL, {"pedido": pedido, "cancelacion_id": cancelacion_id})
        conexion.execute(DEVOLVER_STOCK_SQL, {"pedido": pedido, "tienda": fila_pedido["tienda"]})
        conexion.execute(MARCAR_CANCELADO_SQL, {"pedido": pedido})
        if fila_pedido["importe"] > 0:
            conexion.execute(INSERT_REEMBOLSO_CANCELACION_SQL, {
                **comunes, "cancelacion_id": cancelacion_id, "reserva": movimientos.RESERVA_SEGUNDOS,
                "motivo": f"cancelación del pedido {pedido}: {motivo}"})
        return conexion.execute(SELECT_CANCELACION_POR_CLAVE_SQL, clave).fetchone(), True


def _emitir(pool: ConnectionPool, fila: dict, pasarela: Pasarela) -> None:
    """Pasos 2 y 3 por la cola de movimientos; si la pasarela falla, el texto para el cliente."""
    movimientos.emitir_reembolso(
        pool, pasarela, fila["reembolso_id"], cancelacion=fila["numero"], estado="pendiente",
        texto_si_falla=lambda motivo: (
            f"el pedido {fila['pedido_id']} está cancelado (cancelación {fila['numero']}), pero la "
            f"pasarela de pagos no ha confirmado todavía la devolución de {dinero.eur(fila['importe'])} "
            f"({motivo}). La devolución queda pendiente y el sistema la completará sola, sin pagar "
            "dos veces. Dile al cliente que el pedido está cancelado y que la devolución queda pendiente "
            "y le avisaremos por aquí; no le digas que ya está devuelto"),
    )


# -- lo que lee el modelo ------------------------------------------------------------------------


class CancelarPedidoArgs(BaseModel):
    pedido: str = Field(
        description="El número del pedido del cliente que se cancela entero, como «P-20261008-0201». "
                    "Solo un pedido por llamada.")
    importe: str = Field(
        description="Lo que se devuelve, en euros como texto («25.00»): siempre lo pagado por el pedido "
                    "entero, el `importe` que da `consultar_pedido`. No lo cambies aunque el cliente pida otra "
                    "cantidad: con otro importe no se cancela nada.")
    motivo: str = Field(
        description="Por qué lo cancela el cliente, con sus palabras y en una frase "
                    "(«ya no lo necesito»). Si no lo ha dicho, «cancelación solicitada por el cliente».")


def crear_cancelar_pedido(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool
    pasarela = dependencias.pasarela

    @tool(CANCELACION.herramienta, args_schema=CancelarPedidoArgs)
    def cancelar_pedido_(pedido: str, importe: str, motivo: str, runtime: ToolRuntime) -> str:
        """Cancela ENTERO un pedido del cliente que aún no ha salido (estado "pendiente"): el pedido pasa a "cancelado", sus productos vuelven al stock de la tienda y se le devuelve todo lo pagado a su medio de pago original. Mueve dinero de verdad.

        Úsala solo cuando el cliente pida cancelar o anular su pedido, después de `consultar_pedido` y solo si su estado es "pendiente", con el `importe` del pedido que te da esa consulta. No hay cancelación parcial: se cancela el pedido completo; si el cliente quiere quitar solo un producto, díselo y pregúntale si cancela el pedido entero. Un pedido "enviado" o "entregado" no se puede cancelar: no la llames y explícale lo que puede hacer (rechazar la entrega cuando llegue, devolverlo cuando lo reciba, o avisarnos si no le llega y lo revisamos como perdido). Según la política de la tienda, un pedido de importe alto queda a la espera de la aprobación de un encargado; no la repitas ni la reformules mientras tanto. Devuelve JSON con el número de la cancelación (CA-...), el pedido, `importe_devuelto`, el número del reembolso (RE-...) y su estado ("emitido"); `repetido: true` quiere decir que ya estaba cancelado por esta misma operación y no se ha devuelto dinero dos veces. Si falla la pasarela de pagos, el pedido sí está cancelado pero la devolución queda pendiente: dile al cliente que le avisaremos por aquí, nunca que ya está devuelta. Al cliente no le des números internos de producto.
        """
        return json_resultado(
            cancelar_pedido(pool, contexto=contexto_de(runtime), pedido=pedido, importe=importe, motivo=motivo,
                            pasarela=pasarela, **datos_de_ejecucion(runtime, dependencias)))

    return sin_sangria(cancelar_pedido_)


crear = crear_cancelar_pedido
