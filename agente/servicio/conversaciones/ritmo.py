"""Ritmo de mensajes por cliente (el 429 de la web), contado en la base de datos.

Cada petición que pasa el ritmo deja su fila en ``ritmo_mensajes`` (``sql/035_ritmos.sql``)
en la misma transacción que la cuenta, bajo el candado del ritmo de ese cliente
(``CANDADO_RITMO_SQL``): lo que se cuenta y lo que se gasta van juntos, así que el límite
vale igual con peticiones a la vez y para todos los procesos y servidores que comparten la
base. Antes se contaban los mensajes ya guardados, que el turno guarda más tarde: con
varias peticiones a la vez pasaban todas (issue 39). Cuenta la petición que pasa, acabe
como acabe el turno (un 409 por hilo ocupado también gasta).
"""

from __future__ import annotations

import psycopg

from nucleo.claves_candado import CANDADO_RITMO_SQL
from nucleo.errores import DemasiadasPeticiones

__all__ = ["VENTANA_SEGUNDOS", "barrer_ritmos", "comprobar_ritmo"]

VENTANA_SEGUNDOS = 60

# Cuenta, anota si cabe y borra lo viejo, en una sentencia: la siguiente al candado, así
# que ve lo que confirmó la petición a la que se esperó (docs/trampas.md). Con
# ``clock_timestamp()``, no ``now()``: ``now()`` es el inicio de la transacción, de antes
# de esperar.
ANOTAR_SI_CABE_SQL = """
WITH cuenta AS (
    SELECT count(*) AS n, min(creado) AS primera FROM ritmo_mensajes
    WHERE cliente_id = %(cliente_id)s AND creado > clock_timestamp() - make_interval(secs => %(ventana)s)
), anotada AS (
    INSERT INTO ritmo_mensajes (cliente_id, creado)
    SELECT %(cliente_id)s, clock_timestamp() FROM cuenta WHERE cuenta.n < %(maximo)s
    RETURNING id
), viejas AS (
    DELETE FROM ritmo_mensajes
    WHERE cliente_id = %(cliente_id)s AND creado < clock_timestamp() - make_interval(secs => 2 * %(ventana)s)
)
SELECT cuenta.n, EXISTS (SELECT 1 FROM anotada) AS anotada,
       extract(epoch FROM cuenta.primera + make_interval(secs => %(ventana)s) - clock_timestamp()) AS espera
FROM cuenta
"""

# Lo que ya no cuenta, de todos los clientes (la pasada periódica): sin ella, quedarían
# las filas de quien no vuelve a escribir.
BARRER_VIEJAS_SQL = """
DELETE FROM ritmo_mensajes WHERE creado < clock_timestamp() - make_interval(secs => 2 * %(ventana)s)
"""


def comprobar_ritmo(conexion: psycopg.Connection, cliente_id: str, maximo: int) -> None:
    """Anota la petición si el cliente no llegó a ``maximo`` en la ventana; si llegó,
    ``DemasiadasPeticiones`` (con ``reintentar_en``) y no anota nada."""
    parametros = {"cliente_id": cliente_id, "ventana": VENTANA_SEGUNDOS, "maximo": maximo}
    with conexion.transaction():
        conexion.execute(CANDADO_RITMO_SQL, {"clave": f"mensajes:{cliente_id}"})
        fila = conexion.execute(ANOTAR_SI_CABE_SQL, parametros).fetchone()
    if not fila["anotada"]:
        espera = max(1, int(float(fila["espera"] or VENTANA_SEGUNDOS)) + 1)
        raise DemasiadasPeticiones(
            f"has enviado demasiados mensajes seguidos (máximo {maximo} por minuto): "
            f"espera {espera} segundos y vuelve a intentarlo",
            reintentar_en=espera,
        )


def barrer_ritmos(conexion: psycopg.Connection) -> int:
    """Borra las anotaciones que ya no cuentan para ningún cliente; devuelve cuántas."""
    return conexion.execute(BARRER_VIEJAS_SQL, {"ventana": VENTANA_SEGUNDOS}).rowcount
