"""Administrar la autoridad: versiones nuevas de la matriz, su historia, el ámbito de cada
firmante y la baja de avisos.

La lógica pura (quién firma qué) está en ``politicas.matriz_autoridad`` y la lectura de una
versión en ``politicas.lectura_matriz``; aquí se escriben versiones. Cada cambio es una versión
nueva con quién y cuándo; las anteriores no se tocan (un trigger lo impide), así que una
aprobación que espera bajo la versión N se decide bajo la versión N.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

import psycopg

# Las filas de una versión se escriben igual que las de alta que escribe migrar.
from agente.bd.derivados import INSERT_LIMITE_SQL, INSERT_REGLA_SQL
from nucleo.claves_candado import CANDADO_MATRIZ_SQL
from nucleo.errores import Prohibido
from nucleo.operaciones import OPERACIONES
from politicas.lectura_matriz import SELECT_ROLES_SQL, leer_matriz_por_id
from politicas.matriz_autoridad import Matriz

__all__ = [
    "Ambito",
    "ambito_firmante",
    "darse_de_baja",
    "fijar_matriz",
    "historial_matriz",
]

SIGUIENTE_VERSION_SQL = """
SELECT coalesce(max(version), 0) + 1 AS version FROM matrices_autoridad
WHERE tienda IS NOT DISTINCT FROM %(tienda)s
"""
INSERT_MATRIZ_SQL = """
INSERT INTO matrices_autoridad (tienda, version, creada_por, motivo, firmada_por, solicitud_id)
VALUES (%(tienda)s, %(version)s, %(autor)s, %(motivo)s, %(firmada_por)s, %(solicitud_id)s)
RETURNING id
"""
SELECT_HISTORIAL_SQL = """
SELECT id, tienda, version, creada, creada_por, motivo, firmada_por, solicitud_id
FROM matrices_autoridad
WHERE tienda IS NOT DISTINCT FROM %(tienda)s
ORDER BY version
"""
SELECT_AMBITO_SQL = """
SELECT e.rol, e.activo,
       array(SELECT f.tienda FROM firmantes_tienda f WHERE f.encargado_id = e.id ORDER BY f.tienda)
           AS tiendas
FROM encargados e WHERE e.id = %(id)s
"""
BAJA_SQL = """
UPDATE contactos_firmantes SET baja = now()
WHERE encargado_id = %(id)s AND baja IS NULL AND (%(canal)s::text IS NULL OR canal = %(canal)s)
"""


def fijar_matriz(
    conexion: psycopg.Connection,
    *,
    tienda: str | None,
    limites: Mapping[str, Mapping[str, Decimal | None]],
    dos_firmas_por_encima: Mapping[str, Decimal | None],
    autor: str,
    motivo: str | None = None,
    firmada_por: str | None = None,
    solicitud_id: int | None = None,
) -> Matriz:
    """Guarda una versión nueva y completa de la matriz de ``tienda`` (None = la por
    defecto) y la devuelve. Se valida antes de escribir (``ValueError`` si no es
    coherente: el rol más alto sin límite, límites que no bajan al subir de rol, filas
    para cada operación con efecto declarada en ``nucleo.operaciones``)."""
    if not autor:
        raise ValueError("cada versión de la matriz dice quién la creó")
    # Sin filas, una operación pediría el rol más alto para cualquier importe (y el servicio
    # no arrancaría: agente.servicio.politica.comprobar_operaciones).
    sin_filas = [op.regla for op in OPERACIONES if op.regla not in limites]
    if sin_filas:
        raise ValueError(f"faltan las filas de {', '.join(sin_filas)}: cada operación con efecto necesita las suyas")
    with conexion.transaction():
        roles = tuple(f["rol"] for f in conexion.execute(SELECT_ROLES_SQL))
        Matriz(roles=roles, limites=limites, dos_firmas_por_encima=dos_firmas_por_encima)
        conexion.execute(CANDADO_MATRIZ_SQL, {"ambito": tienda or "*"})
        version = conexion.execute(SIGUIENTE_VERSION_SQL, {"tienda": tienda}).fetchone()["version"]
        matriz_id = conexion.execute(
            INSERT_MATRIZ_SQL,
            {"tienda": tienda, "version": version, "autor": autor, "motivo": motivo,
             "firmada_por": firmada_por, "solicitud_id": solicitud_id},
        ).fetchone()["id"]
        with conexion.cursor() as cur:
            cur.executemany(
                INSERT_REGLA_SQL,
                [
                    {"matriz_id": matriz_id, "regla": r, "umbral": dos_firmas_por_encima.get(r)}
                    for r in limites
                ],
            )
            cur.executemany(
                INSERT_LIMITE_SQL,
                [
                    {"matriz_id": matriz_id, "regla": r, "rol": rol, "limite": limite}
                    for r, por_rol in limites.items()
                    for rol, limite in por_rol.items()
                ],
            )
        matriz = leer_matriz_por_id(conexion, matriz_id)
    assert matriz is not None
    return matriz


def historial_matriz(conexion: psycopg.Connection, tienda: str | None) -> list[dict]:
    """Las versiones de la matriz propia de ``tienda`` (None = la por defecto), la primera antes."""
    return conexion.execute(SELECT_HISTORIAL_SQL, {"tienda": tienda}).fetchall()


@dataclass(frozen=True)
class Ambito:
    """Con qué rol firma una persona y en qué tiendas (la suya y, si es regional, las de su región)."""

    encargado_id: str
    rol: str
    tiendas: tuple[str, ...]


def ambito_firmante(conexion: psycopg.Connection, encargado_id: str) -> Ambito:
    """El ámbito de un firmante activo; ``Prohibido`` si no existe o está de baja."""
    fila = conexion.execute(SELECT_AMBITO_SQL, {"id": encargado_id}).fetchone()
    if fila is None or not fila["activo"]:
        raise Prohibido(f"{encargado_id} no es un firmante activo")
    return Ambito(encargado_id=encargado_id, rol=fila["rol"], tiendas=tuple(fila["tiendas"]))


def darse_de_baja(conexion: psycopg.Connection, encargado_id: str, canal: str | None = None) -> int:
    """Deja de avisar a la persona (por ``canal``, o por todos). Devuelve los contactos dados de baja.

    Se respeta también en los avisos ya encolados: se descartan al ir a entregarlos.
    """
    return conexion.execute(BAJA_SQL, {"id": encargado_id, "canal": canal}).rowcount
