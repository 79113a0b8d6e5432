"""El horario de avisos de una tienda: cuándo está abierta y cuánto tiempo de horario pasa.

Funciones puras sobre instantes con zona (``datetime`` aware). Trampa: los días y horas
son los de la zona de la tienda (``Europe/Madrid``), no UTC; los cambios de hora se
resuelven con ``zoneinfo``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

__all__ = ["Horario", "en_horario", "minutos_en_horario", "siguiente_apertura"]

_DIAS_MAX = 8  # con al menos un día abierto, la siguiente apertura está a menos de 8 días


@dataclass(frozen=True, kw_only=True)
class Horario:
    """``dias``: ISO (1 = lunes ... 7 = domingo). Abre a ``abre`` y cierra a ``cierra`` (hora local)."""

    zona: str = "Europe/Madrid"
    abre: time = time(9, 0)
    cierra: time = time(21, 0)
    dias: frozenset[int] = frozenset({1, 2, 3, 4, 5, 6})

    def __post_init__(self) -> None:
        ZoneInfo(self.zona)  # ZoneInfoNotFoundError si la zona no existe
        if not self.abre < self.cierra:
            raise ValueError(f"el horario abre ({self.abre}) después de cerrar ({self.cierra})")
        object.__setattr__(self, "dias", frozenset(self.dias))
        if not self.dias or not self.dias <= set(range(1, 8)):
            raise ValueError(f"días de apertura no válidos: {sorted(self.dias)}")

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zona)

    def tramo(self, dia: date) -> tuple[datetime, datetime] | None:
        """Apertura y cierre de ese día (en UTC), o None si ese día cierra."""
        if dia.isoweekday() not in self.dias:
            return None
        desde = datetime.combine(dia, self.abre, tzinfo=self.tz).astimezone(UTC)
        hasta = datetime.combine(dia, self.cierra, tzinfo=self.tz).astimezone(UTC)
        return desde, hasta


def _aware(instante: datetime) -> datetime:
    if instante.tzinfo is None:
        raise ValueError("el instante necesita zona horaria")
    return instante


def en_horario(horario: Horario, instante: datetime) -> bool:
    local = _aware(instante).astimezone(horario.tz)
    tramo = horario.tramo(local.date())
    return tramo is not None and tramo[0] <= instante < tramo[1]


def siguiente_apertura(horario: Horario, instante: datetime) -> datetime:
    """``instante`` si la tienda está abierta; si no, la próxima apertura."""
    if en_horario(horario, instante):
        return instante
    dia = _aware(instante).astimezone(horario.tz).date()
    for n in range(_DIAS_MAX):
        tramo = horario.tramo(dia + timedelta(days=n))
        if tramo is not None and tramo[0] > instante:
            return tramo[0]
    raise AssertionError("un horario con días abiertos siempre vuelve a abrir")


def minutos_en_horario(horario: Horario, desde: datetime, hasta: datetime) -> float:
    """Minutos de horario de apertura entre ``desde`` y ``hasta`` (0 si ``hasta <= desde``)."""
    if _aware(hasta) <= _aware(desde):
        return 0.0
    total = timedelta()
    dia = desde.astimezone(horario.tz).date()
    ultimo = hasta.astimezone(horario.tz).date()
    while dia <= ultimo:
        tramo = horario.tramo(dia)
        if tramo is not None:
            inicio, fin = max(tramo[0], desde), min(tramo[1], hasta)
            if fin > inicio:
                total += fin - inicio
        dia += timedelta(days=1)
    return total.total_seconds() / 60
