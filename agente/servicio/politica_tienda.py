"""Administrar la política de una tienda: umbrales y matriz de autoridad, versionados.

- ``ver(conexion, tienda)``: los umbrales vigentes (con sus defectos), su versión e
  historia, y la matriz de autoridad vigente (la propia de la tienda o la por defecto) con
  su historia.
- ``fijar(conexion, tienda=..., autor=..., umbrales=..., limites=..., dos_firmas=...)``:
  solo un ``gerente`` de la tienda o un ``regional`` de su región (``Prohibido`` si no).
  Cada cambio es una versión nueva con quién y cuándo: los umbrales suben
  ``politicas_tienda.version`` (sql/006) y se apuntan en ``politicas_tienda_versiones``;
  la matriz es una versión nueva y completa (``agente.autoridad.fijar_matriz``) que parte
  de la vigente. Nada cambia lo que ya espera: cada veredicto guardó la versión que lo
  decidió y se decide con ella.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from agente.autoridad import ambito_firmante, fijar_matriz, historial_matriz
from agente.nucleo import dinero
from agente.nucleo.errores import DecisionNoValida, Prohibido, TiendaNoEncontrada
from politicas import DEFECTOS
from politicas.defectos import columnas_con_defecto, parametros_defecto
from politicas.matriz_autoridad import Matriz, leer_matriz

__all__ = ["ROLES_ADMINISTRAN", "UMBRALES", "comprobar_administrador", "fijar", "ver"]

ROLES_ADMINISTRAN = ("gerente", "regional")
UMBRALES = tuple(n for n in DEFECTOS if n != "version")  # lo que se puede fijar

SELECT_TIENDA_SQL = "SELECT id FROM tiendas WHERE id = %(tienda)s"
SELECT_UMBRALES_SQL = sql.SQL("""
SELECT {columnas}
FROM (VALUES (1)) AS una (fila)
LEFT JOIN politicas_tienda pt ON pt.tienda = %(tienda)s
""").format(columnas=columnas_con_defecto("pt"))
SELECT_VERSIONES_SQL = """
SELECT version, umbrales, creada, creada_por, motivo FROM politicas_tienda_versiones
WHERE tienda = %(tienda)s ORDER BY version
"""
INSERT_VERSION_SQL = """
INSERT INTO politicas_tienda_versiones (tienda, version, umbrales, creada_por, motivo)
VALUES (%(tienda)s, %(version)s, %(umbrales)s, %(autor)s, %(motivo)s)
ON CONFLICT (tienda, version) DO NOTHING
"""


def _texto(valor: Any) -> Any:
    return dinero.texto(valor) if isinstance(valor, Decimal) else valor


def _matriz_json(matriz: Matriz, propia: bool) -> dict[str, Any]:
    return {
        "id": matriz.id, "version": matriz.version, "propia": propia,
        "creada": matriz.creada, "creada_por": matriz.creada_por, "roles": list(matriz.roles),
        "reglas": {
            regla: {
                "limites": {rol: None if v is None else dinero.texto(v) for rol, v in por_rol.items()},
                "dos_firmas_por_encima": (
                    None if matriz.dos_firmas_por_encima.get(regla) is None
                    else dinero.texto(matriz.dos_firmas_por_encima[regla])
                ),
            }
            for regla, por_rol in matriz.limites.items()
        },
    }


def _comprobar_tienda(conexion: psycopg.Connection, tienda: str) -> None:
    if conexion.execute(SELECT_TIENDA_SQL, {"tienda": tienda}).fetchone() is None:
        raise TiendaNoEncontrada(f"tienda desconocida: {tienda}")


def ver(conexion: psycopg.Connection, tienda: str) -> dict[str, Any]:
    """Umbrales y matriz vigentes de ``tienda``, con sus historias (la primera antes)."""
    _comprobar_tienda(conexion, tienda)
    umbrales = conexion.execute(SELECT_UMBRALES_SQL, {**parametros_defecto(), "tienda": tienda}).fetchone()
    matriz = leer_matriz(conexion, tienda=tienda)
    if matriz is None:
        raise LookupError("no hay matriz de autoridad (¿falta sql/008?)")
    propia = matriz.tienda == tienda
    return {
        "tienda": tienda,
        "version": umbrales["version"],
        "umbrales": {n: _texto(umbrales[n]) for n in UMBRALES},
        "historial": conexion.execute(SELECT_VERSIONES_SQL, {"tienda": tienda}).fetchall(),
        "matriz": _matriz_json(matriz, propia),
        "historial_matriz": historial_matriz(conexion, tienda) if propia else historial_matriz(conexion, None),
    }


def comprobar_administrador(conexion: psycopg.Connection, autor: str, tienda: str) -> None:
    """``Prohibido`` si ``autor`` no es gerente de ``tienda`` ni regional de su región."""
    ambito = ambito_firmante(conexion, autor)
    if ambito.rol not in ROLES_ADMINISTRAN:
        raise Prohibido("solo un gerente o un regional puede cambiar la política de la tienda")
    if tienda not in ambito.tiendas:
        raise Prohibido("solo puedes cambiar la política de tus tiendas")


def _umbrales_validos(umbrales: Mapping[str, Any]) -> dict[str, Any]:
    desconocidos = sorted(set(umbrales) - set(UMBRALES))
    if desconocidos:
        raise DecisionNoValida(f"umbrales desconocidos: {', '.join(desconocidos)} (válidos: {', '.join(UMBRALES)})")
    validos = {}
    for nombre, valor in umbrales.items():
        if isinstance(DEFECTOS[nombre], Decimal):
            validos[nombre] = dinero.cuantizar(dinero.diferencia(valor))
            if validos[nombre] < 0:
                raise DecisionNoValida(f"{nombre} no puede ser negativo")
        else:
            try:
                validos[nombre] = int(str(valor))
            except ValueError:
                raise DecisionNoValida(f"{nombre} debe ser un número entero") from None
            if validos[nombre] < 0:
                raise DecisionNoValida(f"{nombre} no puede ser negativo")
    return validos


def _fijar_umbrales(
    conexion: psycopg.Connection, tienda: str, umbrales: Mapping[str, Any], autor: str, motivo: str | None
) -> None:
    columnas = list(umbrales)
    insertar = sql.SQL(
        "INSERT INTO politicas_tienda (tienda, {cols}) VALUES (%(tienda)s, {vals}) "
        "ON CONFLICT (tienda) DO UPDATE SET {sets} RETURNING version"
    ).format(
        cols=sql.SQL(", ").join(sql.Identifier(c) for c in columnas),
        vals=sql.SQL(", ").join(sql.Placeholder(c) for c in columnas),
        sets=sql.SQL(", ").join(sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c)) for c in columnas),
    )
    version = conexion.execute(insertar, {**umbrales, "tienda": tienda}).fetchone()["version"]
    vigentes = conexion.execute(SELECT_UMBRALES_SQL, {**parametros_defecto(), "tienda": tienda}).fetchone()
    conexion.execute(INSERT_VERSION_SQL, {
        "tienda": tienda, "version": version, "autor": autor, "motivo": motivo,
        "umbrales": Jsonb({n: _texto(vigentes[n]) for n in UMBRALES}),
    })


def fijar(
    conexion: psycopg.Connection,
    *,
    tienda: str,
    autor: str,
    umbrales: Mapping[str, Any] | None = None,
    limites: Mapping[str, Mapping[str, Any]] | None = None,
    dos_firmas: Mapping[str, Any] | None = None,
    motivo: str | None = None,
) -> dict[str, Any]:
    """Cambia umbrales y/o la matriz de ``tienda`` (versiones nuevas) y devuelve ``ver``.

    ``limites``: ``{regla: {rol: importe | None}}`` (None = sin límite) sobre la matriz
    vigente; ``dos_firmas``: ``{regla: importe | None}`` (None = nunca).

    Raises:
        Prohibido: ``autor`` no administra esa tienda. DecisionNoValida: un valor no válido
        o una matriz incoherente (p. ej. un rol más alto con menos límite).
    """
    if not (umbrales or limites or dos_firmas):
        raise DecisionNoValida("no hay nada que cambiar")
    with conexion.transaction():
        _comprobar_tienda(conexion, tienda)
        comprobar_administrador(conexion, autor, tienda)
        if umbrales:
            _fijar_umbrales(conexion, tienda, _umbrales_validos(umbrales), autor, motivo)
        if limites or dos_firmas:
            vigente = leer_matriz(conexion, tienda=tienda)
            nuevos = {r: dict(v) for r, v in vigente.limites.items()}
            umbral_doble = dict(vigente.dos_firmas_por_encima)
            try:
                for regla, por_rol in (limites or {}).items():
                    for rol, valor in por_rol.items():
                        nuevos.setdefault(regla, {})[rol] = None if valor is None else dinero.cuantizar(
                            dinero.diferencia(valor))
                for regla, valor in (dos_firmas or {}).items():
                    umbral_doble[regla] = None if valor is None else dinero.cuantizar(dinero.diferencia(valor))
                fijar_matriz(conexion, tienda=tienda, limites=nuevos, dos_firmas_por_encima=umbral_doble,
                             autor=autor, motivo=motivo)
            except ValueError as exc:
                raise DecisionNoValida(f"matriz de autoridad no válida: {exc}") from None
        return ver(conexion, tienda)
