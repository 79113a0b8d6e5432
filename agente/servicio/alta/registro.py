"""Quién actúa en el alta y la anotación de cada cambio en ``cambios_alta``; las
comprobaciones de forma que comparten tiendas, regiones y personas."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agente.servicio.alta.reglas import Persona
from nucleo.errores import DatosNoValidos, Prohibido

__all__ = [
    "CANALES",
    "SELECT_PERSONA_SQL",
    "anotar",
    "gestor",
    "persona_de_fila",
    "texto",
    "validar_id",
]

CANALES = ("web", "cli", "operador")
RE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")

SELECT_PERSONA_SQL = """
SELECT id, nombre, email, rol, tienda, region, administrador, activo
FROM encargados WHERE id = %(id)s
"""
INSERT_CAMBIO_SQL = """
INSERT INTO cambios_alta (quien, canal, objeto, objeto_id, accion, antes, despues)
VALUES (%(quien)s, %(canal)s, %(objeto)s, %(objeto_id)s, %(accion)s, %(antes)s, %(despues)s)
"""


def persona_de_fila(fila: Mapping[str, Any]) -> Persona:
    return Persona(id=fila["id"], nombre=fila["nombre"], rol=fila["rol"], tienda=fila["tienda"],
                   region=fila["region"], administrador=fila["administrador"], activo=fila["activo"],
                   email=fila["email"])


def gestor(conexion: psycopg.Connection, quien: str) -> Persona:
    """Quien actúa: una persona activa; si no, ``Prohibido``."""
    fila = conexion.execute(SELECT_PERSONA_SQL, {"id": quien}).fetchone()
    if fila is None or not fila["activo"]:
        raise Prohibido("Solo una persona de la tienda activa puede hacer cambios de alta.")
    return persona_de_fila(fila)


def anotar(conexion: psycopg.Connection, *, quien: str, canal: str, objeto: str, objeto_id: str,
           accion: str, antes: Mapping[str, Any] | None, despues: Mapping[str, Any] | None) -> None:
    """Una fila de ``cambios_alta``, en la transacción del cambio."""
    conexion.execute(INSERT_CAMBIO_SQL, {
        "quien": quien, "canal": canal if canal in CANALES else "web", "objeto": objeto,
        "objeto_id": objeto_id, "accion": accion,
        "antes": Jsonb(_json(antes)) if antes is not None else None,
        "despues": Jsonb(_json(despues)) if despues is not None else None,
    })


def _json(datos: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if v is None or isinstance(v, bool | int | str) else str(v)) for k, v in datos.items()}


def validar_id(valor: Any, que: str) -> str:
    """Un id del alta: minúsculas, cifras y guiones (``mi-tienda``, ``enc-mi-tienda``)."""
    texto_id = str(valor or "").strip()
    if not RE_ID.match(texto_id):
        raise DatosNoValidos(f"El id de {que} solo lleva minúsculas sin tildes, cifras y guiones "
                             f"(p. ej. «mi-tienda»), y empieza por una letra o una cifra.")
    return texto_id


def texto(valor: Any, campo: str, *, maximo: int = 100, opcional: bool = False) -> str | None:
    """Un texto de 1 a ``maximo`` caracteres, sin espacios de más; ``None`` si es opcional y falta."""
    limpio = " ".join(str(valor or "").split())
    if not limpio:
        if opcional:
            return None
        raise DatosNoValidos(f"Falta {campo}.")
    if len(limpio) > maximo or "\x00" in limpio:
        raise DatosNoValidos(f"{campo[0].upper()}{campo[1:]} tiene más de {maximo} caracteres.")
    return limpio
