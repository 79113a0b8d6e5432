"""Ninguna conversación de una prueba termina con el agente diciendo algo que no pasó.

``comprobar_afirmaciones(request, url)`` lo usan ``bd_url`` y ``bd_vacia_url`` al acabar:
lee todos los mensajes del agente de la base del test (``agente.servicio.afirmaciones_falsas``)
y suspende el test si alguno afirma un efecto que no está en la base de su conversación.
Una prueba que lo hace a propósito lleva ``@pytest.mark.afirmaciones_falsas``.

Trampa: una base que la prueba dejó sin esas tablas (migraciones a medias, esquema tocado)
no tiene qué comprobar; cualquier otro error sí sale.
"""

from __future__ import annotations

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION

__all__ = ["MARCA", "comprobar_afirmaciones"]

MARCA = "afirmaciones_falsas"


def comprobar_afirmaciones(request: pytest.FixtureRequest, url: str) -> None:
    if request.node.get_closest_marker(MARCA):
        return
    from agente.servicio.auditoria.verdad import afirmaciones_falsas

    try:
        with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
            falsas = afirmaciones_falsas(conexion)
    except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn):
        return
    if falsas:
        detalle = "\n".join(f"- {f['thread_id']} [{f['hallazgo']}] «{f['frase']}»: {f['detalle']}" for f in falsas)
        pytest.fail(f"el agente afirmó {len(falsas)} cosa(s) que no pasaron:\n{detalle}", pytrace=False)
