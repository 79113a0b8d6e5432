"""Claves de API del back office de una tienda: crear (se enseña una vez), listar, revocar y
comprobar en cada petición, con sus alcances.

Separadas de los tokens de personas (JWT): otra cabecera (``X-Clave-API``), otra tabla. La
clave es ``tnd_<prefijo>_<secreto>``; se guarda el sha256 de la clave entera (256 bits
aleatorios: un hash lento no añade nada) y el prefijo, que se enseña y con el que se revoca.
Una clave revocada, desconocida o mal formada es 401; sin el alcance, 403.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string
from dataclasses import dataclass
from datetime import datetime

import psycopg

from agente.servicio.tienda.registros import ALCANCES
from nucleo.errores import DecisionNoValida, NoAutorizado, Prohibido, TiendaNoEncontrada

__all__ = ["ClaveApi", "ClaveCreada", "autenticar", "crear", "listar", "revocar"]

_FORMA = re.compile(r"^tnd_([a-z0-9]{8})_([A-Za-z0-9_-]{43})$")
_LETRAS = string.ascii_lowercase + string.digits

INSERT_SQL = """
INSERT INTO claves_api (prefijo, hash, tienda, nombre, alcances, creada_por)
SELECT %(prefijo)s, %(hash)s, %(tienda)s, %(nombre)s, %(alcances)s, %(creada_por)s
WHERE EXISTS (SELECT 1 FROM tiendas WHERE id = %(tienda)s)
RETURNING creada
"""
LISTAR_SQL = """
SELECT prefijo, tienda, nombre, alcances, creada, creada_por, revocada, usada FROM claves_api
WHERE %(tienda)s::text IS NULL OR tienda = %(tienda)s ORDER BY creada, id
"""
REVOCAR_SQL = """
UPDATE claves_api SET revocada = coalesce(revocada, now()) WHERE prefijo = %(prefijo)s
RETURNING prefijo, tienda, nombre, alcances, creada, creada_por, revocada, usada
"""
# La huella manda (UNIQUE); el prefijo solo evita comparar con otra clave.
AUTENTICAR_SQL = """
SELECT id, prefijo, hash, tienda, alcances, revocada FROM claves_api WHERE prefijo = %(prefijo)s
"""
# Marca de último uso, como mucho una escritura por minuto y clave.
USADA_SQL = """
UPDATE claves_api SET usada = now()
WHERE id = %(id)s AND (usada IS NULL OR usada < now() - interval '1 minute')
"""


@dataclass(frozen=True)
class ClaveApi:
    """Una clave (sin el secreto): lo que se lista y lo que recibe una ruta autenticada."""

    prefijo: str
    tienda: str
    alcances: tuple[str, ...]
    nombre: str = ""
    creada: datetime | None = None
    creada_por: str = ""
    revocada: datetime | None = None
    usada: datetime | None = None


@dataclass(frozen=True)
class ClaveCreada:
    clave: ClaveApi
    secreto: str  # la clave entera: solo existe aquí, al crearla


def _hash(valor: str) -> str:
    return hashlib.sha256(valor.encode()).hexdigest()


def _fila(f: dict) -> ClaveApi:
    return ClaveApi(prefijo=f["prefijo"], tienda=f["tienda"], alcances=tuple(f["alcances"]),
                    nombre=f["nombre"], creada=f["creada"], creada_por=f["creada_por"],
                    revocada=f["revocada"], usada=f["usada"])


def crear(conexion: psycopg.Connection, *, tienda: str, nombre: str, alcances: list[str],
          creada_por: str = "cli") -> ClaveCreada:
    desconocidos = sorted(set(alcances) - set(ALCANCES))
    if not alcances or desconocidos:
        raise DecisionNoValida(f"alcances no válidos: {', '.join(desconocidos) or '(ninguno)'}; "
                               f"elige entre {', '.join(ALCANCES)}")
    if not 1 <= len(nombre) <= 100:
        raise DecisionNoValida("el nombre de la clave debe tener entre 1 y 100 caracteres")
    prefijo = "".join(secrets.choice(_LETRAS) for _ in range(8))
    secreto = f"tnd_{prefijo}_{secrets.token_urlsafe(32)}"
    ordenados = [a for a in ALCANCES if a in alcances]
    with conexion.transaction():
        fila = conexion.execute(INSERT_SQL, {
            "prefijo": prefijo, "hash": _hash(secreto), "tienda": tienda, "nombre": nombre,
            "alcances": ordenados, "creada_por": creada_por}).fetchone()
    if fila is None:
        raise TiendaNoEncontrada(f"tienda no encontrada: {tienda}")
    clave = ClaveApi(prefijo=prefijo, tienda=tienda, alcances=tuple(ordenados), nombre=nombre,
                     creada=fila["creada"], creada_por=creada_por)
    return ClaveCreada(clave=clave, secreto=secreto)


def listar(conexion: psycopg.Connection, tienda: str | None = None) -> list[ClaveApi]:
    return [_fila(f) for f in conexion.execute(LISTAR_SQL, {"tienda": tienda}).fetchall()]


def revocar(conexion: psycopg.Connection, prefijo: str) -> ClaveApi:
    """Revoca la clave (idempotente: revocar dos veces conserva la primera fecha)."""
    prefijo = prefijo.removeprefix("tnd_").split("_", 1)[0]
    with conexion.transaction():
        fila = conexion.execute(REVOCAR_SQL, {"prefijo": prefijo}).fetchone()
    if fila is None:
        raise DecisionNoValida(f"no hay ninguna clave con el prefijo {prefijo}")
    return _fila(fila)


def autenticar(conexion: psycopg.Connection, valor: str | None, alcance: str | None) -> ClaveApi:
    """La clave de la cabecera, válida y sin revocar (401), con ``alcance`` (403)."""
    forma = _FORMA.match(valor or "")
    if forma is None:
        raise NoAutorizado("falta una clave de API válida (cabecera X-Clave-API)")
    fila = conexion.execute(AUTENTICAR_SQL, {"prefijo": forma.group(1)}).fetchone()
    if fila is None or not hmac.compare_digest(fila["hash"], _hash(valor)) or fila["revocada"] is not None:
        raise NoAutorizado("clave de API no válida o revocada")
    if alcance is not None and alcance not in fila["alcances"]:
        raise Prohibido(f"la clave no tiene el alcance «{alcance}»")
    conexion.execute(USADA_SQL, {"id": fila["id"]})
    return ClaveApi(prefijo=fila["prefijo"], tienda=fila["tienda"], alcances=tuple(fila["alcances"]))
