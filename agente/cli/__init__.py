"""CLI ``agente``: la misma capa de servicio que usa la API HTTP, con salida en español.

Un módulo por grupo de órdenes (``bandeja``, ``conversacion``, ``db``, ``evaluar``,
``operacion``, ``politica``, ``servidor``), lo compartido en ``comun`` y la aplicación que
las reúne en ``principal``. El guion ``agente`` es ``agente.cli:app``.
"""

from agente.cli.principal import app, main

__all__ = ["app", "main"]
