"""Para la CLI: un hilo por su id completo o por un prefijo único, y a quién sugerir.

``agente aprobaciones`` enseña ids largos (``h-`` y 32 cifras hexadecimales); escribirlos
enteros es fácil de equivocar. Un prefijo basta si solo un hilo empieza así; si varios,
``DecisionNoValida`` con los candidatos (nunca se elige uno al azar).
"""

from __future__ import annotations

import psycopg

from nucleo.errores import DecisionNoValida, HiloNoEncontrado

__all__ = ["MIN_PREFIJO", "encargado_sugerido", "resolver_hilo"]

MIN_PREFIJO = 4

SELECT_POR_PREFIJO_SQL = """
SELECT thread_id FROM consultas_asistente
WHERE thread_id = %(id)s OR starts_with(thread_id, %(id)s)
ORDER BY thread_id = %(id)s DESC, thread_id
LIMIT 6
"""
SELECT_ENCARGADO_SUGERIDO_SQL = """
SELECT id FROM encargados WHERE tienda = %(tienda)s AND activo ORDER BY rol = 'encargado' DESC, id LIMIT 1
"""


def resolver_hilo(conexion: psycopg.Connection, id_o_prefijo: str) -> str:
    """El thread_id completo; ``HiloNoEncontrado`` o ``DecisionNoValida`` (ambiguo, corto)."""
    texto = (id_o_prefijo or "").strip()
    if not texto:
        raise DecisionNoValida("falta el id del hilo")
    filas = [f["thread_id"] for f in conexion.execute(SELECT_POR_PREFIJO_SQL, {"id": texto})]
    if filas and filas[0] == texto:
        return texto
    if len(texto) < MIN_PREFIJO:
        raise DecisionNoValida(f"el prefijo «{texto}» es demasiado corto: escribe al menos {MIN_PREFIJO} caracteres")
    if not filas:
        raise HiloNoEncontrado(f"ningún hilo empieza por «{texto}»")
    if len(filas) > 1:
        candidatos = ", ".join(filas[:5]) + (", ..." if len(filas) > 5 else "")
        raise DecisionNoValida(f"varios hilos empiezan por «{texto}»: {candidatos}; escribe más caracteres")
    return filas[0]


def encargado_sugerido(conexion: psycopg.Connection, tienda: str) -> str | None:
    """Un encargado activo de la tienda, para que la pista de la CLI funcione tal cual."""
    fila = conexion.execute(SELECT_ENCARGADO_SUGERIDO_SQL, {"tienda": tienda}).fetchone()
    return fila["id"] if fila else None
