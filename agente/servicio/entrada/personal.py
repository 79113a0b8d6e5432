"""Casar a una persona con ``encargados`` por su correo (verificado por el proveedor o por
el enlace que recibió). Nunca crea nada: desconocido o de baja, ``Prohibido``."""

from __future__ import annotations

import psycopg

from agente.servicio.personas import encargado_activo
from agente.servicio.resultados import Encargado
from nucleo.errores import Prohibido

__all__ = ["SELECT_POR_EMAIL_SQL", "encargado_por_email"]

SELECT_POR_EMAIL_SQL = "SELECT id FROM encargados WHERE lower(email) = lower(%(email)s)"


def encargado_por_email(conexion: psycopg.Connection, email: str) -> Encargado:
    """El encargado activo con ese correo; ``Prohibido`` (con un texto para la persona) si
    no hay ninguno o está de baja."""
    fila = conexion.execute(SELECT_POR_EMAIL_SQL, {"email": email.strip()}).fetchone()
    if fila is None:
        raise Prohibido(f"No hay ningún encargado con el correo {email}. Pide a tu tienda que lo den de alta.",
                        motivo="desconocido")
    try:
        return encargado_activo(conexion, fila["id"])
    except Prohibido:
        raise Prohibido(f"La cuenta de encargado de {email} está dada de baja: ya no puedes entrar en la bandeja.",
                        motivo="baja") from None
