"""Un proceso que muere a mitad de un reembolso (SIGKILL) no deja dinero movido dos veces.

El proceso hijo ejecuta ``reembolsar`` contra la base del test (``DATABASE_URL``) y se le
mata en el momento elegido, sondeando la base: con el reembolso ya confirmado como
'pendiente' y la pasarela aún sin responder, o con la pasarela ya respondida y el
reembolso sin marcar. Repetir la llamada con la misma clave en este proceso debe dejar
un solo movimiento y el reembolso 'emitido'.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from decimal import Decimal

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from caja.pasarela import PasarelaSimulada
from nucleo.contexto import ContextoCliente
from operaciones.reembolso.herramienta import reembolsar
from tests.apoyo.rutas import RAIZ

pytestmark = [pytest.mark.lento, pytest.mark.temporal]

ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
PEDIDO = "P-20260917-0041"
HILO, LLAMADA = "hilo-caida", "call-caida"

# El hijo: una pasarela lenta antes de responder ("antes") o después de apuntar el
# movimiento ("despues"); en los dos casos muere aquí dentro, durante la espera.
HIJO = f"""
import os, sys, time
from decimal import Decimal
from agente.bd.pool import abrir_pool
from nucleo.contexto import ContextoCliente
from caja.pasarela import PasarelaSimulada
from operaciones.reembolso.herramienta import reembolsar

pool = abrir_pool(os.environ["DATABASE_URL"], max_size=2)
momento = sys.argv[1]

class PasarelaQueSeCuelga(PasarelaSimulada):
    def emitir_reembolso(self, referencia, importe):
        movimiento = super().emitir_reembolso(referencia, importe)
        time.sleep(60)
        return movimiento

if momento == "antes":
    pasarela = PasarelaSimulada(pool=pool, retardo=Decimal("60"))
else:
    pasarela = PasarelaQueSeCuelga(pool=pool)
reembolsar(
    pool, contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
    thread_id={HILO!r}, tool_call_id={LLAMADA!r}, pedido={PEDIDO!r},
    importe=Decimal("120.00"), motivo="llegó rota", pasarela=pasarela,
)
print("el hijo terminó sin que lo mataran", flush=True)
"""

ESTADO_SQL = """
SELECT (SELECT estado FROM reembolsos WHERE clave_idempotencia = %(clave)s) AS estado,
       (SELECT count(*) FROM pasarela_movimientos) AS movimientos
"""


def _estado(url: str) -> dict:
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        return c.execute(ESTADO_SQL, {"clave": f"{HILO}:{LLAMADA}"}).fetchone()


def _esperar(url: str, proceso: subprocess.Popen, listo, *, limite: float = 30.0) -> dict:
    """Sondea la base hasta que ``listo(estado)``; el hijo tiene que seguir vivo."""
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        assert proceso.poll() is None, proceso.communicate()
        estado = _estado(url)
        if listo(estado):
            return estado
        time.sleep(0.05)
    raise AssertionError(f"el hijo no llegó al punto esperado: {_estado(url)}")


@pytest.mark.parametrize(
    ("momento", "listo", "movimientos_al_morir"),
    [
        # Reembolso confirmado 'pendiente', la pasarela aún no ha contestado.
        ("antes", lambda e: e["estado"] == "pendiente", 0),
        # La pasarela ya apuntó el movimiento, pero el reembolso sigue sin marcar.
        ("despues", lambda e: e["estado"] == "pendiente" and e["movimientos"] == 1, 1),
    ],
    ids=["antes-de-la-pasarela", "despues-de-la-pasarela"],
)
def test_reembolso_interrumpido_por_sigkill_se_completa_sin_duplicar_el_pago(
    pool, bd_url, momento, listo, movimientos_al_morir
):
    proceso = subprocess.Popen(
        [sys.executable, "-c", HIJO, momento],
        env={**os.environ, "DATABASE_URL": bd_url},
        cwd=RAIZ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        al_morir = _esperar(bd_url, proceso, listo)
        os.kill(proceso.pid, signal.SIGKILL)
        proceso.wait(timeout=30)
    finally:
        if proceso.poll() is None:
            proceso.kill()
            proceso.wait(timeout=30)
    assert proceso.returncode == -signal.SIGKILL
    assert al_morir == {"estado": "pendiente", "movimientos": movimientos_al_morir}
    assert _estado(bd_url) == al_morir  # muerto, no avanzó nada más

    resultado = reembolsar(
        pool, contexto=ANA, thread_id=HILO, tool_call_id=LLAMADA, pedido=PEDIDO,
        importe=Decimal("120.00"), motivo="llegó rota", pasarela=PasarelaSimulada(pool=pool),
    )

    assert (resultado["estado"], resultado["repetido"]) == ("emitido", True)
    with pool.connection() as c:
        reembolsos = c.execute("SELECT numero, estado, emitido_en FROM reembolsos").fetchall()
        movimientos = c.execute("SELECT referencia, importe FROM pasarela_movimientos").fetchall()
        devoluciones = c.execute(
            "SELECT count(*) AS n FROM devoluciones WHERE reembolso_id IS NOT NULL"
        ).fetchone()["n"]
    assert [(r["numero"], r["estado"]) for r in reembolsos] == [(resultado["reembolso"], "emitido")]
    assert reembolsos[0]["emitido_en"] is not None
    assert [(m["referencia"], m["importe"]) for m in movimientos] == [
        (resultado["reembolso"], Decimal("120.00"))
    ]
    assert devoluciones == 1
