"""Cambiar la dirección de envío de un pedido pendiente del cliente.

No mueve dinero ni género: apunta el cambio en ``cambios_direccion`` (la dirección antigua
y la nueva, número ``CD-...``) y pone la nueva en el pedido, en una transacción. Sin
movimiento de pasarela. Idempotente por (hilo, ``tool_call_id``): repetir la llamada
devuelve el mismo cambio (``repetido: true``); repetirla con otra dirección es un
conflicto. Un pedido que ya no está ``pendiente`` (enviado, entregado, cancelado) no
cambia, y un código postal que no es español (5 cifras, prefijo 01-52) se rechaza; en los
dos casos sin escribir nada.
"""

from __future__ import annotations

import json
from typing import Any

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, sin_sangria
from herramientas.esquemas import DESCRIPCION_PEDIDO
from herramientas.pedidos import normalizar_id
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.direcciones import Direccion, direccion
from nucleo.errores import ConflictoIdempotencia, ErrorDominio, PedidoNoEncontrado
from nucleo.puertos import Revalidador
from operaciones.direccion.declaracion import DIRECCION

__all__ = ["MAX_POR_TURNO", "CambiarDireccionArgs", "cambiar_direccion", "crear", "crear_cambiar_direccion"]

# Un cambio de dirección por turno: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 1

BLOQUEAR_PEDIDO_SQL = """
SELECT id, tienda, estado, importe, calle, codigo_postal, localidad, provincia
FROM pedidos WHERE id = %(pedido)s AND cliente_id = %(cliente_id)s
FOR UPDATE
"""
SELECT_CAMBIO_SQL = """
SELECT numero, pedido_id, cliente_id, calle_anterior, codigo_postal_anterior, localidad_anterior,
       provincia_anterior, calle, codigo_postal, localidad, provincia
FROM cambios_direccion WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""
SELECT_VALORES_SQL = """
SELECT valores FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""
INSERT_CAMBIO_SQL = """
INSERT INTO cambios_direccion (thread_id, tool_call_id, pedido_id, cliente_id, tienda, importe,
    calle_anterior, codigo_postal_anterior, localidad_anterior, provincia_anterior,
    calle, codigo_postal, localidad, provincia, aprobado_por, trace_id, valores_politica)
VALUES (%(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s, %(tienda)s, %(importe)s,
    %(calle_anterior)s, %(codigo_postal_anterior)s, %(localidad_anterior)s, %(provincia_anterior)s,
    %(calle)s, %(codigo_postal)s, %(localidad)s, %(provincia)s, %(aprobado_por)s, %(trace_id)s,
    %(valores_politica)s)
ON CONFLICT (thread_id, tool_call_id) DO NOTHING
RETURNING numero
"""
UPDATE_PEDIDO_SQL = """
UPDATE pedidos SET calle = %(calle)s, codigo_postal = %(codigo_postal)s, localidad = %(localidad)s,
                   provincia = %(provincia)s
WHERE id = %(pedido)s
"""

ESTADOS_TEXTO = {"enviado": "ya ha salido (está enviado)", "entregado": "ya se ha entregado",
                 "cancelado": "está cancelado"}


def _texto(calle, codigo_postal, localidad, provincia) -> str | None:
    if not codigo_postal:
        return None
    return f"{calle}, {codigo_postal} {localidad} ({provincia})"


def _resultado(fila: dict, *, repetido: bool) -> dict[str, Any]:
    return {
        "cambio_direccion": fila["numero"],
        "pedido": fila["pedido_id"],
        "direccion_anterior": _texto(fila["calle_anterior"], fila["codigo_postal_anterior"],
                                     fila["localidad_anterior"], fila["provincia_anterior"]),
        "direccion_nueva": _texto(fila["calle"], fila["codigo_postal"], fila["localidad"], fila["provincia"]),
        "estado": "hecho",
        "repetido": repetido,
    }


def _misma(fila: dict, nueva: Direccion, pedido: str) -> dict:
    if (fila["pedido_id"], fila["calle"], fila["codigo_postal"], fila["localidad"]) != (
            pedido, nueva.calle, nueva.codigo_postal, nueva.localidad):
        raise ConflictoIdempotencia(
            "esta llamada ya cambió otra dirección u otro pedido; no se ha cambiado nada más")
    return fila


def cambiar_direccion(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    calle: str,
    codigo_postal: str,
    localidad: str,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
) -> dict[str, Any]:
    """Pone ``calle``, ``codigo_postal`` y ``localidad`` (la provincia sale del código postal)
    como dirección de envío de ``pedido`` y apunta el cambio. Devuelve su número (CD-...),
    la dirección anterior y la nueva.

    Raises:
        CodigoPostalNoValido: el código postal no es español.
        PedidoNoEncontrado: el pedido no existe o es de otro cliente.
        ErrorDominio: el pedido ya no está pendiente (enviado, entregado o cancelado).
        ConflictoIdempotencia: la misma llamada con otra dirección.
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    pedido = normalizar_id(pedido)
    nueva = direccion(calle, codigo_postal, localidad)
    clave = {"thread_id": thread_id, "tool_call_id": tool_call_id}
    with pool.connection() as conexion, conexion.transaction():
        fila = conexion.execute(BLOQUEAR_PEDIDO_SQL, {"pedido": pedido, "cliente_id": contexto.cliente_id}).fetchone()
        if fila is None:
            raise PedidoNoEncontrado(pedido)
        hecho = conexion.execute(SELECT_CAMBIO_SQL, clave).fetchone()
        if hecho is not None:
            return _resultado(_misma(hecho, nueva, pedido), repetido=True)
        if fila["estado"] != "pendiente":
            raise ErrorDominio(
                f"el pedido {pedido} {ESTADOS_TEXTO.get(fila['estado'], fila['estado'])} y su dirección ya no "
                "se puede cambiar; solo la de un pedido pendiente. Si ya está en camino, se puede "
                "rechazar la entrega o hablar con el transportista", pedido=pedido, estado=fila["estado"])
        libro.exigir_veredicto_vigente(conexion, llamada)
        evaluacion = conexion.execute(SELECT_VALORES_SQL, clave).fetchone()
        insertada = conexion.execute(INSERT_CAMBIO_SQL, {
            **clave, "pedido": pedido, "cliente_id": contexto.cliente_id, "tienda": fila["tienda"],
            "importe": fila["importe"], "calle_anterior": fila["calle"],
            "codigo_postal_anterior": fila["codigo_postal"], "localidad_anterior": fila["localidad"],
            "provincia_anterior": fila["provincia"], **nueva.como_json(),
            "aprobado_por": aprobado_por, "trace_id": trace_id,
            "valores_politica": Jsonb(evaluacion["valores"]) if evaluacion and evaluacion["valores"] else None,
        }).fetchone()
        if insertada is None:  # la misma llamada, a la vez, en otra transacción
            return _resultado(_misma(conexion.execute(SELECT_CAMBIO_SQL, clave).fetchone(), nueva, pedido),
                              repetido=True)
        conexion.execute(UPDATE_PEDIDO_SQL, {"pedido": pedido, **nueva.como_json()})
        return _resultado(conexion.execute(SELECT_CAMBIO_SQL, clave).fetchone(), repetido=False)


class CambiarDireccionArgs(BaseModel):
    """Argumentos de cambiar_direccion."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    calle: str = Field(
        min_length=1, max_length=200,
        description=("Calle (o plaza, avenida...) con su número, y piso o puerta si el cliente los da, "
                     "sin el código postal ni la localidad: por ejemplo «Calle Mayor 5, 2º B»."))
    codigo_postal: str = Field(
        min_length=1, max_length=10,
        description=("Código postal español de la dirección nueva: 5 cifras, sin espacios, con el cero "
                     "inicial si lo tiene (por ejemplo «28013» o «08001»); las dos primeras son las de "
                     "la provincia (01 a 52). No lo inventes ni lo deduzcas de la localidad: si el "
                     "cliente no lo da, pídeselo. La provincia sale de él: no la escribas."))
    localidad: str = Field(
        min_length=1, max_length=100,
        description="Localidad (municipio) de la dirección nueva, por ejemplo «Madrid» o «Barcelona».")


def crear_cambiar_direccion(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool

    @tool(DIRECCION.herramienta, args_schema=CambiarDireccionArgs)
    def cambiar_direccion_envio(pedido: str, calle: str, codigo_postal: str, localidad: str,
                                runtime: ToolRuntime) -> str:
        """Cambia la dirección de envío de un pedido del cliente que aún está pendiente (sin enviar). No mueve dinero ni productos: solo dónde se entregará el pedido.

        Úsala solo cuando el cliente haya pedido cambiar la dirección de envío y te haya dado la dirección nueva completa: calle con número, código postal (5 cifras) y localidad; si falta algo, pídeselo antes y no lo inventes. Consulta antes el pedido con `consultar_pedido`: un pedido enviado, entregado o cancelado no puede cambiar de dirección (díselo al cliente: si ya está en camino, puede rechazar la entrega). Un cambio a otra provincia, o de un pedido de importe alto, queda a la espera de la aprobación de un encargado; no lo repitas ni lo reformules mientras tanto. Devuelve JSON con el número del cambio (CD-...), el pedido, `direccion_anterior` (null si no tenía), `direccion_nueva` (con la provincia) y el estado "hecho"; `repetido: true` quiere decir que este mismo cambio ya estaba hecho. Si falla con «código postal no válido», pide al cliente que lo revise.
        """
        resultado = cambiar_direccion(pool, contexto=contexto_de(runtime), pedido=pedido, calle=calle,
                                      codigo_postal=codigo_postal, localidad=localidad, **datos_de_ejecucion(runtime, dependencias))
        return json.dumps(resultado, ensure_ascii=False)

    return sin_sangria(cambiar_direccion_envio)


crear = crear_cambiar_direccion
