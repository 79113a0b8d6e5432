"""La base y el proceso, para la web y la CLI: lo que de ``agente.bd``, ``agente.parada`` y
``agente.retencion`` necesitan sin importarlos (el servicio es su única puerta, contrato
``solo-el-servicio`` de ``pyproject.toml``).

- la URL de la base (``url_basedatos``) y su comprobación (``comprobar_conexion``), los
  argumentos de una conexión suelta (``KWARGS_CONEXION``) y el nombre de las del servidor
  (``APLICACION_SERVIDOR``);
- las migraciones (``migrar``; ``rehacer``, solo el embebido) y el PostgreSQL embebido
  (``embebido``: arrancar, parar, estado);
- qué errores son «la base está caída» (``ERRORES_BD_CAIDA``: 503, nunca un 500);
- la parada limpia de los procesos largos (``parada_limpia``) y la limpieza de checkpoints
  sin servicio (``limpiar_checkpoints``, ``agente limpiar``).
"""

from __future__ import annotations

from agente.bd import embebido
from agente.bd.migraciones import migrar, rehacer
from agente.bd.pool import (
    APLICACION_SERVIDOR,
    ERRORES_BD_CAIDA,
    KWARGS_CONEXION,
    abrir_pool,
    comprobar_conexion,
)
from agente.bd.url import url_basedatos
from agente.parada import parada_limpia
from agente.retencion import InformeLimpieza, limpiar

__all__ = [
    "APLICACION_SERVIDOR",
    "ERRORES_BD_CAIDA",
    "KWARGS_CONEXION",
    "comprobar_conexion",
    "embebido",
    "limpiar_checkpoints",
    "migrar",
    "parada_limpia",
    "rehacer",
    "url_basedatos",
]


def limpiar_checkpoints(url: str, *, dias: int) -> InformeLimpieza:
    """La retención (``agente.retencion.limpiar``) con un pool propio y corto, sin servicio."""
    pool = abrir_pool(url, max_size=2)
    try:
        return limpiar(pool, dias=dias)
    finally:
        pool.close()
