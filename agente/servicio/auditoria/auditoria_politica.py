"""Auditoría del plano de control: la política misma está bajo los controles que aplica.

Comprobaciones (cada una devuelve sus hallazgos; vacías = todo cuadra):

- ``ampliacion_sin_firma``: una versión de los umbrales o de la matriz de una tienda que
  amplía respecto a la anterior sin la firma válida de alguien por encima de su autor (sin
  solicitud aplicada, firmada por el propio autor, por un rol que no está por encima, por
  un rol cuyo límite sube, o con valores por encima del límite de quien firmó). La primera
  versión de cada tienda es la de alta (la carga quien instala) y no se compara.
- ``limite_propio``: una versión cuyo autor subió el límite de su propio rol o fijó un
  valor por encima de su propio límite.
- ``efecto_fuera_de_instantanea``: un cambio de producto que se liquidó con valores
  distintos de la instantánea guardada al pausar su llamada (o que perdonó una diferencia
  que esa instantánea manda cobrar o devolver).
- ``instantanea_alterada``: la instantánea guardada con un veredicto no coincide con la
  versión de la política que dice ser.
- ``plazo_fuera_de_rango``: una aprobación con un plazo más largo que el máximo de
  ``horas_caducidad`` (lo dejaban versiones anteriores).

Se compara siempre con la versión exacta (de los umbrales y de la matriz) vigente en cada
momento, nunca con la de hoy.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from nucleo.operaciones import por_regla
from politicas.defectos import DEFECTOS, instantanea
from politicas.gobierno import (
    Cambio,
    amplia,
    diferencias,
    por_encima_de_su_limite,
    puede_firmar_cambio,
)
from politicas.lectura_matriz import MATRIZ_COMO_JSON, matriz_de_json
from politicas.matriz_autoridad import Matriz
from politicas.valores import VALORES

__all__ = ["COMPROBACIONES", "auditar_politica"]

COMPROBACIONES = ("ampliacion_sin_firma", "limite_propio", "efecto_fuera_de_instantanea",
                  "instantanea_alterada", "plazo_fuera_de_rango")

SELECT_VERSIONES_UMBRALES_SQL = """
SELECT v.tienda, v.version, v.umbrales, v.creada, v.creada_por, v.firmada_por, v.solicitud_id,
       e.rol AS rol_autor, s.estado AS solicitud_estado, s.autor AS solicitud_autor,
       s.autor_rol, s.decidida_por, s.decidida_rol, s.version_umbrales AS solicitud_version
FROM politicas_tienda_versiones v
LEFT JOIN encargados e ON e.id = v.creada_por
LEFT JOIN solicitudes_politica s ON s.id = v.solicitud_id
ORDER BY v.tienda, v.version
"""
# Cada versión de la matriz con su contenido (el mismo JSON que lee la política).
SELECT_VERSIONES_MATRIZ_SQL = f"""
SELECT m.id, m.tienda, m.version, m.creada, m.creada_por, m.firmada_por, m.solicitud_id,
       e.rol AS rol_autor, s.estado AS solicitud_estado, s.autor AS solicitud_autor,
       s.autor_rol, s.decidida_por, s.decidida_rol, s.matriz_id AS solicitud_matriz,
       {MATRIZ_COMO_JSON} AS datos
FROM matrices_autoridad m
LEFT JOIN encargados e ON e.id = m.creada_por
LEFT JOIN solicitudes_politica s ON s.id = m.solicitud_id
ORDER BY m.tienda NULLS FIRST, m.version
"""  # noqa: S608 - una constante de politicas.matriz_autoridad
EFECTOS_FUERA_DE_INSTANTANEA_SQL = """
SELECT 'sustitucion' AS tipo, s.numero, s.thread_id, s.tool_call_id, s.tienda, s.diferencia,
       s.liquidacion, s.valores_politica, e.valores -> 'diferencia_minima_liquidable' AS instantanea
FROM sustituciones s
JOIN evaluaciones_politica e ON e.thread_id = s.thread_id AND e.tool_call_id = s.tool_call_id
WHERE e.valores ? 'diferencia_minima_liquidable'
  AND ((s.valores_politica ->> 'diferencia_minima_liquidable')::numeric
           IS DISTINCT FROM (e.valores ->> 'diferencia_minima_liquidable')::numeric
       OR (s.liquidacion = 'renunciada'
           AND abs(s.diferencia) >= (e.valores ->> 'diferencia_minima_liquidable')::numeric))
ORDER BY s.creada
"""
INSTANTANEAS_ALTERADAS_SQL = """
SELECT e.thread_id, e.tool_call_id, e.tienda, e.herramienta, (e.valores ->> 'version')::int AS version
FROM evaluaciones_politica e
LEFT JOIN politicas_tienda_versiones v
       ON v.tienda = e.tienda AND v.version = (e.valores ->> 'version')::int
WHERE e.valores IS NOT NULL
  AND EXISTS (
      SELECT 1 FROM jsonb_each_text(CASE
          WHEN v.tienda IS NOT NULL THEN v.umbrales
          WHEN (e.valores ->> 'version')::int = 1 THEN %(defectos)s::jsonb
          ELSE '{"version": "sin versión registrada"}'::jsonb END) AS u
      WHERE (e.valores ->> u.key) IS DISTINCT FROM u.value
        AND NOT (u.value ~ '^-?[0-9.]+$' AND (e.valores ->> u.key) ~ '^-?[0-9.]+$'
                 AND (e.valores ->> u.key)::numeric = u.value::numeric))
ORDER BY e.evaluada
"""
PLAZOS_FUERA_DE_RANGO_SQL = """
SELECT thread_id, tienda, creada, caduca::text AS caduca
FROM aprobaciones_pendientes
WHERE caduca > creada + make_interval(hours => %(horas)s)
ORDER BY creada
"""


def _matriz(datos: dict[str, Any]) -> Matriz:
    return matriz_de_json(datos)


def _hallazgo(fila: dict[str, Any], que: str, detalle: str) -> dict[str, Any]:
    return {"tienda": fila["tienda"], "que": que, "version": fila["version"],
            "creada_por": fila["creada_por"], "firmada_por": fila.get("firmada_por"), "detalle": detalle}


def _firma_valida(fila: dict[str, Any], matriz: Matriz, difs, propia: Any) -> str | None:
    """None si la versión amplía con una solicitud aplicada y firmada por quien podía."""
    if fila["solicitud_id"] is None or fila["solicitud_estado"] != "aplicada":
        return "amplía sin una solicitud firmada"
    if fila["firmada_por"] != fila["decidida_por"] or fila["creada_por"] != fila["solicitud_autor"] or not propia:
        return "la versión no coincide con la solicitud que dice aplicar"
    return puede_firmar_cambio(matriz, autor=fila["solicitud_autor"], autor_rol=fila["autor_rol"],
                               firmante=fila["decidida_por"], firmante_rol=fila["decidida_rol"], difs=difs)


def _comprobar_version(fila, matriz: Matriz, difs, propia: Any, hallazgos: dict[str, list]) -> None:
    que = "matriz" if "datos" in fila else "umbrales"
    texto = "; ".join(d.texto for d in difs if d.sentido == "amplia")
    if amplia(difs):
        motivo = _firma_valida(fila, matriz, difs, propia)
        if motivo:
            hallazgos["ampliacion_sin_firma"].append(_hallazgo(fila, que, f"{motivo}: {texto}"))
    rol = fila["autor_rol"] or fila["rol_autor"]
    if rol is None:
        return
    propios = [d.texto for d in difs if d.rol == rol and d.sentido == "amplia"]
    fuera = por_encima_de_su_limite(matriz, rol, difs)
    if propios or fuera:
        hallazgos["limite_propio"].append(_hallazgo(fila, que, "; ".join(
            [f"sube el límite de su propio rol ({rol}): {t}" for t in propios] + fuera)))


class _Matrices:
    """Las versiones de la matriz, para saber cuál estaba vigente en cada tienda y momento."""

    def __init__(self, filas: list[dict[str, Any]]) -> None:
        self.por_tienda: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        for fila in filas:
            self.por_tienda[fila["tienda"]].append(fila)

    def vigente(self, tienda: str | None, momento: datetime, *, antes_de: int | None = None) -> Matriz | None:
        """La de ``tienda`` vigente en ``momento`` (la propia o, si no tenía, la por defecto)."""
        propias = [f for f in self.por_tienda.get(tienda, []) if f["creada"] <= momento
                   and (antes_de is None or f["version"] < antes_de)] if tienda is not None else []
        if propias:
            return _matriz(propias[-1]["datos"])
        defecto = [f for f in self.por_tienda.get(None, []) if f["creada"] <= momento
                   and (tienda is not None or antes_de is None or f["version"] < antes_de)]
        return _matriz(defecto[-1]["datos"]) if defecto else None


def _filas_de_alta(anterior: Matriz, nueva: Matriz, regla: str) -> bool:
    """La regla no estaba y trae justo las filas por defecto de su operación declarada."""
    operacion = por_regla(regla)
    return (regla not in anterior.limites and operacion is not None
            and dict(nueva.limites[regla]) == dict(operacion.matriz.limites)
            and nueva.dos_firmas_por_encima.get(regla) == operacion.matriz.dos_firmas_por_encima)


def auditar_politica(conexion: psycopg.Connection) -> dict[str, list[dict[str, Any]]]:
    """Los hallazgos del plano de control, por comprobación (``COMPROBACIONES``)."""
    hallazgos: dict[str, list[dict[str, Any]]] = {c: [] for c in COMPROBACIONES}
    filas_matriz = conexion.execute(SELECT_VERSIONES_MATRIZ_SQL).fetchall()
    matrices = _Matrices(filas_matriz)
    for tienda, versiones in matrices.por_tienda.items():
        for fila in versiones:
            anterior = matrices.vigente(tienda, fila["creada"], antes_de=fila["version"])
            if anterior is None:
                continue  # la primera: la de alta
            nueva = _matriz(fila["datos"])
            # Las filas por defecto de una operación nueva (las de su migración) no amplían nada.
            altas = {r for r in nueva.limites if _filas_de_alta(anterior, nueva, r)}
            cambio = Cambio(umbrales={}, limites={r: v for r, v in nueva.limites.items() if r not in altas},
                            dos_firmas={r: v for r, v in nueva.dos_firmas_por_encima.items() if r not in altas})
            difs = diferencias({}, anterior, cambio)
            _comprobar_version(fila, anterior, difs, fila["solicitud_matriz"] == fila["id"], hallazgos)
    previa: dict[str, Any] | None = None
    for fila in conexion.execute(SELECT_VERSIONES_UMBRALES_SQL).fetchall():
        if previa is not None and previa["tienda"] == fila["tienda"]:
            matriz = matrices.vigente(fila["tienda"], fila["creada"])
            cambio = Cambio.de_json({"umbrales": {k: v for k, v in fila["umbrales"].items() if k in VALORES}})
            # Un valor que la versión anterior no tenía llegó con una migración, con su defecto.
            antes = {**instantanea(DEFECTOS), **previa["umbrales"]}
            difs = diferencias(antes, matriz, cambio) if matriz else ()
            _comprobar_version(fila, matriz, difs, fila["solicitud_version"] == fila["version"], hallazgos)
        previa = fila
    hallazgos["efecto_fuera_de_instantanea"] = conexion.execute(EFECTOS_FUERA_DE_INSTANTANEA_SQL).fetchall()
    defectos = {k: v for k, v in instantanea(DEFECTOS).items() if k != "version"}
    hallazgos["instantanea_alterada"] = conexion.execute(
        INSTANTANEAS_ALTERADAS_SQL, {"defectos": Jsonb(defectos)}).fetchall()
    hallazgos["plazo_fuera_de_rango"] = conexion.execute(
        PLAZOS_FUERA_DE_RANGO_SQL, {"horas": VALORES["horas_caducidad"].maximo}).fetchall()
    return hallazgos

