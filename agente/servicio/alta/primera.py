"""``agente personas primera``: el primer administrador de una base nueva, una sola vez.

Solo si no hay ningún administrador ni ningún regional (con el candado de la tabla, dos a
la vez no crean dos). Devuelve el enlace de entrada (un uso, 15 minutos) que la orden
imprime: con él la persona entra (``agente entrar --enlace``, o abriéndolo en el
navegador) y da de alta lo demás. El cambio se anota con ``quien = 'operador'``.
"""

from __future__ import annotations

import psycopg

from agente.servicio.alta.personal import comprobar_datos, normalizar_email
from agente.servicio.alta.registro import anotar, texto, validar_id
from agente.servicio.alta.reglas import Persona
from agente.servicio.entrada.enlaces import EnlaceEntrada, emitir_enlace
from nucleo.errores import YaExiste

__all__ = ["OPERADOR", "primera_persona"]

OPERADOR = "operador"
CANDADO_SQL = "LOCK TABLE encargados IN SHARE ROW EXCLUSIVE MODE"
HAY_ADMINISTRADOR_SQL = """
SELECT id FROM encargados WHERE administrador OR rol = 'regional' ORDER BY id LIMIT 1
"""
INSERT_SQL = """
INSERT INTO encargados (id, nombre, email, rol, tienda, region, administrador)
VALUES (%(id)s, %(nombre)s, %(email)s, 'regional', NULL, NULL, true)
"""


def primera_persona(conexion: psycopg.Connection, *, nombre: str, email: str, id: str = "admin") -> EnlaceEntrada:
    """Crea el primer administrador y su enlace de entrada; ``YaExiste`` si ya hay alguien
    con rango de regional o más (entonces el alta la hace esa persona)."""
    persona = Persona(id=validar_id(id, "la persona"), nombre=texto(nombre, "el nombre de la persona"),
                      rol="regional", administrador=True, email=normalizar_email(email))
    with conexion.transaction():
        conexion.execute(CANDADO_SQL)
        ya = conexion.execute(HAY_ADMINISTRADOR_SQL).fetchone()
        if ya is not None:
            raise YaExiste(f"Ya hay un administrador o un regional ({ya['id']}): «agente personas primera» "
                           "solo vale en una base sin ninguno. Pídele a esa persona que te dé de alta.")
        comprobar_datos(conexion, persona)
        conexion.execute(INSERT_SQL, {"id": persona.id, "nombre": persona.nombre, "email": persona.email})
        anotar(conexion, quien=OPERADOR, canal="operador", objeto="persona", objeto_id=persona.id,
               accion="primera", antes=None,
               despues={"id": persona.id, "nombre": persona.nombre, "email": persona.email, "rol": "regional",
                        "administrador": True, "activo": True})
        return emitir_enlace(conexion, persona.id, persona.email, persona.nombre)
