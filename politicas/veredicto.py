"""El veredicto de la política y su lectura desde ``evaluaciones_politica``.

El veredicto guardado de una llamada no cambia nunca (el ``when`` se reevalúa al
reanudar y debe dar lo mismo): la bandeja, la API y la descripción lo leen de aquí.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.rows import dict_row

from politicas.autoridad import Autoridad

__all__ = [
    "SELECT_EVALUACION_SQL",
    "Veredicto",
    "leer_veredicto",
    "veredicto_de_fila",
    "veredictos_de_hilo",
]


@dataclass(frozen=True)
class Veredicto:
    """Resultado de evaluar una llamada.

    ``umbrales`` viene del JSON guardado: el dinero como texto ("60.00"), los días y
    recuentos como enteros. ``nuevo`` es True si esta evaluación lo calculó y guardó,
    False si devolvió uno ya guardado (o si la herramienta no tiene firma).
    ``autoridad``: la firma que exige (None si no pide firma). ``version_politica``: la
    versión de la política de la tienda que decidió (0 = no se evaluó contra ninguna:
    herramienta sin firma).
    """

    requiere_encargado: bool
    motivos: tuple[str, ...]
    umbrales: Mapping[str, Any] = field(default_factory=dict, hash=False)
    herramienta: str = ""
    nuevo: bool = False
    autoridad: Autoridad | None = None
    version_politica: int = 0
    # La revalidación del efecto lo elevó a «pide firma» (politicas.revalidacion).
    revalidada: bool = False

    def como_json(self) -> dict[str, Any]:
        return {
            "requiere_encargado": self.requiere_encargado,
            "motivos": list(self.motivos),
            "umbrales": dict(self.umbrales),
        }


SELECT_EVALUACION_SQL = """
SELECT requiere_encargado, motivos, umbrales, herramienta, version_politica,
       autoridad_importe, autoridad_firmas, autoridad_rol, autoridad_matriz_id, autoridad_regla,
       false AS nueva, revalidada IS NOT NULL AS revalidada
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

SELECT_EVALUACIONES_HILO_SQL = """
SELECT tool_call_id, requiere_encargado, motivos, umbrales, herramienta, version_politica,
       autoridad_importe, autoridad_firmas, autoridad_rol, autoridad_matriz_id, autoridad_regla,
       false AS nueva
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s
ORDER BY evaluada, tool_call_id
"""


def _autoridad_de_fila(fila: Mapping[str, Any]) -> Autoridad | None:
    if not fila["requiere_encargado"]:
        return None
    if fila["autoridad_firmas"] is None:
        # Guardado antes de sql/006 (o a mano): la única autoridad que existía.
        return Autoridad(importe=fila["autoridad_importe"], regla=fila.get("autoridad_regla"))
    return Autoridad(
        importe=fila["autoridad_importe"],
        firmas=fila["autoridad_firmas"],
        rol_minimo=fila["autoridad_rol"],
        regla=fila.get("autoridad_regla"),
        matriz_id=fila.get("autoridad_matriz_id"),
    )


def veredicto_de_fila(fila: Mapping[str, Any]) -> Veredicto:
    """Un ``Veredicto`` desde una fila con las columnas de ``SELECT_EVALUACION_SQL``."""
    return Veredicto(
        requiere_encargado=bool(fila["requiere_encargado"]),
        motivos=tuple(str(m) for m in fila["motivos"] or ()),
        umbrales=dict(fila["umbrales"] or {}),
        herramienta=fila["herramienta"],
        nuevo=bool(fila["nueva"]),
        autoridad=_autoridad_de_fila(fila),
        version_politica=int(fila["version_politica"]),
        revalidada=bool(fila.get("revalidada")),
    )


def leer_veredicto(
    conexion: psycopg.Connection, *, thread_id: str, tool_call_id: str
) -> Veredicto | None:
    """El veredicto guardado de una llamada, o None si nunca se evaluó."""
    with conexion.cursor(row_factory=dict_row) as cur:
        fila = cur.execute(
            SELECT_EVALUACION_SQL, {"thread_id": thread_id, "tool_call_id": tool_call_id}
        ).fetchone()
    return veredicto_de_fila(fila) if fila else None


def veredictos_de_hilo(conexion: psycopg.Connection, *, thread_id: str) -> dict[str, Veredicto]:
    """Los veredictos guardados de un hilo, por ``tool_call_id`` (orden de evaluación)."""
    with conexion.cursor(row_factory=dict_row) as cur:
        filas = cur.execute(SELECT_EVALUACIONES_HILO_SQL, {"thread_id": thread_id}).fetchall()
    return {fila["tool_call_id"]: veredicto_de_fila(fila) for fila in filas}
