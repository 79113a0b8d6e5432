"""La demo se carga una sola vez, en una base vacía, y nunca revive el pasado.

``cargar_demo`` escribe encima: sobre una base ya usada devolvía a ``pendiente`` los
pedidos cancelados o reembolsados, y cancelarlos otra vez chocaba con su cancelación. Por
eso ``agente demo`` y ``agente db demo`` la cargan solo si la base no tiene tiendas, la
conservan tal cual si ya está, y solo la rehacen cuando se pide (``--reiniciar``), después
de decir lo que se borra. Con un servidor usando la base, ``agente db demo`` no hace nada.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg.rows import tuple_row

from agente.bd.migraciones import rehacer
from agente.bd.pool import APLICACION_SERVIDOR, KWARGS_CONEXION
from agente.demo.carga import cargar_demo
from agente.demo.catalogo import TIENDAS
from nucleo.errores import ErrorDominio

__all__ = ["Recuentos", "cargar_una_vez", "comprobar_sin_servidor", "recuentos", "reiniciar"]

# Dos arranques a la vez sobre una base vacía: el segundo espera al primero y ya ve la demo.
BLOQUEAR_TIENDAS_SQL = "LOCK TABLE tiendas IN SHARE ROW EXCLUSIVE MODE"
TIENDAS_SQL = "SELECT id FROM tiendas ORDER BY id"
# Lo que se perdería al reiniciar: los movimientos son el dinero y la mercancía que se movió.
RECUENTOS_SQL = """
SELECT (SELECT count(*) FROM pedidos) AS pedidos,
       (SELECT count(*) FROM consultas_asistente) AS conversaciones,
       (SELECT count(*) FROM reembolsos) + (SELECT count(*) FROM cobros)
       + (SELECT count(*) FROM sustituciones) + (SELECT count(*) FROM cancelaciones)
       + (SELECT count(*) FROM vales) + (SELECT count(*) FROM reenvios) AS movimientos
"""
# Las conexiones de un servidor web llevan APLICACION_SERVIDOR (agente.cli.servidor).
SERVIDORES_SQL = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = %(aplicacion)s
"""


def _contar(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


@dataclass(frozen=True)
class Recuentos:
    pedidos: int
    conversaciones: int
    movimientos: int

    def texto(self) -> str:
        return (f"{_contar(self.pedidos, 'pedido', 'pedidos')}, "
                f"{_contar(self.conversaciones, 'conversación', 'conversaciones')} y "
                f"{_contar(self.movimientos, 'movimiento', 'movimientos')}")


def recuentos(conexion: psycopg.Connection) -> Recuentos:
    with conexion.cursor(row_factory=tuple_row) as cur:
        return Recuentos(*cur.execute(RECUENTOS_SQL).fetchone())


def cargar_una_vez(conexion: psycopg.Connection) -> dict[str, int] | None:
    """Carga la demo si la base no tiene ninguna tienda; ``None`` si ya estaba (no toca nada).

    Una base con tiendas que no son de la demo es de una tienda de verdad: no se mezcla."""
    with conexion.transaction(), conexion.cursor(row_factory=tuple_row) as cur:
        cur.execute(BLOQUEAR_TIENDAS_SQL)
        tiendas = [fila[0] for fila in cur.execute(TIENDAS_SQL)]
        if not tiendas:
            return cargar_demo(conexion)
        if {i for i, _ in TIENDAS} & set(tiendas):
            return None
    raise ErrorDominio(
        f"la base ya tiene tiendas que no son de la demo ({', '.join(tiendas[:3])}): la demo "
        "solo se carga en una base vacía; usa otra (AGENTE_PGDATA o DATABASE_URL)"
    )


def comprobar_sin_servidor(conexion: psycopg.Connection) -> None:
    """``ErrorDominio`` si un servidor web (``agente serve`` o ``agente demo``) usa la base."""
    with conexion.cursor(row_factory=tuple_row) as cur:
        (servidores,) = cur.execute(SERVIDORES_SQL, {"aplicacion": APLICACION_SERVIDOR}).fetchone()
    if servidores:
        raise ErrorDominio(
            "un servidor («agente serve» o «agente demo») está usando esta base: páralo antes "
            "de cargar o reiniciar la demo; no se ha tocado nada"
        )


def reiniciar(url: str) -> dict[str, int]:
    """Borra todos los datos, vuelve a migrar y carga la demo. Devuelve los recuentos."""
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        comprobar_sin_servidor(conexion)  # pudo arrancar uno mientras se confirmaba
    rehacer(url)
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        return cargar_demo(conexion)
