"""Las historias del libro a través del servicio (agente completo, modelo offline).

Cada una falló en la versión anterior: un reembolso y un cambio de la misma unidad salían
solos, un pedido sin entregar se cambiaba, un reembolso con la pasarela caída quedaba
prometido y nunca pagado.
"""

from __future__ import annotations

import pytest

from agente.servicio.fabrica import crear_servicio
from tests.apoyo.fabricas import PasarelaAveriable, ajustes_prueba, consultar, conversacion, uno

SARTEN = "P-20260920-0102"  # C-0002, MEN-001 24,90 EUR, entregado hace 3 días


@pytest.fixture
def averiable(pool):
    from caja.pasarela import PasarelaSimulada

    return PasarelaAveriable(PasarelaSimulada(pool=pool))


@pytest.fixture
def servicio_averiable(bd_url, averiable):
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=averiable, pausa_reintentos=0.01)
    yield s
    s.cerrar()


def _sin_hallazgos(servicio):
    from agente.servicio.auditoria.informe import hallazgos

    informe = servicio.auditoria(pendientes_mas_de_segundos=0)
    assert hallazgos(informe) == 0, informe


def test_reembolso_y_despues_cambio_del_mismo_pedido_no_salen_los_dos_solos(servicio_averiable, bd_url):
    s = servicio_averiable
    hilo, r = conversacion(s, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    assert r.estado == "respondida" and "RE-" in r.mensaje_cliente
    r = s.conversar(hilo, f"Mejor cámbiame la sartén del pedido {SARTEN} por la MEN-003", s.contexto_de_cliente("C-0002"))
    # O lo rechaza la herramienta (la unidad ya está reembolsada) o espera a un encargado.
    assert uno(bd_url, "SELECT count(*) FROM sustituciones WHERE estado <> 'anulada'") == 0
    if r.estado == "esperando_aprobacion":
        motivos = s.aprobacion(hilo)["motivos"]
        assert any("ya tuvo 1 reembolso" in m for ms in motivos for m in ms), motivos
        s.decidir(hilo, "enc-talavera", [{"type": "approve"}])
        assert uno(bd_url, "SELECT count(*) FROM sustituciones WHERE estado <> 'anulada'") == 0
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1
    _sin_hallazgos(s)


def test_cambio_de_un_pedido_sin_entregar_se_rechaza_sin_pausa_ni_fila(servicio_averiable, bd_url):
    hilo, r = conversacion(servicio_averiable, "C-0004",
                           "Quiero cambiar el producto del pedido P-20260925-0150 por otro")
    assert r.estado == "respondida"
    assert "entregado" in r.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0


def test_con_la_pasarela_caida_el_reembolso_queda_pendiente_y_el_sistema_lo_completa_y_avisa(
    servicio_averiable, averiable, bd_url
):
    s = servicio_averiable
    averiable.caida = True
    hilo, r = conversacion(s, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    assert r.estado == "respondida"
    assert "pendiente" in r.mensaje_cliente and "emitido" not in r.mensaje_cliente
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "pendiente"
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 0

    # Sigue caída: la pasada reintenta, nada se mueve y nadie recibe un aviso falso.
    informe = s.completar_movimientos(solo_vencidos=False)
    assert informe.fallidos and not informe.completados and not informe.avisados

    averiable.caida = False
    informe = s.completar_movimientos(solo_vencidos=False)
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert informe.completados == (numero,) and informe.avisados == (numero,)
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1
    ultimo = consultar(bd_url, "SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(h)s "
                               "ORDER BY id DESC LIMIT 1", {"h": hilo})[0]
    assert ultimo["rol"] == "agente" and numero in ultimo["texto"]
    # Otra pasada no paga ni avisa dos veces.
    assert not s.completar_movimientos(solo_vencidos=False)
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1
    _sin_hallazgos(s)


def test_la_pasada_periodica_completa_los_movimientos(servicio_averiable, averiable, bd_url):
    from agente.servicio.periodicas import una_pasada

    averiable.caida = True
    conversacion(servicio_averiable, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    averiable.caida = False
    with __import__("psycopg").connect(bd_url, autocommit=True) as c:  # vence ya el próximo intento
        c.execute("UPDATE reembolsos SET proximo_intento = now() - interval '1 second'")
    informe = una_pasada(servicio_averiable)
    assert informe["movimientos"].completados
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"


def test_la_auditoria_de_la_cli_sale_con_1_ante_un_movimiento_sin_asiento(bd_url):
    import os
    import subprocess
    import sys

    from tests.apoyo.rutas import RAIZ

    entorno = {**os.environ, "DATABASE_URL": bd_url}
    ok = subprocess.run([sys.executable, "-m", "agente.cli", "auditoria"], cwd=RAIZ, env=entorno,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    with __import__("psycopg").connect(bd_url, autocommit=True) as c:
        c.execute("INSERT INTO pasarela_movimientos (referencia, importe, tipo) VALUES ('RE-999999', 5, 'reembolso')")
    mal = subprocess.run([sys.executable, "-m", "agente.cli", "auditoria"], cwd=RAIZ, env=entorno,
                         capture_output=True, text=True, timeout=120)
    assert mal.returncode == 1
    assert "RE-999999" in mal.stdout


def test_cambio_a_una_mas_barata_devuelve_la_diferencia_una_vez_y_el_cliente_lo_lee(servicio_averiable, bd_url):
    hilo, r = conversacion(servicio_averiable, "C-0001",
                           "Quiero cambiar la cafetera del pedido P-20260917-0041 por una más barata", "Sí")
    # Devuelve 90,10 EUR, más que el límite de reembolso sin firma (60,00): firma un encargado.
    assert r.estado == "esperando_aprobacion", r.mensaje_cliente
    assert consultar(bd_url, "SELECT numero FROM reembolsos") == []
    r = servicio_averiable.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert r.estado == "respondida", r.mensaje_cliente
    (reembolso,) = consultar(bd_url, "SELECT numero, importe, estado, concepto FROM reembolsos")
    assert reembolso["concepto"] == "diferencia" and reembolso["estado"] == "emitido"
    (movimiento,) = consultar(bd_url, "SELECT referencia, importe, tipo FROM pasarela_movimientos")
    assert (movimiento["referencia"], movimiento["importe"], movimiento["tipo"]) == (
        reembolso["numero"], reembolso["importe"], "reembolso")
    assert f"Te hemos devuelto la diferencia, {reembolso['importe']:.2f}".replace(".", ",") in r.mensaje_cliente
    assert reembolso["numero"] in r.mensaje_cliente
    _sin_hallazgos(servicio_averiable)
