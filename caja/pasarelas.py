"""La pasarela que piden los ajustes: la simulada (por defecto) o la de Stripe."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

from caja.pasarela import Pasarela, PasarelaSimulada
from caja.pasarela_stripe import PasarelaStripe
from nucleo.ajustes import Ajustes

__all__ = ["pasarela_desde_ajustes"]


def pasarela_desde_ajustes(pool: ConnectionPool, ajustes: Ajustes) -> Pasarela:
    """``AGENTE_PASARELA``: ``simulada`` (demo y pruebas) o ``stripe`` (docs/pasarelas.md)."""
    if ajustes.pasarela == "stripe":
        return PasarelaStripe.desde_ajustes(pool, ajustes)
    return PasarelaSimulada(pool=pool, retardo=ajustes.pasarela_retardo, falla=ajustes.pasarela_fallo)
