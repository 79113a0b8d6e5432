"""El proceso, para la CLI: la parada limpia de los procesos largos (``parada_limpia``:
``agente serve``, ``agente demo``) y el PostgreSQL embebido (``embebido``: arrancar, parar,
estado; ``agente db start|stop|status``), sin importar ``agente.parada`` ni ``agente.bd``
(el servicio es su única puerta, contrato ``solo-el-servicio`` de ``pyproject.toml``).

Ligero a propósito: la CLI lo importa al cargar sus órdenes (``parada_limpia`` es un
decorador), así que solo trae lo que ya traía ``agente.parada``. La base (pool, URL,
migraciones) está en ``agente/servicio/operador/plataforma.py``.
"""

from __future__ import annotations

from agente.bd import embebido
from agente.parada import parada_limpia

__all__ = ["embebido", "parada_limpia"]
