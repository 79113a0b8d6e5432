"""Todo turno que empieza acaba contestado (issue 39, punto 5).

Un proceso que atiende un turno muere con SIGKILL justo en el primer checkpoint del turno.
En 2 de 39 caídas de un servidor de verdad el momento caía tras las escrituras de ese
primer checkpoint: el grafo queda con el mensaje del cliente y sin ``next``, la
transcripción solo tiene el mensaje del cliente, ``agente reconciliar`` decía «Todo en
orden» y la conversación seguía ``abierta`` para siempre. El hijo se mata a sí mismo en
ese punto (y en los dos de al lado); tras las primeras escrituras, el checkpoint del paso
siguiente puede haberse escrito ya o no (LangGraph escribe desde otro hilo), así que ese
caso se repite, en conversaciones nuevas, hasta dar con la ventana: el grafo con el
mensaje del cliente y sin ``next``. Las conversaciones fallidas se cierran y no cuentan.

Tras la gracia, ``agente reconciliar`` termina el turno como uno normal: la respuesta en
la transcripción, una sola cancelación, un solo reembolso y un solo movimiento en la
pasarela; otra pasada ya no tiene nada que hacer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from langchain_core.messages import HumanMessage

from agente.servicio.decisiones.conciliacion import GRACIA_TURNO
from tests.apoyo.fabricas import consultar, uno
from tests.apoyo.procesos import cli_con_base
from tests.apoyo.rutas import RAIZ

pytestmark = [pytest.mark.lento, pytest.mark.temporal]

INTENTOS = 25
CANCELAR = "Cancela mi pedido P-20261008-0201"  # C-0002, 25,00 EUR: sale sin firma

# El hijo atiende un turno y se mata (SIGKILL) en el momento pedido del primer checkpoint
# del turno: antes de escribirlo, tras escribirlo o tras escribir sus primeras escrituras.
HIJO = """
import os, signal, sys
from agente.servicio.fabrica import crear_servicio
from tests.apoyo.fabricas import ajustes_prueba

url = os.environ["DATABASE_URL"]
momento, texto = sys.argv[1], sys.argv[2]
servicio = crear_servicio(ajustes_prueba(url), url=url, pausa_reintentos=0.01)
ctx = servicio.contexto_de_cliente("C-0002")
hilo = servicio.iniciar_conversacion(ctx)
print(hilo, flush=True)
saver = servicio.ejecutor.agente.checkpointer
put, put_writes = saver.put, saver.put_writes

def morir():
    os.kill(os.getpid(), signal.SIGKILL)

def put_y_morir(*args, **kwargs):
    if momento == "antes_del_checkpoint":
        morir()
    resultado = put(*args, **kwargs)
    if momento == "tras_el_checkpoint":
        morir()
    return resultado

def put_writes_y_morir(*args, **kwargs):
    resultado = put_writes(*args, **kwargs)
    if momento == "tras_sus_escrituras":
        morir()
    return resultado

saver.put, saver.put_writes = put_y_morir, put_writes_y_morir
servicio.conversar(hilo, texto, ctx)
print("el hijo terminó sin morir", flush=True)
"""


def _mensajes(bd_url: str, hilo: str) -> list[dict]:
    return consultar(bd_url, "SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(h)s ORDER BY id",
                     {"h": hilo})


def _en_la_ventana(servicio, hilo: str) -> bool:
    """El grafo guardó el mensaje del cliente, no tiene ``next`` y nada contesta."""
    estado = servicio.ejecutor.estado(hilo)
    ultimo = (estado.values or {}).get("messages", [None])[-1]
    return not estado.next and isinstance(ultimo, HumanMessage)


def _turno_que_muere(bd_url: str, momento: str) -> str:
    proceso = subprocess.run(
        [sys.executable, "-c", HIJO, momento, CANCELAR], cwd=RAIZ,
        env={**os.environ, "DATABASE_URL": bd_url}, capture_output=True, text=True, timeout=120,
    )
    assert proceso.returncode == -signal.SIGKILL, proceso.stdout + proceso.stderr
    return proceso.stdout.split()[0]


# Tras el checkpoint de entrada el grafo aún tiene ``next`` (``__start__``): ese caso ya lo
# terminaba el conciliador («turno_completado»). Los otros dos son los que se quedaban sin
# respuesta: el grafo sin el mensaje, o con él y sin ``next``.
@pytest.mark.parametrize(("momento", "accion"), [
    ("antes_del_checkpoint", "turno_respondido"),
    ("tras_el_checkpoint", "turno_completado"),
    ("tras_sus_escrituras", "turno_respondido"),
])
def test_un_turno_que_muere_en_su_primer_checkpoint_acaba_contestado_una_vez_tras_reconciliar(
    servicio, bd_url, momento, accion
):
    hilo = _turno_que_muere(bd_url, momento)
    if momento == "tras_sus_escrituras":
        for _ in range(INTENTOS):
            if _en_la_ventana(servicio, hilo):
                break
            consultar(bd_url, "UPDATE consultas_asistente SET estado = 'cerrada' WHERE thread_id = %(h)s "
                              "RETURNING thread_id", {"h": hilo})
            hilo = _turno_que_muere(bd_url, momento)
        else:
            pytest.fail(f"en {INTENTOS} caídas ninguna dejó el grafo sin next")
    assert _mensajes(bd_url, hilo) == [{"rol": "cliente", "texto": CANCELAR}]
    assert uno(bd_url, "SELECT count(*) FROM cancelaciones") == 0

    if accion == "turno_respondido":
        # Dentro de la gracia no se toca: un turno que acaba de soltar el hilo aún cierra.
        assert servicio.reconciliar() == []
        assert len(_mensajes(bd_url, hilo)) == 1

    consultar(bd_url, "UPDATE mensajes_conversacion SET creado = creado - %(g)s - interval '1 second' "
                      "RETURNING id", {"g": GRACIA_TURNO})
    salida = cli_con_base(bd_url, "reconciliar")
    assert salida.returncode == 0, salida.stdout + salida.stderr
    assert f"{hilo}: {accion}" in salida.stdout

    mensajes = _mensajes(bd_url, hilo)
    assert [m["rol"] for m in mensajes] == ["cliente", "agente"]
    assert "He cancelado tu pedido P-20261008-0201" in mensajes[1]["texto"]
    assert uno(bd_url, "SELECT estado FROM consultas_asistente WHERE thread_id = %(h)s", {"h": hilo}) == "abierta"
    # Nada dos veces: una cancelación, un reembolso, un movimiento en la pasarela.
    assert uno(bd_url, "SELECT count(*) FROM cancelaciones") == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1

    otra = cli_con_base(bd_url, "reconciliar")
    assert "Todo en orden" in otra.stdout, otra.stdout + otra.stderr
    assert len(_mensajes(bd_url, hilo)) == 2
