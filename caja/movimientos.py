"""La cola de movimientos (outbox) de la pasarela: reembolsos y cobros, exactamente una vez.

Orden de todo movimiento: 1) una transacción apunta el asiento 'pendiente' (reembolso o
cobro) y lo que lo justifica; COMMIT. 2) Se llama a la pasarela con el número del
asiento como referencia (la pasarela deduplica por referencia). 3) Se marca completado
('emitido' o 'confirmado'); un cobro confirmado completa además su cambio (mueve el
stock) en la misma transacción. Si el proceso muere entre 1 y 3, ``completar_pendientes``
repite 2 y 3 sin mover dinero dos veces.

Reintentos (``estados_proveedor``): cada fallo suma un intento y aplaza el siguiente con espera exponencial
(``espera_base * 2**(intentos-1)``, hasta ``espera_maxima``); al llegar a
``max_intentos`` el asiento queda marcado ``requiere_persona`` (la auditoría lo
enseña) y se sigue reintentando con la espera máxima. Un asiento recién apuntado, o
reservado por una pasada, no vence hasta pasados ``RESERVA_SEGUNDOS``: la llamada en
curso tiene preferencia y dos servidores no se pisan (si se pisan, la pasarela deduplica).

Un asiento con fallo tardío (``fallo_tardio_en``: el proveedor lo dio por hecho y luego
falló; ``estados_proveedor.fallo_tardio``) espera a una persona: la bandeja no lo reserva
y nada lo vuelve a marcar completado.

Lo que completa el sistema (no la herramienta en el turno del cliente) queda con
``avisar``: ``herramientas.avisos`` da el hilo y el texto para el cliente.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

import psycopg
from psycopg_pool import ConnectionPool

from caja import estados_proveedor, libro
from caja.pasarela import CADUCADO, COBRO, COMPLETADO, EN_CURSO, REEMBOLSO, Pasarela
from nucleo.errores import AprobacionCaducada, ErrorPasarela

__all__ = [
    "Confirmacion", "Movimiento", "ResultadoPendientes", "aplicar", "apuntar_cobro",
    "apuntar_reembolso_de_sustitucion", "completar_pendientes", "ejecutar", "emitir_reembolso",
    "movimiento",
]

logger = logging.getLogger(__name__)

RESERVA_SEGUNDOS = 120
MAX_INTENTOS = 5
ESPERA_BASE_SEGUNDOS = 30.0
ESPERA_MAXIMA_SEGUNDOS = 3600.0
TABLAS = {REEMBOLSO: "reembolsos", COBRO: "cobros"}

SELECT_MOVIMIENTO_SQL = """
SELECT tipo, id, referencia, importe, estado, completado, concepto, sustitucion_id,
       thread_id, pedido_id, intentos, requiere_persona
FROM libro_movimientos WHERE tipo = %(tipo)s AND id = %(id)s
"""

# Reserva los vencidos (SKIP LOCKED: otra pasada a la vez se salta los mismos) empujando
# su próximo intento; si esta pasada muere, vuelven a vencer al acabar la reserva.
RESERVAR_VENCIDOS_SQL = """
WITH r AS (
    UPDATE reembolsos SET proximo_intento = now() + make_interval(secs => %(reserva)s)
    WHERE id IN (SELECT id FROM reembolsos
                 WHERE estado = 'pendiente' AND fallo_tardio_en IS NULL
                   AND (proximo_intento <= now() OR NOT %(solo_vencidos)s)
                 ORDER BY proximo_intento LIMIT %(limite)s FOR UPDATE SKIP LOCKED)
    RETURNING 'reembolso'::text AS tipo, id
),
c AS (
    UPDATE cobros SET proximo_intento = now() + make_interval(secs => %(reserva)s)
    WHERE id IN (SELECT id FROM cobros
                 WHERE estado = 'pendiente' AND fallo_tardio_en IS NULL
                   AND (proximo_intento <= now() OR NOT %(solo_vencidos)s)
                 ORDER BY proximo_intento LIMIT %(limite)s FOR UPDATE SKIP LOCKED)
    RETURNING 'cobro'::text AS tipo, id
)
SELECT tipo, id, referencia, importe, estado, completado, concepto, sustitucion_id,
       thread_id, pedido_id, intentos, requiere_persona
FROM libro_movimientos
WHERE (tipo, id) IN (SELECT tipo, id FROM r UNION ALL SELECT tipo, id FROM c)
ORDER BY creado, tipo, id
"""

MARCAR_EMITIDO_SQL = """
UPDATE reembolsos SET estado = 'emitido', emitido_en = now(), ultimo_error = NULL, avisar = %(avisar)s,
                      avisado_en = NULL, id_proveedor = coalesce(%(id_proveedor)s, id_proveedor)
WHERE id = %(id)s AND estado = 'pendiente' AND fallo_tardio_en IS NULL
RETURNING id
"""

CONFIRMAR_COBRO_SQL = """
UPDATE cobros SET estado = 'confirmado', confirmado_en = now(), ultimo_error = NULL,
                  avisar = %(avisar)s, avisado_en = NULL
WHERE id = %(id)s AND estado = 'pendiente' AND fallo_tardio_en IS NULL
RETURNING id
"""

BLOQUEAR_SUSTITUCION_SQL = """
SELECT s.id, s.numero, s.estado, s.pedido_id, s.tienda, s.sku_original, s.sku_nuevo,
       s.clave_idempotencia, s.thread_id, s.tool_call_id, s.cliente_id, s.trace_id
FROM pedidos p JOIN sustituciones s ON s.pedido_id = p.id
WHERE s.id = %(id)s
FOR UPDATE OF p, s
"""

COMPLETAR_SUSTITUCION_SQL = """
UPDATE sustituciones SET estado = 'hecha', completada_en = now() WHERE id = %(id)s
"""

# Sin stock al confirmar el cobro: el cambio se anula y su unidad vuelve a estar libre.
ANULAR_SUSTITUCION_SQL = """
WITH libre AS (DELETE FROM compensaciones_unidad WHERE sustitucion_id = %(id)s)
UPDATE sustituciones SET estado = 'anulada', completada_en = now() WHERE id = %(id)s
"""

INSERT_REEMBOLSO_VINCULADO_SQL = """
INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                        tienda, importe, motivo, concepto, sustitucion_id, trace_id,
                        proximo_intento)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido_id)s, %(cliente_id)s,
        %(tienda)s, %(importe)s, %(motivo)s, %(concepto)s, %(sustitucion_id)s, %(trace_id)s,
        now() + make_interval(secs => %(reserva)s))
ON CONFLICT (clave_idempotencia) DO NOTHING
RETURNING id
"""

SELECT_ID_REEMBOLSO_SQL = "SELECT id FROM reembolsos WHERE clave_idempotencia = %(clave)s"

INSERT_COBRO_SQL = """
INSERT INTO cobros (clave_idempotencia, sustitucion_id, thread_id, tool_call_id, pedido_id,
                    cliente_id, tienda, importe, trace_id, proximo_intento)
VALUES (%(clave)s, %(sustitucion_id)s, %(thread_id)s, %(tool_call_id)s, %(pedido_id)s,
        %(cliente_id)s, %(tienda)s, %(importe)s, %(trace_id)s,
        now() + make_interval(secs => %(reserva)s))
RETURNING id
"""

@dataclass(frozen=True)
class Movimiento:
    """Un asiento del libro que mueve dinero por la pasarela (fila de ``libro_movimientos``)."""

    tipo: str  # 'reembolso' | 'cobro'
    id: int
    referencia: str
    importe: Decimal
    estado: str
    completado: bool
    concepto: str  # 'devolucion' | 'diferencia' | 'anulacion'
    sustitucion_id: int | None
    thread_id: str
    pedido_id: str
    intentos: int = 0
    requiere_persona: bool = False

    @classmethod
    def de_fila(cls, fila: dict) -> Movimiento:
        return cls(**{k: fila[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Confirmacion:
    """Lo que dejó completar un movimiento: para un cobro, cómo quedó su cambio y, si se
    anuló por falta de stock, el reembolso que devuelve el cobro (ya apuntado)."""

    movimiento: Movimiento
    estado_sustitucion: str | None = None
    anulacion: Movimiento | None = None
    ahora: bool = True  # False: ya lo había completado otra llamada (no se movió nada más)


@dataclass(frozen=True)
class Fallo:
    movimiento: Movimiento
    error: str
    intentos: int
    marcado: bool


@dataclass
class ResultadoPendientes:
    completados: list[Confirmacion] = field(default_factory=list)
    fallidos: list[Fallo] = field(default_factory=list)
    marcados: list[Fallo] = field(default_factory=list)  # marcados para una persona en esta pasada
    en_curso: list[str] = field(default_factory=list)  # el proveedor aún no los termina
    caducados: list[str] = field(default_factory=list)  # cobros por enlace sin pagar a tiempo


def movimiento(conexion: psycopg.Connection, tipo: str, id_: int) -> Movimiento:
    return Movimiento.de_fila(
        conexion.execute(SELECT_MOVIMIENTO_SQL, {"tipo": tipo, "id": id_}).fetchone()
    )


def _del_cambio(sustitucion: dict) -> dict:
    """Lo que un movimiento hereda del cambio que lo origina: hilo, llamada, pedido, cliente..."""
    return {
        "sustitucion_id": sustitucion["id"],
        "thread_id": sustitucion["thread_id"],
        "tool_call_id": sustitucion["tool_call_id"],
        "pedido_id": sustitucion["pedido_id"],
        "cliente_id": sustitucion["cliente_id"],
        "tienda": sustitucion["tienda"],
        "trace_id": sustitucion.get("trace_id"),
        "reserva": RESERVA_SEGUNDOS,
    }


def apuntar_reembolso_de_sustitucion(
    conexion: psycopg.Connection, *, sustitucion: dict, concepto: str, importe: Decimal, motivo: str
) -> Movimiento:
    """Paso 1 de un reembolso ligado a un cambio (``diferencia`` o ``anulacion``).

    Clave de idempotencia ``<clave del cambio>:<concepto>``: uno por cambio y concepto.
    """
    clave = f"{sustitucion['clave_idempotencia']}:{concepto}"
    fila = conexion.execute(
        INSERT_REEMBOLSO_VINCULADO_SQL,
        {**_del_cambio(sustitucion), "clave": clave, "importe": importe, "motivo": motivo,
         "concepto": concepto},
    ).fetchone()
    if fila is None:
        fila = conexion.execute(SELECT_ID_REEMBOLSO_SQL, {"clave": clave}).fetchone()
    return movimiento(conexion, REEMBOLSO, fila["id"])


def apuntar_cobro(conexion: psycopg.Connection, *, sustitucion: dict, importe: Decimal) -> Movimiento:
    """Paso 1 del cobro de la diferencia de un cambio (clave ``<clave del cambio>:diferencia``)."""
    fila = conexion.execute(
        INSERT_COBRO_SQL,
        {**_del_cambio(sustitucion), "clave": f"{sustitucion['clave_idempotencia']}:diferencia",
         "importe": importe},
    ).fetchone()
    return movimiento(conexion, COBRO, fila["id"])


def ejecutar(
    pool: ConnectionPool,
    pasarela: Pasarela,
    mov: Movimiento,
    *,
    por_sistema: bool = False,
    max_intentos: int = MAX_INTENTOS,
    espera_base: float = ESPERA_BASE_SEGUNDOS,
    espera_maxima: float = ESPERA_MAXIMA_SEGUNDOS,
) -> Confirmacion:
    """Pasos 2 y 3 de un movimiento pendiente. Seguro de repetir y de hacer a la vez.

    Si la pasarela falla se apunta el intento y se lanza ``ErrorPasarela`` (con
    ``intentos`` y ``marcado`` en ``datos``); el asiento sigue pendiente.
    ``por_sistema``: lo completa la bandeja, no el turno del cliente (hay que avisarle).
    """
    operacion = pasarela.cobrar if mov.tipo == COBRO else pasarela.emitir_reembolso
    try:
        respuesta = operacion(mov.referencia, mov.importe)
        if respuesta.importe != mov.importe:
            raise ErrorPasarela(f"la pasarela devolvió otro importe para {mov.referencia}")
    except Exception as exc:
        if not isinstance(exc, ErrorPasarela):
            logger.exception("fallo inesperado de la pasarela con %s", mov.referencia)
        motivo = exc.mensaje if isinstance(exc, ErrorPasarela) else type(exc).__name__
        if isinstance(exc, ErrorPasarela) and exc.datos.get("definitivo"):
            raise estados_proveedor.marcar_fallido(pool, mov, motivo, avisar=por_sistema) from exc
        raise estados_proveedor.registrar_fallo(
            pool, mov, motivo, max_intentos=max_intentos, espera_base=espera_base,
            espera_maxima=espera_maxima) from exc
    return aplicar(pool, mov, respuesta, por_sistema=por_sistema)


def aplicar(pool: ConnectionPool, mov: Movimiento, respuesta, *, por_sistema: bool = True) -> Confirmacion:
    """Paso 3: lo que respondió la pasarela (o trajo un webhook), al libro. Si no está
    completado, ``estados_proveedor`` lo apunta y lanza ``ErrorPasarela`` con ``estado``."""
    if getattr(respuesta, "estado", COMPLETADO) != COMPLETADO:
        estados_proveedor.aplicar_no_completado(pool, mov, respuesta, avisar=por_sistema)
    if mov.tipo == REEMBOLSO:
        with pool.connection() as conexion:
            hecho = conexion.execute(MARCAR_EMITIDO_SQL, {
                "id": mov.id, "avisar": por_sistema, "id_proveedor": getattr(respuesta, "id_proveedor", None)}).fetchone()
            return Confirmacion(movimiento(conexion, REEMBOLSO, mov.id), ahora=hecho is not None)
    return _confirmar_cobro(pool, mov, avisar=por_sistema)  # su id ya se apuntó con el enlace


def emitir_reembolso(
    pool: ConnectionPool, pasarela: Pasarela, reembolso_id: int, *,
    texto_si_falla: Callable[[str], str], **datos: object,
) -> None:
    """Pasos 2 y 3 de un reembolso recién apuntado, en el turno del cliente.

    Si la pasarela falla, ``ErrorPasarela`` con ``texto_si_falla(motivo)`` (lo que el modelo
    debe decir: queda pendiente, nunca «hecho») y ``datos``; el asiento sigue pendiente y
    la cola de movimientos lo completa sin pagar dos veces.
    """
    with pool.connection() as conexion:
        mov = movimiento(conexion, REEMBOLSO, reembolso_id)
    try:
        ejecutar(pool, pasarela, mov)
    except ErrorPasarela as exc:
        if exc.datos.get("definitivo"):  # el proveedor lo rechazó: repetir no servirá
            raise ErrorPasarela(estados_proveedor.texto_rechazo(mov, exc.mensaje), **datos, marcado=True) from exc
        raise ErrorPasarela(texto_si_falla(exc.mensaje), **datos) from exc


def _confirmar_cobro(pool: ConnectionPool, mov: Movimiento, *, avisar: bool) -> Confirmacion:
    """Cobro confirmado y cambio completado en una transacción: o todo o nada.

    Un cobro que no es de un cambio (``sustitucion_id`` nulo: lo apuntó otra operación, que
    ya hizo su efecto al apuntarlo, p. ej. ``operaciones/modificar_articulos/``) solo se confirma.
    """
    if mov.sustitucion_id is None:
        with pool.connection() as conexion:
            confirmado = conexion.execute(CONFIRMAR_COBRO_SQL, {"id": mov.id, "avisar": avisar}).fetchone()
            return Confirmacion(movimiento(conexion, COBRO, mov.id), ahora=confirmado is not None)
    with pool.connection() as conexion, conexion.transaction():
        sustitucion = conexion.execute(BLOQUEAR_SUSTITUCION_SQL, {"id": mov.sustitucion_id}).fetchone()
        confirmado = conexion.execute(CONFIRMAR_COBRO_SQL, {"id": mov.id, "avisar": avisar}).fetchone()
        anulacion = None
        if confirmado is not None and sustitucion["estado"] == "pendiente_cobro":
            try:
                with conexion.transaction():
                    libro.mover_stock(
                        conexion,
                        tienda=sustitucion["tienda"],
                        sku_original=sustitucion["sku_original"],
                        sku_nuevo=sustitucion["sku_nuevo"],
                    )
                conexion.execute(COMPLETAR_SUSTITUCION_SQL, {"id": sustitucion["id"]})
                estado = "hecha"
            except AprobacionCaducada:
                conexion.execute(ANULAR_SUSTITUCION_SQL, {"id": sustitucion["id"]})
                anulacion = apuntar_reembolso_de_sustitucion(
                    conexion,
                    sustitucion=sustitucion,
                    concepto="anulacion",
                    importe=mov.importe,
                    motivo=f"devolución del cobro {mov.referencia}: sin stock de "
                    f"{sustitucion['sku_nuevo']} al completar el cambio {sustitucion['numero']}",
                )
                estado = "anulada"
        else:
            estado = sustitucion["estado"]
        return Confirmacion(
            movimiento(conexion, COBRO, mov.id), estado, anulacion, ahora=confirmado is not None
        )


def completar_pendientes(
    pool: ConnectionPool,
    pasarela: Pasarela,
    *,
    max_intentos: int = MAX_INTENTOS,
    limite: int = 100,
    solo_vencidos: bool = True,
    espera_base: float = ESPERA_BASE_SEGUNDOS,
    espera_maxima: float = ESPERA_MAXIMA_SEGUNDOS,
) -> ResultadoPendientes:
    """Una pasada de la bandeja: completa los reembolsos y cobros pendientes que vencen.

    ``solo_vencidos=False`` (una orden de un operador, las pruebas) no espera a la
    próxima hora de intento. Seguro a la vez que las herramientas y que otros servidores.
    Lo completado aquí queda para avisar al cliente (``avisos_pendientes``).
    """
    with pool.connection() as conexion:
        filas = conexion.execute(
            RESERVAR_VENCIDOS_SQL,
            {"reserva": RESERVA_SEGUNDOS, "limite": limite, "solo_vencidos": solo_vencidos},
        ).fetchall()
    resultado = ResultadoPendientes()
    cola = [Movimiento.de_fila(f) for f in filas]
    while cola:
        mov = cola.pop(0)
        try:
            hecho = ejecutar(
                pool, pasarela, mov, por_sistema=True, max_intentos=max_intentos,
                espera_base=espera_base, espera_maxima=espera_maxima,
            )
        except ErrorPasarela as exc:
            if exc.datos.get("estado") in (EN_CURSO, CADUCADO):  # no es un fallo: sigue su curso
                (resultado.en_curso if exc.datos["estado"] == EN_CURSO else resultado.caducados).append(mov.referencia)
                continue
            fallo = Fallo(mov, exc.mensaje, exc.datos.get("intentos") or 0, exc.datos.get("marcado", False))
            resultado.fallidos.append(fallo)
            if exc.datos.get("recien_marcado"):
                resultado.marcados.append(fallo)
            logger.warning("%s sigue pendiente: %s", mov.referencia, exc.mensaje)
            continue
        if hecho.ahora:
            resultado.completados.append(hecho)
        if hecho.anulacion is not None:
            cola.append(hecho.anulacion)
    return resultado
