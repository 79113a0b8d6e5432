"""Regla «consulta»: una pregunta para el encargado siempre espera su respuesta."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from politicas.reglas.base import Dictamen, Regla

__all__ = ["CONSULTA", "MOTIVO_CONSULTA"]

MOTIVO_CONSULTA = "consulta dirigida al encargado"


def decidir(_hechos: Mapping[str, Any], _args: Mapping[str, Any]) -> Dictamen:
    return Dictamen(motivos=(MOTIVO_CONSULTA,))


CONSULTA = Regla(nombre="consulta", decidir=decidir)
