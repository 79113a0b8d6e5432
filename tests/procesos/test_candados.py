"""Candados de hilo sobre una conexión propia por proceso (``agente.servicio.conversaciones.candados``).

Una ejecución por hilo a la vez entre hilos y entre procesos, sin ocupar conexiones del
pool; el hilo de un proceso muerto se puede tomar enseguida; y una conexión perdida anula
las tenencias en curso (*fencing*) en vez de dejar que dos ejecuciones se solapen.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from agente.servicio.conversaciones.candados import NOMBRE_APLICACION, CandadosHilo
from nucleo.claves_candado import ESPACIO_HILOS
from nucleo.errores import CandadoPerdido, HiloOcupado
from tests.apoyo.rutas import RAIZ

BLOQUEAR_SQL = "SELECT pg_advisory_lock(%s, hashtext(%s))"
TERMINAR_SQL = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s AND datname = current_database()"


@pytest.fixture
def candados(bd_url):
    c = CandadosHilo(conninfo=bd_url, latido=0.1)
    yield c
    c.cerrar()


def _conexiones_de_candados(bd_url) -> int:
    with psycopg.connect(bd_url, autocommit=True) as c:
        return c.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND datname = current_database()",
            (NOMBRE_APLICACION,),
        ).fetchone()[0]


def test_muchos_hilos_retenidos_a_la_vez_usan_una_sola_conexion(candados, bd_url):
    tenencias = [candados.tomar(f"h-{i}", esperar=1) for i in range(50)]
    assert all(tenencias)
    assert _conexiones_de_candados(bd_url) == 1
    with psycopg.connect(bd_url, autocommit=True) as otro:
        retenidos = otro.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s", (ESPACIO_HILOS,)
        ).fetchone()[0]
        assert retenidos == 50
        for t in tenencias:
            candados.soltar(t)
        assert otro.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s", (ESPACIO_HILOS,)
        ).fetchone()[0] == 0


def test_dos_hilos_del_proceso_sobre_la_misma_conversacion_se_excluyen(candados):
    # En una sesión el advisory lock es reentrante: la exclusión la hace el registro.
    dentro = []
    solapes = []

    def ejecucion(n):
        with candados.hilo("h-mismo", esperar=10):
            dentro.append(n)
            if len(dentro) > 1:
                solapes.append(tuple(dentro))
            time.sleep(0.05)
            dentro.remove(n)

    hilos = [threading.Thread(target=ejecucion, args=(n,)) for n in range(8)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=30)
    assert solapes == []
    with candados.hilo("h-mismo", esperar=0) as obtenido:
        assert obtenido
        with candados.hilo("h-mismo", esperar=0) as otra_vez:
            assert not otra_vez


def test_otro_proceso_con_el_hilo_hace_esperar_con_limite(candados, bd_url):
    with psycopg.connect(bd_url, autocommit=True) as otro:
        otro.execute(BLOQUEAR_SQL, (ESPACIO_HILOS, "h-ajeno"))
        with candados.hilo("h-ajeno", esperar=0) as obtenido:
            assert not obtenido
        inicio = time.monotonic()
        with pytest.raises(HiloOcupado, match="ocupada"):
            with candados.hilo("h-ajeno", esperar=0.5):
                pass
        assert 0.45 <= time.monotonic() - inicio < 3
        threading.Timer(0.3, lambda: otro.execute("SELECT pg_advisory_unlock_all()")).start()
        with candados.hilo("h-ajeno", esperar=5) as obtenido:
            assert obtenido


RETENEDOR = """
import sys, time
from agente.servicio.conversaciones.candados import CandadosHilo
c = CandadosHilo(conninfo=sys.argv[1])
assert c.tomar(sys.argv[2], esperar=5)
print("tengo", flush=True)
time.sleep(600)
"""


def test_el_hilo_de_un_proceso_muerto_se_toma_enseguida(candados, bd_url):
    proceso = subprocess.Popen([sys.executable, "-c", RETENEDOR, bd_url, "h-muerto"], cwd=RAIZ,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert proceso.stdout.readline().strip() == "tengo"
        with candados.hilo("h-muerto", esperar=0) as obtenido:
            assert not obtenido
        proceso.send_signal(signal.SIGKILL)
        proceso.wait(timeout=10)
        inicio = time.monotonic()
        with candados.hilo("h-muerto", esperar=10) as obtenido:
            assert obtenido
        assert time.monotonic() - inicio < 3  # sin esperar a ningún vencimiento
    finally:
        proceso.kill()
        proceso.wait(timeout=10)


# Cada proceso: 3 hilos que, en bucle, toman el candado del mismo hilo de conversación y
# anotan en la base el principio y el fin de su «ejecución» (reloj de la base).
EJECUTOR = """
import sys, threading, time, random, psycopg
from agente.servicio.conversaciones.candados import CandadosHilo
url, nombre = sys.argv[1], sys.argv[2]
c = CandadosHilo(conninfo=url)
def bucle(n):
    with psycopg.connect(url, autocommit=True) as bd:
        for _ in range(15):
            with c.hilo("h-compartido", esperar=60):
                fila = bd.execute("INSERT INTO t_ejecuciones (quien) VALUES (%s) RETURNING id",
                                  (f"{nombre}-{n}",)).fetchone()
                # p0 retiene el candado un buen rato: la prueba tiene que verlo dentro para
                # matarlo ahí, también con la máquina cargada (con 5-30 ms, a veces no llegaba).
                time.sleep(1.0 if nombre == "p0" else random.uniform(0.005, 0.03))
                bd.execute("UPDATE t_ejecuciones SET fin = clock_timestamp() WHERE id = %s", fila)
hilos = [threading.Thread(target=bucle, args=(n,)) for n in range(3)]
for h in hilos: h.start()
print("en marcha", flush=True)
for h in hilos: h.join()
"""


@pytest.mark.lento
def test_dos_ejecuciones_de_un_hilo_nunca_se_solapan_ni_matando_a_un_proceso(bd_url):
    with psycopg.connect(bd_url, autocommit=True) as bd:
        bd.execute("CREATE TABLE t_ejecuciones (id serial PRIMARY KEY, quien text NOT NULL, "
                   "inicio timestamptz NOT NULL DEFAULT clock_timestamp(), fin timestamptz)")
        procesos = [subprocess.Popen([sys.executable, "-c", EJECUTOR, bd_url, f"p{i}"], cwd=RAIZ,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    for i in range(3)]
        for p in procesos:
            assert p.stdout.readline().strip() == "en marcha"
        # Matamos a p0 mientras retiene el candado (una fila suya sin fin).
        limite = time.monotonic() + 60
        while bd.execute("SELECT count(*) FROM t_ejecuciones WHERE quien LIKE 'p0-%%' AND fin IS NULL"
                         ).fetchone()[0] == 0:
            assert time.monotonic() < limite, "p0 nunca llegó a retener el candado"
            time.sleep(0.002)
        # Antes de matarlo: tras la señal, otro podría empezar antes de que leyéramos la hora.
        muerte = bd.execute("SELECT clock_timestamp()").fetchone()[0]
        procesos[0].send_signal(signal.SIGKILL)
        for p in procesos[1:]:
            _, error = p.communicate(timeout=180)
            assert p.returncode == 0, error
        procesos[0].wait(timeout=10)
        filas = bd.execute("SELECT quien, inicio, coalesce(fin, %s) FROM t_ejecuciones ORDER BY inicio",
                           (muerte,)).fetchall()
    assert sum(q.startswith("p1") for q, _, _ in filas) == 45 and sum(q.startswith("p2") for q, _, _ in filas) == 45
    for (quien_a, _, fin_a), (quien_b, inicio_b, _) in zip(filas, filas[1:], strict=False):
        assert inicio_b >= fin_a, f"{quien_b} empezó antes de que {quien_a} terminara"


def test_una_conexion_perdida_anula_la_tenencia_y_otro_puede_seguir_al_soltarla(candados, bd_url):
    tenencia = candados.tomar("h-fenced", esperar=1)
    candados.comprobar("h-fenced")  # vigente: no lanza
    with psycopg.connect(bd_url, autocommit=True) as otro:
        otro.execute(TERMINAR_SQL, (NOMBRE_APLICACION,))
        limite = time.monotonic() + 5
        while True:
            try:
                candados.comprobar("h-fenced")
            except CandadoPerdido:
                break
            assert time.monotonic() < limite, "la pérdida no se detectó"
            time.sleep(0.05)
        # El vigilante reconecta y vuelve a retener el hilo mientras la ejecución anulada acaba.
        limite = time.monotonic() + 5
        while otro.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, "h-fenced")).fetchone()[0]:
            otro.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (ESPACIO_HILOS, "h-fenced"))
            assert time.monotonic() < limite, "no se volvió a retener el hilo anulado"
            time.sleep(0.05)
        candados.soltar(tenencia)
        assert otro.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, "h-fenced")).fetchone()[0]
        otro.execute("SELECT pg_advisory_unlock_all()")
    with candados.hilo("h-fenced", esperar=1) as obtenido:  # una tenencia nueva vale
        assert obtenido
        candados.comprobar("h-fenced")
