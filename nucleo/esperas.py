"""La espera exponencial del producto, una sola vez, sobre tenacity.

Todos los reintentos en Python la usan: la entrega de avisos (cuándo toca el siguiente
intento de una fila de ``avisos_salida``), la reconexión del ``LISTEN`` de avisos y el sondeo
del candado de un hilo. La cola de movimientos (``caja/movimientos.py``) hace
la misma cuenta dentro de su ``UPDATE`` (``least(base * 2^intentos, máxima)``): el siguiente
intento se fija en la misma sentencia que apunta el fallo, y así debe seguir.
"""

from __future__ import annotations

from types import SimpleNamespace

from tenacity import wait_exponential

__all__ = ["espera_tras"]


def espera_tras(intentos: int, *, base: float, maximo: float) -> float:
    """Segundos hasta el siguiente intento tras ``intentos`` fallidos (1, 2, ...):
    ``base``, ``2·base``, ``4·base``... hasta ``maximo``. Con 0 o menos, ``base``."""
    if base < 0 or maximo < 0:
        raise ValueError("la espera base y la máxima no pueden ser negativas")
    espera = wait_exponential(multiplier=base, max=maximo, exp_base=2)
    # tenacity cuenta intentos desde 1: el primero espera multiplier * 2**0.
    return float(espera(SimpleNamespace(attempt_number=max(1, intentos))))
