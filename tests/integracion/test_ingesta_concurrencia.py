"""Dos envíos iguales a la vez de un registro que aún no existe: los dos ven que no hay nada,
pero solo uno crea la versión; el otro (que espera a que el primero confirme) es
``sin_cambios``. Un cuerpo distinto a la vez sí es la versión 2."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.aplicar import aplicar_cliente
from agente.servicio.tienda.registros import DatosCliente
from tests.apoyo.fabricas import consultar


@pytest.mark.parametrize("nombre_segundo, esperado", [("Ana", ("sin_cambios", 1)), ("Ana María", ("actualizado", 2))])
def test_dos_envios_a_la_vez_del_mismo_registro_nuevo(bd_url, nombre_segundo, esperado):
    resultados = {}
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as a, psycopg.connect(bd_url, **KWARGS_CONEXION) as b:
        with a.transaction(), a.cursor() as cur_a:
            resultados["a"] = aplicar_cliente(cur_a, "talavera", "C-8001", DatosCliente(nombre="Ana"))

            def segundo():
                with b.transaction(), b.cursor() as cur_b:
                    resultados["b"] = aplicar_cliente(cur_b, "talavera", "C-8001", DatosCliente(nombre=nombre_segundo))

            hilo = threading.Thread(target=segundo)
            hilo.start()
            time.sleep(0.5)  # B ya vio que no había versión y espera a la fila del cliente
            assert hilo.is_alive()
        hilo.join(10)
    assert (resultados["a"].resultado, resultados["a"].version) == ("creado", 1)
    assert (resultados["b"].resultado, resultados["b"].version) == esperado
    versiones = consultar(bd_url, "SELECT version FROM ingesta_versiones WHERE id = 'C-8001' ORDER BY version")
    assert [v["version"] for v in versiones] == list(range(1, esperado[1] + 1))
