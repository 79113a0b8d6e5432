"""Las reglas de los CSV que lee una persona o un programa (Historial y Movimientos).

Formato «hoja» (por defecto): para abrirlo con doble clic en una hoja de cálculo en español
(Excel, LibreOffice): «;» entre columnas, UTF-8 con BOM (sin él Excel lo lee como
Windows-1252), coma decimal sin miles ni «EUR», la hora de la tienda («2026-12-02 18:51:07»,
que una hoja reconoce como fecha en cualquier idioma) con su zona en otra columna.

Formato «maquina»: para programas, con «,», importes con punto («90.00») y fechas ISO 8601.

En los dos, lo que una hoja de cálculo tomaría por fórmula va con «'» delante.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from nucleo.fechas import ZONA_TIENDAS

__all__ = ["FORMATOS", "celda", "coma", "escribir", "hora_tienda"]

FORMATOS = ("hoja", "maquina")


def celda(valor: Any) -> str:
    """Texto de una celda; lo que una hoja de cálculo tomaría por fórmula va con «'»."""
    texto = "" if valor is None else (valor.isoformat() if isinstance(valor, datetime) else str(valor))
    return "'" + texto if texto[:1] in ("=", "+", "-", "@", "\t", "\r") else texto


def hora_tienda(momento: datetime) -> tuple[str, str]:
    """(«2026-12-02 18:51:07», «Europe/Madrid (UTC+01:00)»): fecha y hora que una hoja de
    cálculo reconoce en cualquier idioma, en la hora de la tienda, y su zona aparte."""
    local = momento.astimezone(ZoneInfo(ZONA_TIENDAS))
    desfase = local.strftime("%z")
    return local.strftime("%Y-%m-%d %H:%M:%S"), f"{ZONA_TIENDAS} (UTC{desfase[:3]}:{desfase[3:]})"


def coma(importe: str | None) -> str:
    """«90.00» -> «90,00»: un número para una hoja en español (sin miles ni «EUR»)."""
    return importe.replace(".", ",") if importe else ""


def escribir(columnas: Sequence[str], filas: Iterable[Sequence[Any]], *, hoja: bool) -> str:
    """El CSV entero: en ``hoja``, con BOM y «;»; si no, con «,». Cada valor pasa por ``celda``."""
    salida = io.StringIO()
    if hoja:
        salida.write("\ufeff")
    escritor = csv.writer(salida, delimiter=";" if hoja else ",", lineterminator="\r\n")
    escritor.writerow(columnas)
    for fila in filas:
        escritor.writerow([celda(v) for v in fila])
    return salida.getvalue()
