"""El pool de conexiones: uno por proceso para negocio, cola y checkpointer.

El checkpointer exige ``autocommit=True``, ``prepare_threshold=0`` y
``row_factory=dict_row``; el código de negocio abre sus transacciones con
``conexion.transaction()``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.datetime import TimestamptzBinaryLoader, TimestamptzLoader
from psycopg_pool import ConnectionPool, PoolTimeout
from tenacity import retry, retry_if_exception_type, stop_after_delay, wait_fixed

from nucleo.errores import ErrorConfiguracion

__all__ = ["APLICACION_SERVIDOR", "ERRORES_BD_CAIDA", "FECHA_MAXIMA", "FECHA_MINIMA", "KWARGS_CONEXION", "abrir_pool", "borrar_base", "comprobar_conexion"]

KWARGS_CONEXION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
# El application_name de las conexiones de un servidor web (``agente serve``/``agente demo``
# lo ponen en PGAPPNAME): así «agente db demo» sabe, por pg_stat_activity, que un servidor
# usa la base, sea el PostgreSQL embebido u otro.
APLICACION_SERVIDOR = "agente-servidor"
# Con la base caída: cada intento de conexión se rinde pronto y, tras RECONEXION_SEGUNDOS de
# reintentos con espera creciente, el pool vuelve a probar a la primera petición siguiente.
# Así se recupera a los pocos segundos de volver la base, sin reiniciar (el valor de serie
# de psycopg_pool, 300 s con esperas que se duplican, podía tardar minutos).
CONEXION_SEGUNDOS = 5
RECONEXION_SEGUNDOS = 10.0
# Lo que significa «la base no responde» (PoolTimeout y PoolClosed son OperationalError):
# la web lo traduce a 503 sin importar psycopg.
ERRORES_BD_CAIDA: tuple[type[Exception], ...] = (psycopg.OperationalError,)

# Una fecha fuera de lo que cabe en ``datetime`` (año > 9999 o antes de Cristo) hace fallar
# la lectura de TODA la fila, y con ella la bandeja entera de una tienda ("timestamp too
# large"). Se lee como el extremo que le toca: la fila se ve (y quien la enseña la marca
# como fuera de rango) y la auditoría la encuentra. Vale para todas las conexiones del
# proceso (se registra al importar este módulo, antes de abrir ninguna).
FECHA_MAXIMA = datetime.max.replace(tzinfo=UTC)
FECHA_MINIMA = datetime.min.replace(tzinfo=UTC)


class _FechaSinDesbordar:
    def load(self, data):  # noqa: ANN001 - la firma es la del loader de psycopg
        try:
            return super().load(data)  # type: ignore[misc]
        except psycopg.DataError as exc:
            return FECHA_MINIMA if "BC" in str(exc) or "before" in str(exc) else FECHA_MAXIMA


class _Timestamptz(_FechaSinDesbordar, TimestamptzLoader):
    pass


class _TimestamptzBinario(_FechaSinDesbordar, TimestamptzBinaryLoader):
    pass


psycopg.adapters.register_loader("timestamptz", _Timestamptz)
psycopg.adapters.register_loader("timestamptz", _TimestamptzBinario)


def comprobar_conexion(url: str, *, ajuste: str = "DATABASE_URL") -> None:
    try:
        with psycopg.connect(url, connect_timeout=5) as conexion:
            conexion.execute("SELECT 1")
    except psycopg.Error as exc:
        motivo = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ErrorConfiguracion(
            f"{ajuste}: no se puede conectar con la base de datos ({motivo})", ajuste=ajuste
        ) from exc


def abrir_pool(
    url: str, *, max_size: int = 10, min_size: int = 1, espera: float = 30.0
) -> ConnectionPool:
    """El pool del proceso. ``espera``: lo que aguarda ``pool.connection()`` una conexión
    libre antes de lanzar ``PoolTimeout`` (la web lo convierte en 503)."""
    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={**KWARGS_CONEXION, "connect_timeout": CONEXION_SEGUNDOS},
        timeout=espera,
        reconnect_timeout=RECONEXION_SEGUNDOS,
        open=False,
        name="agente",
    )
    try:
        pool.open(wait=True, timeout=10)
    except PoolTimeout as exc:
        pool.close()
        comprobar_conexion(url)
        raise ErrorConfiguracion(
            "DATABASE_URL: la base de datos no responde", ajuste="DATABASE_URL"
        ) from exc
    return pool


BORRAR_BASE_SQL = "DROP DATABASE IF EXISTS {} WITH (FORCE)"


@retry(retry=retry_if_exception_type(psycopg.errors.InsufficientPrivilege), stop=stop_after_delay(30),
       wait=wait_fixed(0.2), reraise=True)
def borrar_base(url_admin: str, nombre: str) -> None:
    """Borra la base ``nombre`` (pruebas, bench, ``agente evaluar``) echando a quien siga dentro.

    Trampa: sin superusuario (PostgreSQL 15-17), ``FORCE`` no puede terminar un proceso de
    autovacuum que esté en esa base («must be a member of the role whose process is being
    terminated or member of pg_signal_backend»). Ese proceso acaba solo enseguida: se
    reintenta durante unos segundos en vez de pedir más privilegios.
    """
    with psycopg.connect(url_admin, autocommit=True) as conexion:
        conexion.execute(sql.SQL(BORRAR_BASE_SQL).format(sql.Identifier(nombre)))
