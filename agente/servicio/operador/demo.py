"""La demo, para la web y la CLI: lo que de ``agente.demo`` necesitan sin importarlo (el
servicio es su única puerta, contrato ``solo-el-servicio`` de ``pyproject.toml``).

- el catálogo de la demo: sus clientes, encargados, roles y tiendas (el login de
  ``/demo`` y el cartel de ``agente demo``);
- el buzón de la demo (``leer_buzon``: ``/demo/correo``);
- sus piezas (``piezas_demo``: buzón, proveedor OpenID Connect, pasarela; ``PASARELAS_DEMO``);
- la carga en una base vacía y el reinicio (``una_vez``: ``agente db demo``). La carga al
  arrancar ``agente demo`` es ``agente/servicio/operador/arranque.py``.
"""

from __future__ import annotations

from agente.demo import una_vez
from agente.demo.buzon import leer_buzon
from agente.demo.catalogo import CLIENTES, ENCARGADOS, ROLES, TIENDAS, TIENDAS_REGIONALES
from agente.demo.piezas import PASARELAS_DEMO, piezas_demo

__all__ = [
    "CLIENTES",
    "ENCARGADOS",
    "PASARELAS_DEMO",
    "ROLES",
    "TIENDAS",
    "TIENDAS_REGIONALES",
    "leer_buzon",
    "piezas_demo",
    "una_vez",
]
