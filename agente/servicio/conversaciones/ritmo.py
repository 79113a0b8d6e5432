"""Ritmo de mensajes por cliente (el 429 de la web), contado en la base de datos.

Se cuentan los mensajes del cliente ya guardados: el límite vale para todos los
procesos y servidores que comparten la base de datos, sin tabla propia. Dos peticiones
simultáneas pueden pasar las dos con el contador en el límite (como mucho una por
proceso de más): es un freno contra abusos, no una cuota exacta.
"""

from __future__ import annotations

import psycopg

from agente.nucleo.errores import DemasiadasPeticiones

__all__ = ["comprobar_ritmo"]

CONTAR_MENSAJES_RECIENTES_SQL = """
SELECT count(*) AS n, extract(epoch FROM min(m.creado) + interval '1 minute' - now()) AS espera
FROM mensajes_conversacion m
JOIN consultas_asistente c ON c.thread_id = m.thread_id
WHERE c.cliente_id = %(cliente_id)s AND m.rol = 'cliente'
  AND m.creado > now() - interval '1 minute'
"""


def comprobar_ritmo(conexion: psycopg.Connection, cliente_id: str, maximo: int) -> None:
    """``DemasiadasPeticiones`` (con ``reintentar_en``) si el cliente ya llegó a ``maximo``."""
    fila = conexion.execute(CONTAR_MENSAJES_RECIENTES_SQL, {"cliente_id": cliente_id}).fetchone()
    if fila["n"] >= maximo:
        espera = max(1, int(float(fila["espera"] or 60)) + 1)
        raise DemasiadasPeticiones(
            f"has enviado demasiados mensajes seguidos (máximo {maximo} por minuto): "
            f"espera {espera} segundos y vuelve a intentarlo",
            reintentar_en=espera,
        )
