"""Leer la matriz de autoridad de la base (``sql/008_autoridad.sql``): una versión entera
(cabecera, reglas, límites y roles) en una sola sentencia, como un valor JSON.

- ``leer_matriz(conexion, tienda=..., version=...)``: la vigente de una tienda (o la por
  defecto), o una versión exacta;
- ``leer_matriz_por_id``: la versión que guardó un veredicto o un aviso; ``VersionesMatriz``
  la recuerda por id para todo un proceso (una versión no cambia nunca);
- ``MATRIZ_COMO_JSON`` y ``MATRIZ_VIGENTE_JSON_SQL``: el mismo JSON para quien la lee dentro
  de su propia consulta, y ``matriz_de_json`` para volver a una ``Matriz``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import psycopg

from politicas.matriz_autoridad import Matriz

__all__ = [
    "MATRIZ_COMO_JSON",
    "MATRIZ_VIGENTE_JSON_SQL",
    "SELECT_ROLES_SQL",
    "VersionesMatriz",
    "leer_matriz",
    "leer_matriz_por_id",
    "matriz_de_json",
]

# Una versión entera (cabecera, reglas, límites y roles) como un solo valor JSON, con el
# dinero como texto: una sentencia por lectura en vez de tres. ``m`` es la fila de
# ``matrices_autoridad``. Las consultas de abajo lo pegan con f-strings de constantes
# (de ahí los ``noqa: S608``): ningún valor entra si no es por parámetro.
_MATRIZ_JSON = """jsonb_build_object(
    'id', m.id, 'tienda', m.tienda, 'version', m.version,
    'roles', (SELECT jsonb_agg(rf.rol ORDER BY rf.nivel) FROM roles_firma rf),
    'reglas', (SELECT coalesce(jsonb_object_agg(ra.regla, jsonb_build_object(
        'dos_firmas_por_encima', ra.dos_firmas_por_encima::text,
        'limites', (SELECT coalesce(jsonb_object_agg(la.rol, la.limite::text), '{}'::jsonb)
                    FROM limites_autoridad la
                    WHERE la.matriz_id = ra.matriz_id AND la.regla = ra.regla))), '{}'::jsonb)
        FROM reglas_autoridad ra WHERE ra.matriz_id = m.id))"""

# La versión pedida de la tienda; sin versión, la última de la tienda o, si no tiene
# matriz propia, la última por defecto.
SELECT_MATRIZ_SQL = f"""
SELECT m.creada, m.creada_por, {_MATRIZ_JSON} AS datos
FROM matrices_autoridad m
WHERE (m.tienda = %(tienda)s OR m.tienda IS NULL)
  AND (%(version)s::int IS NULL OR (m.version = %(version)s AND m.tienda IS NOT DISTINCT FROM %(tienda)s))
ORDER BY (m.tienda IS NULL), m.version DESC
LIMIT 1
"""  # noqa: S608
SELECT_MATRIZ_ID_SQL = f"""
SELECT m.creada, m.creada_por, {_MATRIZ_JSON} AS datos FROM matrices_autoridad m WHERE m.id = %(id)s
"""  # noqa: S608
SELECT_ROLES_SQL = "SELECT rol FROM roles_firma ORDER BY nivel"
# Para quien lea versiones enteras en su propia consulta (la auditoría de la política).
MATRIZ_COMO_JSON = _MATRIZ_JSON


# La matriz vigente de la tienda ``%(tienda)s`` como subconsulta de un valor JSON: la
# consulta de hechos del veredicto la lee sin otra sentencia.
MATRIZ_VIGENTE_JSON_SQL = f"""(SELECT {_MATRIZ_JSON}
 FROM matrices_autoridad m
 WHERE m.tienda = %(tienda)s::text OR m.tienda IS NULL
 ORDER BY (m.tienda IS NULL), m.version DESC
 LIMIT 1)"""  # noqa: S608


def matriz_de_json(datos: Mapping[str, Any], **cabecera: Any) -> Matriz:
    """La ``Matriz`` desde el JSON de ``MATRIZ_VIGENTE_JSON_SQL`` (``cabecera``: ``creada``
    y ``creada_por``, que ese JSON no lleva)."""
    def _dinero(valor: Any) -> Decimal | None:
        return None if valor is None else Decimal(str(valor))

    reglas = datos.get("reglas") or {}
    return Matriz(
        roles=tuple(datos["roles"]),
        limites={r: {rol: _dinero(v) for rol, v in (d.get("limites") or {}).items()} for r, d in reglas.items()},
        dos_firmas_por_encima={r: _dinero(d.get("dos_firmas_por_encima")) for r, d in reglas.items()},
        id=datos.get("id"), tienda=datos.get("tienda"), version=int(datos.get("version") or 1),
        **cabecera,
    )


def _cargar(fila: Mapping[str, Any] | None) -> Matriz | None:
    if fila is None:
        return None
    return matriz_de_json(fila["datos"], creada=fila["creada"], creada_por=fila["creada_por"])


def leer_matriz(
    conexion: psycopg.Connection, *, tienda: str | None, version: int | None = None
) -> Matriz | None:
    """La matriz de ``tienda`` en ``version`` (None = la vigente). ``tienda=None``: la por
    defecto. Con versión, la de esa tienda exactamente (None si no existe). La conexión
    debe devolver filas como dict (``KWARGS_CONEXION``)."""
    return _cargar(conexion.execute(SELECT_MATRIZ_SQL, {"tienda": tienda, "version": version}).fetchone())


def leer_matriz_por_id(conexion: psycopg.Connection, matriz_id: int) -> Matriz | None:
    """La versión exacta que guardó un veredicto o un aviso."""
    return _cargar(conexion.execute(SELECT_MATRIZ_ID_SQL, {"id": matriz_id}).fetchone())


class VersionesMatriz:
    """Las versiones de la matriz ya leídas por id, para todo un proceso.

    Una versión no se modifica ni se borra (disparadores de sql/008): leída una vez, vale
    siempre; así la pausa y la firma no vuelven a la base por ella. Trampa: una migración
    que añade las filas de una regla nueva a versiones guardadas (sql/016) llega con código
    nuevo, que arranca con la caché vacía. Es por pool (una base): nunca global al módulo,
    porque las pruebas recrean bases con los mismos ids.
    """

    def __init__(self, *, maximo: int = 256) -> None:
        if maximo < 1:
            raise ValueError("maximo debe ser al menos 1")
        self._maximo = maximo
        self._versiones: dict[int, Matriz] = {}

    def leer(self, conexion: psycopg.Connection, matriz_id: int) -> Matriz | None:
        matriz = self._versiones.get(matriz_id)
        if matriz is None:
            matriz = leer_matriz_por_id(conexion, matriz_id)
            if matriz is not None:
                if len(self._versiones) >= self._maximo:
                    self._versiones.clear()  # cientos de versiones: raro; se vuelven a leer
                self._versiones[matriz_id] = matriz
        return matriz
