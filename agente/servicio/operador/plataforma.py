"""La base, para la web y la CLI: lo que de ``agente.bd`` y ``agente.retencion`` necesitan
sin importarlos (el servicio es su única puerta, contrato ``solo-el-servicio`` de
``pyproject.toml``). El proceso (parada limpia, embebido) está en
``agente/servicio/operador/proceso.py``.

- la URL de la base (``url_basedatos``) y su comprobación (``comprobar_conexion``), los
  argumentos de una conexión suelta (``KWARGS_CONEXION``) y el nombre de las del servidor
  (``APLICACION_SERVIDOR``);
- qué errores son «la base está caída» (``ERRORES_BD_CAIDA``: 503, nunca un 500);
- las migraciones (``migrar``; ``rehacer``, solo el embebido) y la limpieza de checkpoints
  sin servicio (``limpiar_checkpoints``, ``agente limpiar``). Estas tres importan al
  llamarlas: traen LangGraph, y la CLI no lo carga para arrancar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agente.bd.pool import (
    APLICACION_SERVIDOR,
    ERRORES_BD_CAIDA,
    KWARGS_CONEXION,
    abrir_pool,
    comprobar_conexion,
)
from agente.bd.url import url_basedatos

if TYPE_CHECKING:
    from agente.retencion import InformeLimpieza

__all__ = [
    "APLICACION_SERVIDOR",
    "ERRORES_BD_CAIDA",
    "KWARGS_CONEXION",
    "comprobar_conexion",
    "limpiar_checkpoints",
    "migrar",
    "rehacer",
    "url_basedatos",
]


def migrar(url: str) -> list[str]:
    """Las migraciones pendientes de ``sql/`` (``agente.bd.migraciones.migrar``): las aplicadas."""
    from agente.bd.migraciones import migrar as aplicar

    return aplicar(url)


def rehacer(url: str) -> list[str]:
    """Borra todos los datos y vuelve a migrar (``agente.bd.migraciones.rehacer``)."""
    from agente.bd.migraciones import rehacer as borrar_y_migrar

    return borrar_y_migrar(url)


def limpiar_checkpoints(url: str, *, dias: int) -> InformeLimpieza:
    """La retención (``agente.retencion.limpiar``) con un pool propio y corto, sin servicio."""
    from agente.retencion import limpiar

    pool = abrir_pool(url, max_size=2)
    try:
        return limpiar(pool, dias=dias)
    finally:
        pool.close()
