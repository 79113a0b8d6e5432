"""Administrar la política de una tienda: umbrales y matriz de autoridad, versionados y
con separación de funciones.

- ``ver(conexion, tienda)``: los umbrales vigentes (con sus defectos), su versión e
  historia, y la matriz de autoridad vigente (la propia o la por defecto) con su historia.
- ``leer_cambio``: cada valor pedido contra su dominio (``politicas.valores``: 422 con
  el rango).
- ``aplicar``: escribe la versión nueva (umbrales y/o matriz). La llaman
  ``cambios_politica.proponer`` (un cambio que solo endurece) y la firma de una solicitud. Cada versión de ``politicas_tienda`` deja su fila de historia por un
  trigger (sql/012); quién y por qué le llegan por ``set_config`` local.

Nada cambia lo que ya espera: cada veredicto guardó los valores y la versión con que se
decidió, y se ejecuta con ellos.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql

from agente.servicio.politica.gestion_autoridad import (
    Ambito,
    ambito_firmante,
    fijar_matriz,
    historial_matriz,
)
from nucleo import dinero
from nucleo.errores import DecisionNoValida, Prohibido, TiendaNoEncontrada
from politicas import DEFECTOS
from politicas.defectos import columnas_con_defecto, parametros_defecto
from politicas.gobierno import Cambio
from politicas.lectura_matriz import leer_matriz
from politicas.matriz_autoridad import Matriz
from politicas.valores import FueraDeDominio, dinero_de_matriz, validar

__all__ = [
    "ROLES_ADMINISTRAN",
    "UMBRALES",
    "ResultadoCambio",
    "aplicar",
    "comprobar_administrador",
    "comprobar_coherencia",
    "comprobar_tienda",
    "leer_cambio",
    "toca_la_matriz",
    "matriz_vigente",
    "umbrales_vigentes",
    "ver",
]

ROLES_ADMINISTRAN = ("gerente", "regional")
UMBRALES = tuple(n for n in DEFECTOS if n != "version")  # lo que se puede fijar

SELECT_TIENDA_SQL = "SELECT id FROM tiendas WHERE id = %(tienda)s"
SELECT_UMBRALES_SQL = sql.SQL("""
SELECT {columnas}
FROM (VALUES (1)) AS una (fila)
LEFT JOIN politicas_tienda pt ON pt.tienda = %(tienda)s
""").format(columnas=columnas_con_defecto("pt"))
SELECT_VERSIONES_SQL = """
SELECT version, umbrales, creada, creada_por, motivo, firmada_por, solicitud_id
FROM politicas_tienda_versiones
WHERE tienda = %(tienda)s ORDER BY version
"""
# Quién escribió o firmó cada versión, por su nombre: el personal lee «Ana Gómez», no
# «ger-talavera». Lo escrito sin autor (una migración, la carga inicial) es «el sistema».
NOMBRES_SQL = "SELECT id, nombre FROM encargados WHERE id = ANY(%(ids)s)"
SIN_PERSONA = frozenset({"sin autor", "sistema", ""})
NOMBRE_SISTEMA = "el sistema"

# La fila existe antes de cambiar nada: la versión 1 son los defectos (la que ya leían
# los veredictos de una tienda sin fila), y el cambio es la versión 2.
ASEGURAR_FILA_SQL = "INSERT INTO politicas_tienda (tienda) VALUES (%(tienda)s) ON CONFLICT (tienda) DO NOTHING"
# Quién, por qué y quién firmó: los lee el trigger de historia (sql/012) en esta transacción.
AUTORIA_SQL = """
SELECT set_config('agente.autor', %(autor)s, true), set_config('agente.motivo', %(motivo)s, true),
       set_config('agente.firmada_por', %(firmada_por)s, true),
       set_config('agente.solicitud', %(solicitud)s, true)
"""


@dataclass(frozen=True)
class ResultadoCambio:
    """``estado``: ``aplicada`` (versión nueva), ``sin_cambios`` (nada distinto de lo
    vigente) o ``pendiente_firma`` (``solicitud`` espera a alguien por encima del autor)."""

    estado: str
    politica: dict[str, Any] | None = None
    solicitud: dict[str, Any] | None = None


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


def comprobar_tienda(conexion: psycopg.Connection, tienda: str) -> None:
    if conexion.execute(SELECT_TIENDA_SQL, {"tienda": tienda}).fetchone() is None:
        raise TiendaNoEncontrada(f"tienda desconocida: {tienda}")


def umbrales_vigentes(conexion: psycopg.Connection, tienda: str) -> dict[str, Any]:
    """Los umbrales vigentes de ``tienda`` con sus defectos, y ``version``."""
    return conexion.execute(SELECT_UMBRALES_SQL, {**parametros_defecto(), "tienda": tienda}).fetchone()


def matriz_vigente(conexion: psycopg.Connection, tienda: str) -> Matriz:
    matriz = leer_matriz(conexion, tienda=tienda)
    if matriz is None:
        raise LookupError("no hay matriz de autoridad (¿falta sql/008?)")
    return matriz


def con_nombres(conexion: psycopg.Connection, filas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``filas`` con ``creada_por_nombre`` y ``firmada_por_nombre`` (None si nadie firmó)."""
    ids = sorted({f[c] for f in filas for c in ("creada_por", "firmada_por") if f.get(c)})
    nombres = {f["id"]: f["nombre"] for f in conexion.execute(NOMBRES_SQL, {"ids": ids}).fetchall()}

    def nombre(valor: str | None) -> str | None:
        if valor is None:
            return None
        return NOMBRE_SISTEMA if valor in SIN_PERSONA else nombres.get(valor, valor)

    return [{**f, "creada_por_nombre": nombre(f.get("creada_por") or ""),
             "firmada_por_nombre": nombre(f.get("firmada_por"))} for f in filas]


def ver(conexion: psycopg.Connection, tienda: str) -> dict[str, Any]:
    """Umbrales y matriz vigentes de ``tienda``, con sus historias (la primera antes)."""
    comprobar_tienda(conexion, tienda)
    umbrales = umbrales_vigentes(conexion, tienda)
    matriz = matriz_vigente(conexion, tienda)
    propia = matriz.tienda == tienda
    return {
        "tienda": tienda,
        "version": umbrales["version"],
        "umbrales": {n: _texto(umbrales[n]) for n in UMBRALES},
        "historial": con_nombres(conexion, conexion.execute(SELECT_VERSIONES_SQL, {"tienda": tienda}).fetchall()),
        "matriz": con_nombres(conexion, [_matriz_json(matriz, propia)])[0],
        "historial_matriz": con_nombres(conexion, historial_matriz(conexion, tienda if propia else None)),
    }


def comprobar_administrador(conexion: psycopg.Connection, autor: str, tienda: str) -> Ambito:
    """El ámbito de ``autor``; ``Prohibido`` si no es gerente de ``tienda`` ni regional de su región."""
    ambito = ambito_firmante(conexion, autor)
    if ambito.rol not in ROLES_ADMINISTRAN:
        raise Prohibido("solo un gerente o un regional puede cambiar la política de la tienda")
    if tienda not in ambito.tiendas:
        raise Prohibido("solo puedes cambiar la política de tus tiendas")
    return ambito


def leer_cambio(
    matriz: Matriz,
    umbrales: Mapping[str, Any] | None,
    limites: Mapping[str, Mapping[str, Any]] | None,
    dos_firmas: Mapping[str, Any] | None,
) -> Cambio:
    """El cambio pedido, cada valor contra su dominio (``FueraDeDominio``: 422 con el rango)."""
    reglas = set(matriz.limites)
    for regla in {*(limites or {}), *(dos_firmas or {})} - reglas:
        raise FueraDeDominio(f"regla desconocida: {regla} (válidas: {', '.join(sorted(reglas))})")
    for por_rol in (limites or {}).values():
        for rol in set(por_rol) - set(matriz.roles):
            raise FueraDeDominio(f"rol desconocido: {rol} (válidos: {', '.join(matriz.roles)})")

    def _importe(que: str, valor: Any) -> Decimal | None:
        return None if valor is None else dinero_de_matriz(que, valor)

    return Cambio(
        umbrales={n: validar(n, v) for n, v in (umbrales or {}).items()},
        limites={r: {rol: _importe(f"el límite de {rol} en {r}", v) for rol, v in d.items()}
                 for r, d in (limites or {}).items()},
        dos_firmas={r: _importe(f"el umbral de dos firmas de {r}", v) for r, v in (dos_firmas or {}).items()},
    )


def toca_la_matriz(cambio: Cambio) -> bool:
    return bool(any(cambio.limites.values()) or cambio.dos_firmas)


def _limites_con_cambio(
    matriz: Matriz, cambio: Cambio
) -> tuple[dict[str, dict[str, Decimal | None]], dict[str, Decimal | None]]:
    """Límites y umbrales de dos firmas de ``matriz`` con ``cambio`` encima."""
    nuevos = {r: dict(v) for r, v in matriz.limites.items()}
    umbral_doble = dict(matriz.dos_firmas_por_encima)
    for regla, por_rol in cambio.limites.items():
        nuevos.setdefault(regla, {}).update(por_rol)
    umbral_doble.update(cambio.dos_firmas)
    return nuevos, umbral_doble


def comprobar_coherencia(matriz: Matriz, cambio: Cambio) -> None:
    """``DecisionNoValida`` (422) si la matriz que dejaría ``cambio`` sobre ``matriz`` es
    incoherente (un rol más alto con menos límite que uno más bajo, el rol más alto con
    límite...). Se comprueba al proponer, no solo al aplicar: un cambio así nunca queda
    como solicitud que solo falla al firmarla (issue 39)."""
    if not toca_la_matriz(cambio):
        return
    nuevos, umbral_doble = _limites_con_cambio(matriz, cambio)
    try:
        Matriz(roles=matriz.roles, limites=nuevos, dos_firmas_por_encima=umbral_doble)
    except ValueError as exc:
        raise DecisionNoValida(f"matriz de autoridad no válida: {exc}") from None


def aplicar(
    conexion: psycopg.Connection,
    *,
    tienda: str,
    cambio: Cambio,
    matriz: Matriz,
    autor: str,
    motivo: str | None,
    firmada_por: str | None = None,
    solicitud_id: int | None = None,
) -> tuple[int | None, int | None]:
    """Escribe la versión nueva (en la transacción de quien llama) sobre ``matriz`` (la
    vigente). Devuelve la versión de los umbrales y el id de la matriz nuevos (None si
    esa parte no cambia).

    Raises:
        DecisionNoValida: la matriz resultante es incoherente (un rol más alto con menos
            límite, el rol más alto con límite...).
    """
    version = matriz_id = None
    if cambio.umbrales:
        conexion.execute(ASEGURAR_FILA_SQL, {"tienda": tienda})
    conexion.execute(AUTORIA_SQL, {
        "autor": autor, "motivo": motivo or "", "firmada_por": firmada_por or "",
        "solicitud": "" if solicitud_id is None else str(solicitud_id),
    })
    if cambio.umbrales:
        actualizar = sql.SQL("UPDATE politicas_tienda SET {sets} WHERE tienda = %(tienda)s RETURNING version").format(
            sets=sql.SQL(", ").join(
                sql.SQL("{c} = {v}").format(c=sql.Identifier(c), v=sql.Placeholder(c)) for c in cambio.umbrales
            ))
        version = conexion.execute(actualizar, {**cambio.umbrales, "tienda": tienda}).fetchone()["version"]
    if toca_la_matriz(cambio):
        nuevos, umbral_doble = _limites_con_cambio(matriz, cambio)
        try:
            matriz_id = fijar_matriz(
                conexion, tienda=tienda, limites=nuevos, dos_firmas_por_encima=umbral_doble,
                autor=autor, motivo=motivo, firmada_por=firmada_por, solicitud_id=solicitud_id,
            ).id
        except ValueError as exc:
            raise DecisionNoValida(f"matriz de autoridad no válida: {exc}") from None
    conexion.execute(AUTORIA_SQL, {"autor": "", "motivo": "", "firmada_por": "", "solicitud": ""})
    return version, matriz_id
