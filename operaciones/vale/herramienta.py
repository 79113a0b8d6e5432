"""Vales de compensación: un código ``VA-`` y diez dígitos por una línea de un pedido entregado.

Un vale es un pasivo de la tienda (tabla ``vales``, vista ``vales_pasivo``), no un
movimiento de la pasarela: no devuelve dinero ni ocupa unidades del libro (el cliente se
queda el producto). Lo que impide compensar dos veces sin que se vea es la política: un
vale sobre una línea ya reembolsada o cambiada pide firma, y un reembolso o un cambio de
un pedido con vale también (``politicas/reglas``). Idempotente por (hilo, llamada): repetir
la llamada devuelve el mismo vale con ``repetido: true``.

El código es aleatorio (``secrets``), nunca consecutivo: quien lo tiene lo canjea.
"""

from __future__ import annotations

import json
import secrets
from decimal import Decimal
from typing import Any

import psycopg
from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, sin_sangria
from herramientas.esquemas import DESCRIPCION_PEDIDO, Importe
from herramientas.pedidos import normalizar_id
from nucleo import dinero
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import ConflictoIdempotencia, ErrorDominio, ImporteNoValido
from nucleo.puertos import Revalidador
from operaciones.vale.declaracion import VALE, VALE_DIAS_CADUCIDAD_DEFECTO

__all__ = ["MAX_POR_TURNO", "CompensarConValeArgs", "compensar_con_vale", "crear", "crear_compensar_con_vale"]

# Un vale por turno: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 1

SELECT_VALE_POR_CLAVE_SQL = """
SELECT id, numero, pedido_id, linea, cliente_id, importe, caduca, estado
FROM vales WHERE clave_idempotencia = %(clave)s
"""
SELECT_LINEA_SQL = """
SELECT l.linea, l.unidades * l.precio_unitario AS pagado, pr.nombre AS producto
FROM lineas_pedido l JOIN productos pr ON pr.sku = l.sku
WHERE l.pedido_id = %(pedido)s AND l.linea = %(linea)s
"""
SELECT_CADUCIDAD_SQL = """
SELECT coalesce((SELECT vale_dias_caducidad FROM politicas_tienda WHERE tienda = %(tienda)s),
                %(defecto)s::int) AS dias
"""
INSERT_VALE_SQL = """
INSERT INTO vales (numero, clave_idempotencia, thread_id, tool_call_id, pedido_id, linea, cliente_id,
                   tienda, importe, motivo, caduca, aprobado_por, trace_id)
VALUES (%(numero)s, %(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(linea)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(motivo)s, current_date + %(dias)s::int, %(aprobado_por)s, %(trace_id)s)
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

_INTENTOS_CODIGO = 5


def _codigo() -> str:
    return f"VA-{secrets.randbelow(10**10):010d}"


def _resultado(fila: dict, *, repetido: bool) -> dict[str, Any]:
    return {
        "vale": fila["numero"],
        "pedido": fila["pedido_id"],
        "importe": dinero.texto(fila["importe"]),
        "caduca": fila["caduca"].isoformat(),
        "estado": fila["estado"],
        "repetido": repetido,
    }


def compensar_con_vale(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    linea: int,
    importe: Decimal | str | int | float,
    motivo: str,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
) -> dict[str, Any]:
    """Emite un vale de ``importe`` por la ``linea`` del pedido entregado del cliente.

    Repetir la misma clave devuelve el mismo vale (``repetido: True``); la misma clave con
    otro pedido, línea o importe es ``ConflictoIdempotencia``. Una comprobación fallida
    no escribe nada.
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    pedido = normalizar_id(pedido)
    importe = dinero.importe(importe)
    motivo = (motivo or "").strip()[:500] or "compensación al cliente"
    with pool.connection() as conexion:
        ya = conexion.execute(SELECT_VALE_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
        if ya is None:
            for intento in range(_INTENTOS_CODIGO):
                try:
                    fila, nuevo = _emitir(conexion, llamada, pedido=pedido, linea=linea, importe=importe,
                                          motivo=motivo)
                    break
                except psycopg.errors.UniqueViolation:
                    # Dos códigos iguales entre diez mil millones: se prueba otro.
                    if intento == _INTENTOS_CODIGO - 1:
                        raise
        else:
            fila, nuevo = ya, False
    if not nuevo and (fila["cliente_id"] != contexto.cliente_id or fila["pedido_id"] != pedido
                      or fila["linea"] != linea or fila["importe"] != importe):
        raise ConflictoIdempotencia(
            f"esta llamada ya se ejecutó con otros datos (vale {fila['numero']}); no se ha hecho nada nuevo",
            vale=fila["numero"])
    return _resultado(fila, repetido=not nuevo)


def _emitir(conexion: psycopg.Connection, llamada: libro.Llamada, *, pedido: str, linea: int,
            importe: Decimal, motivo: str) -> tuple[dict, bool]:
    clave = {"clave": llamada.clave}
    with conexion.transaction():
        fila_pedido = libro.bloquear_pedido(conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id)
        ya = conexion.execute(SELECT_VALE_POR_CLAVE_SQL, clave).fetchone()
        if ya is not None:
            return ya, False
        libro.exigir_entregado(libro.elegibilidad(conexion, pedido), accion="dar un vale de compensación")
        fila_linea = conexion.execute(SELECT_LINEA_SQL, {"pedido": pedido, "linea": linea}).fetchone()
        if fila_linea is None:
            raise ErrorDominio(f"el pedido {pedido} no tiene la línea {linea}: revisa `linea` en consultar_pedido",
                               pedido=pedido)
        if importe > fila_linea["pagado"]:
            raise ImporteNoValido(
                f"un vale no puede pasar de lo pagado por la línea ({dinero.eur(fila_linea['pagado'])})",
                maximo=dinero.texto(fila_linea["pagado"]))
        libro.exigir_veredicto_vigente(conexion, llamada)
        dias = conexion.execute(SELECT_CADUCIDAD_SQL, {"tienda": fila_pedido["tienda"],
                                                       "defecto": VALE_DIAS_CADUCIDAD_DEFECTO}).fetchone()["dias"]
        conexion.execute(INSERT_VALE_SQL, {
            **llamada.parametros(), "numero": _codigo(), "pedido": pedido, "linea": linea,
            "tienda": fila_pedido["tienda"], "importe": importe, "motivo": motivo, "dias": dias,
        })
        return conexion.execute(SELECT_VALE_POR_CLAVE_SQL, clave).fetchone(), True


class CompensarConValeArgs(BaseModel):
    """Argumentos de compensar_con_vale."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    linea: int = Field(
        ge=1,
        description=(
            "Número de la línea del pedido que se compensa: el campo `linea` de ese producto en "
            "`consultar_pedido`. El máximo sin firma se calcula sobre lo pagado por esa línea."
        ),
    )
    importe: Importe = Field(
        description=(
            "Importe del vale en euros, número con punto decimal y como mucho dos decimales (por "
            "ejemplo 9.90). Si el cliente no pide una cantidad concreta, propón lo que la tienda "
            "da sin firma según `consultar_politica` (un porcentaje de lo pagado por la línea con "
            "un tope en euros; por defecto el 10 % hasta 10.00). "
            "Si pide más, pon lo que pide: un encargado decidirá y puede bajarlo. Nunca más de lo "
            "pagado por la línea."
        ),
    )
    motivo: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Por qué se compensa, en una frase en español que resuma lo que dice el cliente, por "
            "ejemplo «la lámpara llegó con un arañazo y se la queda». Lo leen el encargado y "
            "contabilidad."
        ),
    )


def crear_compensar_con_vale(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool

    @tool(VALE.herramienta, args_schema=CompensarConValeArgs)
    def compensar_con_vale_tool(pedido: str, linea: int, importe: Decimal, motivo: str,
                                runtime: ToolRuntime) -> str:
        """Da al cliente un vale de compensación (un código VA- que canjea en la tienda) por una molestia con un producto que se queda: llegó con un arañazo o un defecto menor y no quiere devolverlo, llegó tarde... No devuelve dinero ni se lleva el producto.

        Úsala solo cuando el cliente acepte quedarse el producto a cambio de una compensación, después de `consultar_pedido`, con un pedido entregado y la línea del producto afectado. Si quiere devolverlo, usa `reembolsar`; si quiere otro producto, `sustituir`. Un vale y un reembolso o un cambio de la misma línea son compensar dos veces: no los propongas juntos. Según la política de la tienda puede quedar a la espera de la aprobación de un encargado (un importe por encima del máximo sin firma, o un segundo vale en 90 días), que puede bajar el importe; no la repitas mientras tanto. Devuelve JSON con el código del vale (`vale`, VA- y diez dígitos), el pedido, el `importe`, la fecha en que `caduca` y el estado "emitido": dale al cliente el código, el importe y la caducidad. `repetido: true` quiere decir que ese vale ya estaba emitido y no se ha dado otro.
        """
        return json.dumps(compensar_con_vale(
            pool, contexto=contexto_de(runtime), pedido=pedido, linea=linea, importe=importe,
            motivo=motivo, **datos_de_ejecucion(runtime, dependencias),
        ), ensure_ascii=False)

    return sin_sangria(compensar_con_vale_tool)


crear = crear_compensar_con_vale
