"""Fechas y horas para una persona: en la hora de las tiendas y diciendo cuál es.

La base guarda ``timestamptz`` (UTC por dentro); lo que lee un cliente, un encargado o
un operador va en la zona de las tiendas (``ZONA_TIENDAS``, Europe/Madrid) con la zona
escrita, para que nadie confunda la hora de la CLI con la de la web.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

__all__ = ["ZONA_TIENDAS", "fecha", "fecha_hora"]

ZONA_TIENDAS = "Europe/Madrid"
_ZONA = ZoneInfo(ZONA_TIENDAS)


def fecha_hora(momento: datetime) -> str:
    """``"01/12/2026 10:30 (hora de Madrid)"``; un ``datetime`` sin zona se toma como UTC."""
    if momento.tzinfo is None:
        raise ValueError("fecha sin zona horaria: usa timestamptz / datetime con tzinfo")
    return momento.astimezone(_ZONA).strftime("%d/%m/%Y %H:%M") + " (hora de Madrid)"


def fecha(momento: datetime) -> str:
    """``"01/12/2026"`` en la zona de las tiendas."""
    if momento.tzinfo is None:
        raise ValueError("fecha sin zona horaria: usa timestamptz / datetime con tzinfo")
    return momento.astimezone(_ZONA).strftime("%d/%m/%Y")
