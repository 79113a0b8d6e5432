"""Lo que la pasarela no completa, al libro: un fallo, o un movimiento en curso, fallido o caducado.

Un fallo que se puede reintentar (red, caída, límite de ritmo) suma un intento con espera
exponencial (``registrar_fallo``; la cola de movimientos lo repite).

Un proveedor real (Stripe) puede aceptar un reembolso y terminarlo más tarde, rechazarlo
para siempre o dejar caducar un enlace de pago. Aquí se apunta cada caso en el asiento
pendiente (``reembolsos`` o ``cobros``) y se lanza ``ErrorPasarela`` con ``estado`` en los
datos, para que quien llamó diga la verdad al cliente:

- ``en_curso``: sigue pendiente con el id del proveedor (y, un cobro, su enlace y su
  caducidad); la bandeja lo vuelve a mirar más tarde por si el webhook no llega.
- ``fallido`` (o un error ``definitivo``): sigue pendiente, marcado para una persona al
  momento (la auditoría lo enseña) y, si no lo vio el cliente en su turno, con aviso.
- ``caducado`` (cobro): el cobro queda ``caducado`` y su cambio ``anulado``: la unidad
  del pedido vuelve a estar libre. El stock nunca se movió (se mueve al cobrar).

Todo condicionado a ``estado = 'pendiente'``: repetirlo (un webhook duplicado, dos
servidores) no cambia nada.

**Fallo tardío** (``fallo_tardio``): el proveedor dio un movimiento por completado y
después avisa de que falló (un reembolso ``succeeded`` que pasa a ``failed``; un pago
por enlace confirmado que el banco rechaza). El asiento vuelve a ``pendiente`` (el dinero
no se movió), marcado para una persona, con aviso al cliente y ``fallo_tardio_en``; la
cola de movimientos ya no lo toca (lo decide una persona) y un «completado» posterior no lo
vuelve a dar por hecho. Condicionado a que siga completado y sea el mismo movimiento del
proveedor (``id_proveedor``): repetirlo no cambia nada.
"""

from __future__ import annotations

from datetime import datetime

from psycopg import sql
from psycopg_pool import ConnectionPool

from caja.pasarela import CADUCADO, COBRO, EN_CURSO, FALLIDO, MovimientoPasarela
from nucleo import dinero
from nucleo.errores import ErrorPasarela

__all__ = ["ESPERA_EN_CURSO_SEGUNDOS", "aplicar_no_completado", "aviso_enlace", "fallo_tardio",
           "marcar_fallido", "registrar_fallo", "texto_rechazo"]

# Sin webhook, la bandeja vuelve a preguntar al proveedor pasado este tiempo.
ESPERA_EN_CURSO_SEGUNDOS = 3600
ESPERA_FALLIDO_SEGUNDOS = 3600

TABLAS = {"reembolso": "reembolsos", "cobro": "cobros"}

REGISTRAR_FALLO_SQL = sql.SQL("""
UPDATE {tabla}
SET intentos = intentos + 1,
    proximo_intento = now() + make_interval(
        secs => least(%(base)s * power(2, intentos), %(maxima)s)),
    ultimo_error = %(error)s,
    requiere_persona = requiere_persona OR intentos + 1 >= %(max_intentos)s,
    marcado_en = CASE WHEN NOT requiere_persona AND intentos + 1 >= %(max_intentos)s
                      THEN now() ELSE marcado_en END
WHERE id = %(id)s AND estado = 'pendiente'
RETURNING intentos, requiere_persona, marcado_en = now() AS recien_marcado
""")

MARCAR_EN_CURSO_SQL = sql.SQL("""
UPDATE {tabla} SET id_proveedor = coalesce(%(id_proveedor)s, id_proveedor),
                   ultimo_error = %(detalle)s,
                   proximo_intento = now() + make_interval(secs => %(espera)s)
WHERE id = %(id)s AND estado = 'pendiente'
RETURNING id
""")

MARCAR_ENLACE_SQL = """
UPDATE cobros SET enlace_pago = coalesce(%(enlace)s, enlace_pago),
                  caduca_en = coalesce(%(caduca)s, caduca_en),
                  proximo_intento = least(proximo_intento,
                                          coalesce(%(caduca)s, proximo_intento) + interval '1 minute')
WHERE id = %(id)s AND estado = 'pendiente'
"""

MARCAR_FALLIDO_SQL = sql.SQL("""
UPDATE {tabla} SET id_proveedor = coalesce(%(id_proveedor)s, id_proveedor),
                   intentos = intentos + 1, ultimo_error = %(detalle)s,
                   requiere_persona = true, marcado_en = coalesce(marcado_en, now()),
                   proximo_intento = now() + make_interval(secs => %(espera)s),
                   avisar = avisar OR %(avisar)s
WHERE id = %(id)s AND estado = 'pendiente'
RETURNING intentos, marcado_en = now() AS recien_marcado
""")

CADUCAR_COBRO_SQL = """
WITH cobro AS (
    UPDATE cobros SET estado = 'caducado', id_proveedor = coalesce(%(id_proveedor)s, id_proveedor),
                      ultimo_error = %(detalle)s, avisar = true, confirmado_en = NULL
    WHERE id = %(id)s AND estado = 'pendiente'
    RETURNING sustitucion_id
),
libre AS (
    DELETE FROM compensaciones_unidad
    WHERE sustitucion_id IN (SELECT sustitucion_id FROM cobro)
      AND EXISTS (SELECT 1 FROM sustituciones s WHERE s.id = sustitucion_id
                  AND s.estado = 'pendiente_cobro')
)
UPDATE sustituciones SET estado = 'anulada', completada_en = now()
WHERE id IN (SELECT sustitucion_id FROM cobro) AND estado = 'pendiente_cobro'
RETURNING id
"""

FALLO_TARDIO_REEMBOLSO_SQL = """
UPDATE reembolsos SET estado = 'pendiente', emitido_en = NULL, fallo_tardio_en = now(),
                      id_proveedor = coalesce(id_proveedor, %(id_proveedor)s),
                      ultimo_error = %(detalle)s, requiere_persona = true, marcado_en = now(),
                      avisar = true, avisado_en = NULL
WHERE id = %(id)s AND estado = 'emitido' AND fallo_tardio_en IS NULL
  AND (id_proveedor IS NULL OR id_proveedor = %(id_proveedor)s)
RETURNING id
"""

FALLO_TARDIO_COBRO_SQL = """
UPDATE cobros SET estado = 'pendiente', confirmado_en = NULL, fallo_tardio_en = now(),
                  id_proveedor = coalesce(id_proveedor, %(id_proveedor)s),
                  ultimo_error = %(detalle)s, requiere_persona = true, marcado_en = now(),
                  avisar = true, avisado_en = NULL
WHERE id = %(id)s AND estado = 'confirmado' AND fallo_tardio_en IS NULL
  AND (id_proveedor IS NULL OR id_proveedor = %(id_proveedor)s)
RETURNING id
"""
FALLO_TARDIO_SQL = {"reembolso": FALLO_TARDIO_REEMBOLSO_SQL, "cobro": FALLO_TARDIO_COBRO_SQL}

BLOQUEAR_COBRO_SQL = """
SELECT p.id FROM cobros c JOIN pedidos p ON p.id = c.pedido_id JOIN sustituciones s
  ON s.id = c.sustitucion_id WHERE c.id = %(id)s FOR UPDATE OF p, s
"""


def registrar_fallo(pool: ConnectionPool, mov, motivo: str, *, max_intentos: int,
                    espera_base: float, espera_maxima: float) -> ErrorPasarela:
    """Un fallo que se puede reintentar: un intento más, espera exponencial y, al llegar a
    ``max_intentos``, marcado para una persona (se sigue reintentando). Da el error a lanzar."""
    with pool.connection() as conexion:
        fila = conexion.execute(REGISTRAR_FALLO_SQL.format(tabla=sql.Identifier(TABLAS[mov.tipo])), {
            "id": mov.id, "error": motivo, "base": espera_base, "maxima": espera_maxima,
            "max_intentos": max_intentos}).fetchone()
    return ErrorPasarela(
        motivo, referencia=mov.referencia, intentos=fila["intentos"] if fila else None,
        marcado=bool(fila and fila["requiere_persona"]),
        recien_marcado=bool(fila and fila["recien_marcado"]),
    )


def marcar_fallido(pool: ConnectionPool, mov, detalle: str, *, id_proveedor: str | None = None,
                   avisar: bool) -> ErrorPasarela:
    """Marca el asiento para una persona ya (repetir no servirá) y devuelve el error a lanzar."""
    with pool.connection() as conexion:
        fila = conexion.execute(MARCAR_FALLIDO_SQL.format(tabla=sql.Identifier(TABLAS[mov.tipo])), {
            "id": mov.id, "detalle": detalle, "id_proveedor": id_proveedor,
            "espera": ESPERA_FALLIDO_SEGUNDOS, "avisar": avisar}).fetchone()
    return ErrorPasarela(
        detalle, referencia=mov.referencia, estado=FALLIDO, definitivo=True,
        intentos=fila["intentos"] if fila else None, marcado=True,
        recien_marcado=bool(fila and fila["recien_marcado"]),
    )


def fallo_tardio(pool: ConnectionPool, mov, respuesta: MovimientoPasarela) -> bool:
    """Un movimiento completado que el proveedor da después por fallido: vuelve a pendiente,
    marcado para una persona y con aviso al cliente. False si ya estaba (o no es el mismo
    movimiento del proveedor)."""
    detalle = "el proveedor lo dio por hecho y después falló: " + (respuesta.detalle or respuesta.estado)
    with pool.connection() as conexion:
        fila = conexion.execute(FALLO_TARDIO_SQL[mov.tipo], {
            "id": mov.id, "detalle": detalle, "id_proveedor": respuesta.id_proveedor}).fetchone()
    return fila is not None


def aplicar_no_completado(pool: ConnectionPool, mov, respuesta: MovimientoPasarela, *,
                          avisar: bool) -> None:
    """Apunta la respuesta ``en_curso``, ``fallido`` o ``caducado`` y lanza ``ErrorPasarela``."""
    detalle = respuesta.detalle or respuesta.estado
    if respuesta.estado == FALLIDO:
        raise marcar_fallido(pool, mov, detalle, id_proveedor=respuesta.id_proveedor, avisar=avisar)
    if respuesta.estado == CADUCADO and mov.tipo == COBRO:
        with pool.connection() as conexion, conexion.transaction():
            conexion.execute(BLOQUEAR_COBRO_SQL, {"id": mov.id})
            conexion.execute(CADUCAR_COBRO_SQL, {
                "id": mov.id, "detalle": detalle, "id_proveedor": respuesta.id_proveedor})
        raise ErrorPasarela(detalle, referencia=mov.referencia, estado=CADUCADO)
    with pool.connection() as conexion, conexion.transaction():
        conexion.execute(MARCAR_EN_CURSO_SQL.format(tabla=sql.Identifier(TABLAS[mov.tipo])), {
            "id": mov.id, "detalle": detalle, "id_proveedor": respuesta.id_proveedor,
            "espera": ESPERA_EN_CURSO_SEGUNDOS})
        if mov.tipo == COBRO:
            conexion.execute(MARCAR_ENLACE_SQL, {
                "id": mov.id, "enlace": respuesta.enlace, "caduca": respuesta.caduca})
    raise ErrorPasarela(
        detalle, referencia=mov.referencia, estado=EN_CURSO, enlace=respuesta.enlace,
        caduca=_texto_hora(respuesta.caduca),
    )


def aviso_enlace(cambio: str, cobro, exc: ErrorPasarela) -> str:
    """Lo que la herramienta de cambios le dice al modelo de un cobro por enlace en curso."""
    caduca = exc.datos.get("caduca")
    return (
        f"el cambio {cambio} queda pendiente de que el cliente pague la diferencia de "
        f"{dinero.eur(cobro.importe)} ({cobro.referencia}). Dale este enlace de pago: "
        f"{exc.datos['enlace']} . El cambio se hace en cuanto se confirme el pago"
        + (f"; el enlace caduca el {caduca} (UTC) y, si no se paga, el cambio se anula" if caduca else "")
        + ". No le digas que el cambio está hecho"
    )


def texto_rechazo(mov, motivo: str) -> str:
    """Lo que el modelo debe decir de un reembolso que el proveedor rechazó para siempre."""
    return (
        f"el proveedor de pagos ha rechazado el reembolso {mov.referencia} de "
        f"{dinero.eur(mov.importe)} ({motivo}). No se ha devuelto el dinero y queda marcado para "
        "que una persona del equipo lo revise. Dile al cliente exactamente eso: que aún no tiene "
        "el dinero y que le escribiremos por aquí; no le digas que está hecho ni propongas otro "
        "reembolso por lo mismo"
    )


def _texto_hora(instante: datetime | None) -> str | None:
    return instante.isoformat(timespec="minutes") if instante else None
