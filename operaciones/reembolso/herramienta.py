"""Reembolsos de una devolución: por unidades del libro, idempotentes y por la cola de movimientos.

Orden: 1) en una transacción, con el pedido bloqueado y entregado (uno cancelado o sin
entregar se rechaza), se asignan las unidades (``asignacion.asignar``), se apuntan el
reembolso 'pendiente', sus unidades en ``compensaciones_unidad`` y la devolución;
COMMIT. 2) y 3) los hace ``movimientos.ejecutar``: la pasarela con el número del
reembolso como referencia y, después, 'emitido'. Si la pasarela falla, el reembolso
queda pendiente, con su intento apuntado, y el sistema lo completa
(``movimientos.completar_pendientes``); el error que recibe el modelo lo dice así:
«queda pendiente; te avisaremos por aquí», nunca «emitido». Repetir la misma llamada
(misma clave) termina el trabajo sin mover dinero dos veces.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from langchain.tools import BaseTool, ToolRuntime, tool
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool
from pydantic import BaseModel, Field

from caja import libro, movimientos
from caja.asignacion import LineaPedida, asignar, normalizar_lineas
from caja.pasarela import Pasarela
from herramientas.envoltorios import Dependencias, datos_de_ejecucion, json_resultado, sin_sangria
from herramientas.esquemas import DESCRIPCION_PEDIDO, Importe
from herramientas.pedidos import normalizar_id
from nucleo import dinero
from nucleo.contexto import ContextoCliente, contexto_de
from nucleo.errores import ConflictoIdempotencia
from nucleo.puertos import Revalidador
from operaciones.reembolso.declaracion import REEMBOLSO

__all__ = ["MAX_POR_TURNO", "LineaReembolso", "ReembolsarArgs", "crear", "crear_reembolsar", "reembolsar"]

# Dos reembolsos por turno como mucho: el registro lo toma de aquí (``Herramienta.de_operacion``).
MAX_POR_TURNO = 2

SELECT_REEMBOLSO_POR_CLAVE_SQL = """
SELECT r.id, r.numero, r.pedido_id, r.cliente_id, r.importe, r.estado,
       coalesce((SELECT jsonb_agg(jsonb_build_object('linea', u.linea, 'unidades', u.n)
                                  ORDER BY u.linea)
                 FROM (SELECT linea, count(*)::int AS n FROM compensaciones_unidad
                       WHERE reembolso_id = r.id GROUP BY linea) u), '[]') AS unidades
FROM reembolsos r WHERE r.clave_idempotencia = %(clave)s
"""

INSERT_REEMBOLSO_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                        tienda, importe, motivo, lineas, aprobado_por, trace_id, proximo_intento)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(motivo)s, %(lineas)s, %(aprobado_por)s, %(trace_id)s,
        now() + make_interval(secs => %(reserva)s))
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

# La devolución hace que el recuento de devoluciones de la política la vea.
INSERT_DEVOLUCION_SQL = """
INSERT INTO devoluciones (pedido_id, cliente_id, tienda, importe, motivo, reembolso_id)
VALUES (%(pedido)s, %(cliente_id)s, %(tienda)s, %(importe)s, %(motivo)s, %(reembolso_id)s)
"""


def reembolsar(
    pool: ConnectionPool,
    *,
    contexto: ContextoCliente,
    thread_id: str,
    tool_call_id: str,
    pedido: str,
    importe: Decimal | str | int | float,
    motivo: str,
    lineas: list[Any] | None = None,
    aprobado_por: str | None = None,
    trace_id: str | None = None,
    revalidador: Revalidador | None = None,
    pasarela: Pasarela,
) -> dict[str, Any]:
    """Reembolsa ``importe`` de unidades libres del pedido del cliente; resultado JSON-able.

    ``lineas``: ``None`` (las unidades libres del pedido, en orden), números de línea o
    ``{"linea": n, "unidades": k}`` (ver ``caja.libro``). Repetir la misma clave
    devuelve el mismo reembolso con ``repetido: True`` (y lo completa si quedó
    pendiente); la misma clave con otro pedido o importe es ``ConflictoIdempotencia``.
    Una comprobación fallida no escribe nada. Pasarela caída: ``ErrorPasarela`` con el
    texto para el cliente y el reembolso apuntado como pendiente.
    """
    llamada = libro.Llamada(contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id,
                            aprobado_por=aprobado_por, trace_id=trace_id, revalidador=revalidador)
    pedido = normalizar_id(pedido)
    importe = dinero.importe(importe)
    pedidas = normalizar_lineas(lineas)

    with pool.connection() as conexion:
        fila = conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, {"clave": llamada.clave}).fetchone()
    nuevo = False
    if fila is None:
        fila, nuevo = _apuntar(
            pool, llamada, pedido=pedido, importe=importe, motivo=motivo, pedidas=pedidas
        )
    if not nuevo:
        _comprobar_misma_operacion(fila, contexto=contexto, pedido=pedido, importe=importe)
    if fila["estado"] == "pendiente":
        _emitir(pool, fila, pasarela)
    return {
        "reembolso": fila["numero"],
        "pedido": fila["pedido_id"],
        "importe": dinero.texto(fila["importe"]),
        "estado": "emitido",
        "repetido": not nuevo,
        "unidades": fila["unidades"],
    }


def _apuntar(
    pool: ConnectionPool,
    llamada: libro.Llamada,
    *,
    pedido: str,
    importe: Decimal,
    motivo: str,
    pedidas: list[LineaPedida] | None,
) -> tuple[dict, bool]:
    """Paso 1: asigna unidades y apunta 'pendiente' + libro + devolución. (fila, es_nueva)."""
    clave = {"clave": llamada.clave}
    with pool.connection() as conexion, conexion.transaction():
        fila_pedido = libro.bloquear_pedido(
            conexion, pedido=pedido, cliente_id=llamada.contexto.cliente_id
        )
        # Una llamada gemela pudo confirmar mientras esperábamos el candado.
        ya = conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, clave).fetchone()
        if ya is not None:
            return ya, False
        hechos = libro.elegibilidad(conexion, pedido, llamada=llamada)
        libro.exigir_entregado(hechos, accion="reembolsar un producto")
        asignacion = asignar(
            libro.unidades_libres(conexion, pedido),
            importe,
            pedidas,
            pedido=pedido,
            lineas_del_pedido=libro.numeros_de_linea(conexion, pedido),
        )
        libro.exigir_veredicto_vigente(conexion, llamada, hechos=hechos)
        comunes = {"pedido": pedido, "tienda": fila_pedido["tienda"], "importe": importe,
                   "motivo": motivo}
        nueva = conexion.execute(
            INSERT_REEMBOLSO_SQL,
            {
                **llamada.parametros(),
                **comunes,
                "lineas": Jsonb(sorted({u.linea for u, _ in asignacion})),
                "reserva": movimientos.RESERVA_SEGUNDOS,
            },
        ).fetchone()
        if nueva is None:
            # La clave la confirmó a la vez una llamada sobre otro pedido; aquí no se escribió nada.
            return conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, clave).fetchone(), False
        libro.apuntar_unidades(
            conexion, pedido=pedido, asignacion=asignacion, reembolso_id=nueva["id"]
        )
        conexion.execute(
            INSERT_DEVOLUCION_SQL,
            {**comunes, "cliente_id": llamada.contexto.cliente_id, "reembolso_id": nueva["id"]},
        )
        return conexion.execute(SELECT_REEMBOLSO_POR_CLAVE_SQL, clave).fetchone(), True


def _comprobar_misma_operacion(
    fila: dict, *, contexto: ContextoCliente, pedido: str, importe: Decimal
) -> None:
    if (
        fila["cliente_id"] != contexto.cliente_id
        or fila["pedido_id"] != pedido
        or fila["importe"] != importe
    ):
        raise ConflictoIdempotencia(
            "esta llamada ya se ejecutó con otros datos (reembolso "
            f"{fila['numero']}); no se ha hecho nada nuevo",
            reembolso=fila["numero"],
        )


def _emitir(pool: ConnectionPool, fila: dict, pasarela: Pasarela) -> None:
    """Pasos 2 y 3 por la cola de movimientos; si la pasarela falla, el texto para el cliente."""
    movimientos.emitir_reembolso(
        pool, pasarela, fila["id"], reembolso=fila["numero"], estado="pendiente",
        texto_si_falla=lambda motivo: (
            f"la pasarela de pagos no ha confirmado todavía el reembolso {fila['numero']} de "
            f"{dinero.eur(fila['importe'])} ({motivo}). El reembolso queda registrado como "
            "pendiente y el sistema lo completará solo, sin pagar dos veces. Dile al cliente que "
            "queda pendiente y que le avisaremos por aquí cuando se complete; no le digas que ya "
            "está hecho ni propongas otro reembolso por lo mismo"),
    )


# -- lo que lee el modelo ------------------------------------------------------------------------


class LineaReembolso(BaseModel):
    """Una línea del pedido que cubre un reembolso y, si hace falta, cuántas unidades."""

    linea: int = Field(
        ge=1,
        description="Número de línea del pedido: el campo `linea` de esa línea en `consultar_pedido`.",
    )
    unidades: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Cuántas unidades de esa línea devuelve el cliente, si no son todas (por ejemplo 1 "
            "de las 2 sartenes). No puede superar `unidades_libres` de la línea. Omítelo si no "
            "lo ha dicho."
        ),
    )


class ReembolsarArgs(BaseModel):
    """Argumentos de reembolsar."""

    pedido: str = Field(description=DESCRIPCION_PEDIDO)
    importe: Importe = Field(
        description=(
            "Importe a devolver en euros, número con punto decimal y como mucho dos decimales "
            "(por ejemplo 24.90). Debe ser mayor que cero y no superar el `reembolsable` que "
            "devuelve `consultar_pedido`: el del pedido si no indicas líneas, o la suma del de "
            "las líneas indicadas. Para un reembolso parcial, pon solo la parte acordada con el "
            "cliente; un reembolso parcial ocupa igualmente las unidades que cubre, que después "
            "ya no se pueden reembolsar ni cambiar."
        )
    )
    motivo: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Motivo del reembolso en una frase en español que resuma lo que dice el cliente, por "
            "ejemplo «la cafetera llegó con el depósito roto». Lo leen el encargado que aprueba "
            "y contabilidad."
        ),
    )
    lineas: list[int | LineaReembolso] | None = Field(
        default=None,
        description=(
            "Qué líneas del pedido devuelve el cliente: el número de cada línea (campo `linea` "
            "de `consultar_pedido`), por ejemplo [2], o {\"linea\": 2, \"unidades\": 1} si "
            "devuelve solo algunas unidades de esa línea. Indícalas siempre que el cliente diga "
            "qué producto devuelve. Si lo omites, el reembolso ocupa las unidades sin compensar "
            "del pedido por orden de línea y de unidad, cada una hasta su precio. Cada unidad se "
            "reembolsa o se cambia una sola vez, aunque el reembolso sea parcial."
        ),
    )


def crear_reembolsar(dependencias: Dependencias) -> BaseTool:
    pool = dependencias.pool
    pasarela = dependencias.pasarela

    @tool(REEMBOLSO.herramienta, args_schema=ReembolsarArgs)
    def reembolsar_herramienta(
        pedido: str,
        importe: Decimal,
        motivo: str,
        runtime: ToolRuntime,
        lineas: list[int | LineaReembolso] | None = None,
    ) -> str:
        """Devuelve dinero al cliente, a su medio de pago original, por unidades de un pedido suyo que no se hayan reembolsado ni cambiado antes. Mueve dinero de verdad.

        Úsala solo cuando el cliente haya pedido el reembolso y después de `consultar_pedido`: el importe no puede superar `reembolsable` (del pedido, o de las líneas que indiques en `lineas`). Indica en `lineas` qué productos devuelve cuando lo sepas. Cada unidad se compensa una sola vez: las unidades que cubre este reembolso, aunque sea parcial, ya no se podrán reembolsar ni cambiar. Según la política de la tienda puede quedar a la espera de la aprobación de un encargado; no la repitas ni la reformules mientras tanto. Devuelve JSON con el número de reembolso (RE-...), el pedido, el importe, las `unidades` que cubre por línea y el estado "emitido"; `repetido: true` quiere decir que esta misma operación ya estaba hecha y no se ha devuelto dinero dos veces. Si falla por importe no válido, el mensaje dice el máximo reembolsable. Si falla la pasarela de pagos, el reembolso no está emitido: queda pendiente y el sistema lo completará solo; dile al cliente que queda pendiente y que le avisaremos por aquí, nunca que ya está hecho, y no propongas otro reembolso por lo mismo.
        """
        return json_resultado(
            reembolsar(
                pool,
                contexto=contexto_de(runtime),
                pedido=pedido,
                importe=importe,
                motivo=motivo,
                lineas=lineas,
                pasarela=pasarela,
                **datos_de_ejecucion(runtime, dependencias),
            )
        )

    return sin_sangria(reembolsar_herramienta)


crear = crear_reembolsar
