"""Quien abrió un flujo SSE sigue teniendo acceso: se vuelve a comprobar mientras dura.

Un flujo SSE (la bandeja en vivo, los eventos de una conversación, la respuesta en
directo) se autoriza al abrirse, pero puede durar horas. Cada flujo vuelve a comprobar a
quien lo abrió con cada evento que va a enviar y, sin eventos, como mucho cada
``RECOMPROBAR_SEGUNDOS`` y justo cuando caduca su token. La comprobación en la base es
la misma que la de cada petición (``agente.web.entrada.auth``). Si ya no tiene acceso, el flujo
termina con un último evento ``fin`` ``{"motivo", "detalle"}``:

- ``caducado``: el token caducó (vuelve a iniciar sesión);
- ``baja``: el encargado está dado de baja (o ya no existe);
- ``sin_tienda``: ya no es de la tienda de su token, o ya no firma en una de las tiendas
  que veía el flujo (un regional al que le quitan una tienda);
- ``sin_acceso``: el cliente ya no existe, o la conversación ya no es suya.

Una baja despierta a las bandejas abiertas al momento (la migración 014 avisa por
``mensajes_hilo``); la relectura periódica cubre lo demás.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool

__all__ = ["RECOMPROBAR_SEGUNDOS", "Fin", "Vigencia"]

# Como mucho entre dos comprobaciones de un flujo sin eventos (el límite pedido es 30 s).
RECOMPROBAR_SEGUNDOS = 15.0

CADUCADO = "caducado"
DETALLE_CADUCADO = "el token ha caducado: vuelve a iniciar sesión"


@dataclass(frozen=True)
class Fin:
    """Por qué se cierra un flujo: ``motivo`` (código estable) y ``detalle`` (en español)."""

    motivo: str
    detalle: str

    def evento(self) -> dict[str, str]:
        return {"event": "fin",
                "data": json.dumps({"motivo": self.motivo, "detalle": self.detalle}, ensure_ascii=False)}


class Vigencia:
    """Hasta cuándo vale el token de un flujo y cómo volver a comprobar a su dueño.

    ``comprobar_en_bd`` es síncrona (va a la base): devuelve ``None`` si sigue teniendo
    acceso, o el ``Fin``. Puede lanzar los errores de base caída (los trata cada flujo).
    """

    def __init__(self, caduca: datetime, comprobar_en_bd: Callable[[], Fin | None]) -> None:
        self.caduca = caduca
        self._comprobar_en_bd = comprobar_en_bd
        self._ultima = time.monotonic()  # al abrir se acaba de comprobar

    def restante(self) -> float:
        """Segundos hasta que caduca el token (0 si ya caducó)."""
        return max(0.0, (self.caduca - datetime.now(UTC)).total_seconds())

    def espera(self, maximo: float | None = None) -> float:
        """Cuánto puede esperar el flujo sin eventos antes de volver a comprobar."""
        tope = RECOMPROBAR_SEGUNDOS if maximo is None else min(maximo, RECOMPROBAR_SEGUNDOS)
        return min(tope, self.restante())

    def caducada(self) -> Fin | None:
        """Solo el reloj (sin base): si el token ya caducó."""
        return Fin(CADUCADO, DETALLE_CADUCADO) if self.restante() <= 0 else None

    def comprobar(self) -> Fin | None:
        """El reloj y la base (síncrona: desde el pool de hilos)."""
        fin = self.caducada() or self._comprobar_en_bd()
        self._ultima = time.monotonic()
        return fin

    async def comprobar_si_toca(self) -> Fin | None:
        """El reloj siempre; la base, si hace ``RECOMPROBAR_SEGUNDOS`` de la última vez
        (para flujos con muchos eventos seguidos, como los tokens de una respuesta)."""
        fin = self.caducada()
        if fin is None and time.monotonic() - self._ultima >= RECOMPROBAR_SEGUNDOS:
            fin = await run_in_threadpool(self.comprobar)
        return fin
