"""La demo nunca revive el pasado: se carga una vez en una base vacía, reiniciar
``agente demo`` o ``agente db demo`` conserva lo que pasó, ``agente db demo`` no hace nada
con un servidor usando la base, y ``--reiniciar`` dice lo que borra antes de borrarlo."""

from __future__ import annotations

import psycopg
import pytest
from typer.testing import CliRunner

from agente.bd.pool import APLICACION_SERVIDOR, KWARGS_CONEXION
from agente.cli import app
from agente.cli import servidor as cli_servidor
from agente.modelo_offline import ModeloOffline
from agente.servicio.fabrica import crear_servicio
from nucleo.ajustes import ajustes
from tests.apoyo.fabricas import ajustes_prueba, conversacion, uno

CANCELABLE = "P-20261008-0201"  # C-0002, 25,00 EUR, pendiente: se cancela sin firma
ESTADO_SQL = "SELECT estado FROM pedidos WHERE id = %(p)s"
CANCELACIONES_SQL = "SELECT count(*) FROM cancelaciones WHERE pedido_id = %(p)s"


@pytest.fixture
def cli(bd_vacia_url, monkeypatch):
    """La CLI de verdad sobre una base migrada y vacía; ``agente demo`` sin levantar la web."""
    monkeypatch.setenv("DATABASE_URL", bd_vacia_url)
    # «agente demo» los fija en el entorno: que vuelvan a su valor al acabar.
    monkeypatch.setenv("AGENTE_DEMO", "1")
    monkeypatch.setenv("AGENTE_MODELO", "offline")
    servidos = []
    monkeypatch.setattr(cli_servidor, "_servir", lambda *a, **k: servidos.append(a))
    ajustes.cache_clear()

    def ejecutar(*orden: str, entrada: str | None = None):
        ajustes.cache_clear()
        return CliRunner().invoke(app, list(orden), input=entrada)

    ejecutar.servidos = servidos
    yield ejecutar
    ajustes.cache_clear()


def _cancelar(url: str) -> str:
    servicio = crear_servicio(ajustes_prueba(url), url=url, modelo=ModeloOffline(), pausa_reintentos=0.01)
    try:
        _, respuesta = conversacion(servicio, "C-0002", f"Quiero cancelar el pedido {CANCELABLE}")
    finally:
        servicio.cerrar()
    return respuesta.mensaje_cliente


def test_reiniciar_la_demo_tras_una_cancelacion_la_conserva_y_la_auditoria_sigue_limpia(bd_vacia_url, cli):
    import os

    antes = dict(os.environ)
    r = cli("demo")
    assert r.exit_code == 0, r.output
    # Las piezas de la demo (buzón, OIDC, Stripe) no dejan sus variables en el proceso que la llamó.
    assert {k: v for k, v in os.environ.items() if antes.get(k) != v} == {}
    assert "ya estaba cargada" not in r.output and len(cli.servidos) == 1
    assert uno(bd_vacia_url, ESTADO_SQL, {"p": CANCELABLE}) == "pendiente"
    texto = _cancelar(bd_vacia_url)
    assert uno(bd_vacia_url, ESTADO_SQL, {"p": CANCELABLE}) == "cancelado", texto

    # Reiniciar por los dos caminos: el arranque de «agente demo» y «agente db demo».
    r = cli("demo")
    assert r.exit_code == 0, r.output
    assert "La demo ya estaba cargada: se conserva lo que ha pasado" in r.output
    r = cli("db", "demo")
    assert r.exit_code == 0, r.output
    assert "La demo ya estaba cargada y se conserva tal cual (" in r.output
    assert "1 conversación" in r.output and "agente db demo --reiniciar" in r.output

    assert uno(bd_vacia_url, ESTADO_SQL, {"p": CANCELABLE}) == "cancelado"
    assert uno(bd_vacia_url, CANCELACIONES_SQL, {"p": CANCELABLE}) == 1
    auditoria = cli("auditoria")
    assert auditoria.exit_code == 0, auditoria.output
    # Pedirlo otra vez tiene una respuesta de negocio, no la clave única de antes.
    otra = _cancelar(bd_vacia_url)
    assert "ya está cancelado" in otra and "sistema" not in otra, otra
    assert uno(bd_vacia_url, CANCELACIONES_SQL, {"p": CANCELABLE}) == 1


def test_db_demo_se_niega_mientras_un_servidor_usa_la_base(bd_vacia_url, cli):
    assert cli("db", "demo").exit_code == 0
    with psycopg.connect(bd_vacia_url, application_name=APLICACION_SERVIDOR):
        for orden in (("db", "demo"), ("db", "demo", "--reiniciar", "--si")):
            r = cli(*orden)
            assert r.exit_code == 2, (orden, r.output)
            assert r.output.startswith("Error: un servidor («agente serve» o «agente demo») está usando esta base"), r.output
            assert "no se ha tocado nada" in r.output
    assert uno(bd_vacia_url, "SELECT count(*) FROM tiendas") == 2
    assert cli("db", "demo").exit_code == 0  # parado el servidor, vuelve a responder


def test_db_demo_reiniciar_dice_lo_que_borra_y_pide_confirmacion(bd_vacia_url, cli):
    assert cli("db", "demo").exit_code == 0
    _cancelar(bd_vacia_url)
    pedidos = uno(bd_vacia_url, "SELECT count(*) FROM pedidos")

    r = cli("db", "demo", "--reiniciar", entrada="n\n")
    assert r.exit_code == 1, r.output
    assert f"Se borrarán todos los datos de la base ({pedidos} pedidos, 1 conversación y 2 movimientos)" in r.output
    assert "Cancelado: no se ha borrado nada." in r.output
    assert uno(bd_vacia_url, ESTADO_SQL, {"p": CANCELABLE}) == "cancelado"

    r = cli("db", "demo", "--reiniciar", "--si")
    assert r.exit_code == 0, r.output
    assert "Demo cargada:" in r.output and "¿Continuar?" not in r.output
    assert uno(bd_vacia_url, ESTADO_SQL, {"p": CANCELABLE}) == "pendiente"
    assert uno(bd_vacia_url, "SELECT count(*) FROM consultas_asistente") == 0
    assert uno(bd_vacia_url, CANCELACIONES_SQL, {"p": CANCELABLE}) == 0


def test_la_demo_no_se_mezcla_con_una_tienda_de_verdad(bd_vacia_url, cli):
    with psycopg.connect(bd_vacia_url, **KWARGS_CONEXION) as conexion:
        conexion.execute("INSERT INTO tiendas (id, nombre) VALUES ('mi-tienda', 'Mi tienda')")
    r = cli("db", "demo")
    assert r.exit_code == 2, r.output
    assert "la base ya tiene tiendas que no son de la demo (mi-tienda)" in r.output
    assert uno(bd_vacia_url, "SELECT count(*) FROM tiendas") == 1


def test_dos_arranques_a_la_vez_sobre_una_base_vacia_cargan_la_demo_una_sola_vez(bd_vacia_url):
    from agente.demo.una_vez import cargar_una_vez
    from tests.apoyo.a_la_vez import a_la_vez

    def cargar():
        with psycopg.connect(bd_vacia_url, **KWARGS_CONEXION) as c:
            return cargar_una_vez(c)

    resultados = a_la_vez([cargar] * 3)
    assert not any(isinstance(r, BaseException) for r in resultados), resultados
    assert sum(r is not None for r in resultados) == 1, resultados
    assert uno(bd_vacia_url, "SELECT count(*) FROM tiendas") == 2
    assert uno(bd_vacia_url, "SELECT count(*) FROM pedidos") > 0
