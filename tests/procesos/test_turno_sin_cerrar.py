"""Un turno cuyo grafo terminó pero cuyo cierre no llegó a escribirse (la base se cayó justo
entre el último checkpoint y el cierre): el cliente recibe lo que pasó, y el conciliador
entrega la respuesta a la conversación una vez, con su aviso en vivo, sin repetir el
reembolso."""

from __future__ import annotations

import time

import psycopg
import pytest

from agente.bd import embebido
from agente.bd.migraciones import migrar
from agente.bd.pool import KWARGS_CONEXION
from agente.demo.carga import cargar_demo
from agente.servicio.conversaciones.mensajes import CANAL_NOTIFY
from tests.apoyo.fabricas import ajustes_prueba, consultar, conversacion, uno

DEVOLVER_SARTEN = "Quiero devolver la sartén del pedido P-20260920-0102 porque se pega"  # C-0002, sin firma


def _mensajes(bd_url: str, hilo: str) -> list[dict]:
    return consultar(bd_url, "SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(h)s ORDER BY id",
                     {"h": hilo})


def _reintentar(funcion, segundos: float = 60.0):
    """``funcion()`` en cuanto la base vuelve a responder (el pool tarda unos segundos)."""
    limite = time.monotonic() + segundos
    while True:
        try:
            return funcion()
        except psycopg.OperationalError:
            if time.monotonic() > limite:
                raise
            time.sleep(0.5)


@pytest.fixture
def base_propia(tmp_path):
    """Un PostgreSQL embebido solo para esta prueba: se para y se vuelve a arrancar."""
    pgdata = tmp_path / "pgdata"
    url = embebido.arrancar(pgdata).get_uri()
    migrar(url)
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        cargar_demo(conexion)
    yield pgdata, url
    embebido.detener(pgdata, forzar=True)


@pytest.mark.lento
@pytest.mark.temporal
def test_la_base_cae_entre_el_grafo_y_el_cierre_y_el_cliente_recibe_la_respuesta_una_vez(base_propia):
    from agente.servicio.fabrica import crear_servicio

    pgdata, url = base_propia
    servicio = crear_servicio(ajustes_prueba(url, pool_espera=1.0), url=url, pausa_reintentos=0.01)
    try:
        ejecutar = servicio.ejecutor.ejecutar

        def ejecutar_y_parar_la_base(*args, **kwargs):
            ejecucion = ejecutar(*args, **kwargs)  # el grafo terminó: su checkpoint está escrito
            embebido.detener(pgdata)  # ... y la base cae antes del cierre del turno
            return ejecucion

        servicio.ejecutor.ejecutar = ejecutar_y_parar_la_base
        ctx = servicio.contexto_de_cliente("C-0002")
        hilo = servicio.iniciar_conversacion(ctx)
        respuesta = servicio.conversar(hilo, DEVOLVER_SARTEN, ctx)
        servicio.ejecutor.ejecutar = ejecutar

        # El cliente sabe lo que pasó (nunca un 503 con el reembolso ya hecho).
        assert respuesta.estado == "respondida"
        assert "He tramitado el reembolso RE-" in respuesta.mensaje_cliente

        embebido.arrancar(pgdata)
        numero = _reintentar(lambda: uno(url, "SELECT numero FROM reembolsos"))
        assert numero in respuesta.mensaje_cliente
        assert [m["rol"] for m in _mensajes(url, hilo)] == ["cliente"]  # el cierre no se escribió

        with psycopg.connect(url, autocommit=True) as oyente:
            oyente.execute(f"LISTEN {CANAL_NOTIFY}")
            arreglos = _reintentar(servicio.reconciliar)
            avisos = [n.payload for n in oyente.notifies(timeout=5, stop_after=1)]
        assert {"thread_id": hilo, "accion": "turno_entregado"} in arreglos
        assert avisos == [hilo]  # el chat abierto lo recibe en vivo
        assert _mensajes(url, hilo) == [
            {"rol": "cliente", "texto": DEVOLVER_SARTEN},
            {"rol": "agente", "texto": respuesta.mensaje_cliente},
        ]
        assert uno(url, "SELECT count(*) FROM reembolsos") == 1
        assert uno(url, "SELECT count(*) FROM pasarela_movimientos") == 1
        assert uno(url, "SELECT estado FROM consultas_asistente") == "abierta"

        # Otra pasada (o la periódica) no añade nada.
        assert servicio.reconciliar() == []
        assert len(_mensajes(url, hilo)) == 2
        assert uno(url, "SELECT count(*) FROM reembolsos") == 1
    finally:
        servicio.cerrar()


def test_un_mensaje_anotado_cuyo_turno_no_empezo_no_recibe_otra_vez_la_respuesta_anterior(servicio, bd_url):
    # Un turno normal, cerrado; después el cliente repite el mismo texto, el mensaje se
    # anota y la ejecución no llega a empezar (la base cae antes del primer checkpoint).
    hilo, respuesta = conversacion(servicio, "C-0002", DEVOLVER_SARTEN)
    assert respuesta.estado == "respondida"
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("INSERT INTO mensajes_conversacion (thread_id, rol, texto) VALUES (%s, 'cliente', %s)",
                  (hilo, DEVOLVER_SARTEN))
    # El último checkpoint sigue siendo el del turno anterior, ya entregado: nada que entregar.
    assert servicio.reconciliar() == []
    assert [m["rol"] for m in _mensajes(bd_url, hilo)] == ["cliente", "agente", "cliente"]
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
