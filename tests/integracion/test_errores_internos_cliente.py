"""Un error interno de una herramienta nunca llega al cliente con su texto de dentro.

Antes, cancelar otra vez un pedido que la demo había «revivido» chocaba con la clave única
de su cancelación y el cliente leía «…por un problema interno… pide disculpas al cliente»,
una instrucción para el modelo. Aquí se fuerzan esos caminos en el chat de verdad (modelo
offline, servicio completo) y se mira lo que lee el cliente.
"""

from __future__ import annotations

import logging
import re

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.demo.carga import cargar_demo
from agente.modelo_offline import ModeloOffline
from agente.servicio.fabrica import crear_servicio
from herramientas import pedidos
from tests.apoyo.fabricas import ajustes_prueba, conversacion, uno

CANCELABLE = "P-20261008-0201"  # C-0002, 25,00 EUR, pendiente: se cancela sin firma
SEGUIMIENTO = "P-20260925-0150"  # C-0004, aún no entregado
TEXTO_SEGURO = "ha fallado algo en nuestro sistema"
# Lo que es para el modelo o para un ingeniero: la instrucción, el cliente en tercera
# persona, el prefijo de error de la herramienta, nombres de excepción y SQL.
PROHIBIDO = re.compile(
    r"disculpas|\bcliente\b|problema interno|Error:|Traceback|Violation|duplicate|constraint|_pkey"
    r"|psycopg|Exception|KeyError|RuntimeError|\bINSERT\b|\bSELECT\b|\bUPDATE\b",
    re.IGNORECASE,
)
DUPLICADA = psycopg.errors.UniqueViolation(
    'duplicate key value violates unique constraint "cancelaciones_pkey" '
    "DETAIL: Key (pedido_id)=(P-20261008-0201) already exists. INSERT INTO cancelaciones"
)


def _servicio(bd_url):
    return crear_servicio(ajustes_prueba(bd_url), url=bd_url, modelo=ModeloOffline(), pausa_reintentos=0.01)


def _sin_texto_interno(texto: str) -> None:
    assert not PROHIBIDO.search(texto), texto
    assert texto.rstrip().endswith((".", "?")), texto


def test_cancelar_otra_vez_un_pedido_revivido_da_un_texto_para_el_cliente(bd_url, caplog):
    """El camino real del fallo: la recarga de antes devolvía el pedido a «pendiente» con su
    cancelación dentro, y la segunda cancelación rompía la clave única."""
    servicio = _servicio(bd_url)
    try:
        _, primera = conversacion(servicio, "C-0002", f"Quiero cancelar el pedido {CANCELABLE}")
        assert uno(bd_url, "SELECT estado FROM pedidos WHERE id = %(p)s", {"p": CANCELABLE}) == "cancelado", \
            primera.mensaje_cliente
        with psycopg.connect(bd_url, **KWARGS_CONEXION) as conexion:
            cargar_demo(conexion)  # lo que hacía reiniciar la demo: revive el pedido
        assert uno(bd_url, "SELECT estado FROM pedidos WHERE id = %(p)s", {"p": CANCELABLE}) == "pendiente"
        with caplog.at_level(logging.ERROR):
            _, segunda = conversacion(servicio, "C-0002", f"Quiero cancelar el pedido {CANCELABLE}")
    finally:
        servicio.cerrar()
    # De verdad fue un error interno (la clave única), no un rechazo de negocio.
    assert any("error inesperado en la herramienta" in r.getMessage() for r in caplog.records)
    assert TEXTO_SEGURO in segunda.mensaje_cliente
    _sin_texto_interno(segunda.mensaje_cliente)
    assert uno(bd_url, "SELECT count(*) FROM cancelaciones WHERE pedido_id = %(p)s", {"p": CANCELABLE}) == 1


@pytest.mark.parametrize("error", [DUPLICADA, RuntimeError("SELECT * FROM pedidos falló: KeyError 'importe'")],
                         ids=["clave_unica", "excepcion"])
def test_una_herramienta_que_revienta_da_un_texto_para_el_cliente(bd_url, monkeypatch, caplog, error):
    def revienta(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(pedidos, "consultar_pedido", revienta)
    servicio = _servicio(bd_url)
    try:
        with caplog.at_level(logging.ERROR):
            _, respuesta = conversacion(servicio, "C-0004", f"¿Dónde está mi pedido {SEGUIMIENTO}?")
    finally:
        servicio.cerrar()
    assert any("error inesperado en la herramienta consultar_pedido" in r.getMessage() for r in caplog.records)
    assert TEXTO_SEGURO in respuesta.mensaje_cliente
    _sin_texto_interno(respuesta.mensaje_cliente)


def test_la_pasarela_que_revienta_al_cancelar_no_filtra_nada(bd_url):
    class PasarelaRota:
        def emitir_reembolso(self, referencia, importe):
            raise DUPLICADA

        cobrar = emitir_reembolso

    servicio = crear_servicio(ajustes_prueba(bd_url), url=bd_url, modelo=ModeloOffline(),
                              pasarela=PasarelaRota(), pausa_reintentos=0.01)
    try:
        _, respuesta = conversacion(servicio, "C-0002", f"Quiero cancelar el pedido {CANCELABLE}")
    finally:
        servicio.cerrar()
    _sin_texto_interno(respuesta.mensaje_cliente)
