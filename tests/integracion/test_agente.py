"""El agente completo (modelo offline) sobre PostgreSQL real: firma, edición, rechazo, respuesta."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import psycopg
import pytest
from langgraph.types import Command

from nucleo.contexto import ContextoCliente
from nucleo.errores import ContextoAusente
from tests.apoyo.fabricas import (
    PEDIDO_GRANDE,
    PEDIDO_PEQUENO,
    conversacion,
    uno,
)
from tests.apoyo.rutas import RAIZ

DEVOLVER_CAFETERA = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"


def _reembolsos(bd_url):
    return uno(bd_url, "SELECT count(*) FROM reembolsos")


def test_reembolso_sobre_limite_no_se_ejecuta_antes_de_la_decision_y_una_vez_despues(servicio, pasarela, bd_url):
    hilo, respuesta = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    assert respuesta.estado == "esperando_aprobacion"
    assert "pendiente de revisión" in respuesta.mensaje_cliente
    assert pasarela.llamadas == [] and _reembolsos(bd_url) == 0

    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert final.estado == "respondida"
    assert len(pasarela.llamadas) == 1 and pasarela.llamadas[0][1] == Decimal("120.00")
    assert _reembolsos(bd_url) == 1
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert numero in final.mensaje_cliente
    assert uno(bd_url, "SELECT aprobado_por FROM reembolsos") == "enc-talavera"


def test_edicion_120_a_90_ejecuta_90_y_el_cliente_lee_90(servicio, pasarela, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    pendiente = servicio.aprobacion(hilo)
    args = pendiente["peticion"]["action_requests"][0]["args"]
    final = servicio.decidir(
        hilo, "enc-talavera",
        [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {**args, "importe": "90"}}}],
    )
    assert [importe for _, importe in pasarela.llamadas] == [Decimal("90.00")]
    assert uno(bd_url, "SELECT importe FROM reembolsos") == Decimal("90.00")
    assert "90,00 EUR" in final.mensaje_cliente


def test_rechazo_con_motivo_no_ejecuta_y_el_cliente_lee_el_motivo(servicio, pasarela, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    motivo = "La cafetera tiene golpes que no son de fábrica"
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "reject", "message": motivo}])
    assert pasarela.llamadas == [] and _reembolsos(bd_url) == 0
    assert motivo in final.mensaje_cliente


def test_consulta_al_encargado_con_respond_llega_al_cliente(servicio, bd_url):
    hilo, respuesta = conversacion(
        servicio, "C-0001", "¿Tenéis la jarra de repuesto de la cafetera?"
    )
    assert respuesta.estado == "esperando_aprobacion"
    pendiente = servicio.aprobacion(hilo)
    assert pendiente["peticion"]["review_configs"][0]["allowed_decisions"] == ["respond"]
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "respond", "message": "Sí, llega el jueves"}])
    assert "Sí, llega el jueves" in final.mensaje_cliente


def test_reembolso_y_sustitucion_en_un_turno_se_deciden_en_orden(servicio, pasarela, bd_url):
    # Cojines entregados hace 31 días (firma por antigüedad) y cafetera por una más cara.
    texto = ("Quiero devolver los cojines del pedido P-20260925-0036 porque no me gustan "
             "y cambiar la cafetera del pedido P-20260917-0041 por la CAF-004")
    hilo, respuesta = conversacion(servicio, "C-0001", texto)
    assert respuesta.estado == "esperando_aprobacion"
    peticion = servicio.aprobacion(hilo)["peticion"]
    assert [a["name"] for a in peticion["action_requests"]] == ["reembolsar", "sustituir"]
    final = servicio.decidir(
        hilo, "enc-talavera",
        [{"type": "approve"}, {"type": "reject", "message": "No queda garantía para el cambio"}],
    )
    assert _reembolsos(bd_url) == 1
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
    assert "No queda garantía para el cambio" in final.mensaje_cliente


def test_reanudar_sin_contexto_falla_claro_y_la_aprobacion_sigue(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    pendiente = servicio.aprobacion(hilo)
    config = {"configurable": {"thread_id": hilo}}
    with pytest.raises(ContextoAusente, match="contexto del cliente"):
        servicio.agente.invoke(
            Command(resume={pendiente["interrupt_id"]: {"decisions": [{"type": "approve"}]}}),
            config, durability="sync",
        )
    estado = servicio.agente.get_state(config)
    assert [i.id for t in estado.tasks for i in t.interrupts] == [pendiente["interrupt_id"]]
    assert _reembolsos(bd_url) == 0


def test_reanudar_en_otro_proceso_con_el_contexto_funciona(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    pendiente = servicio.aprobacion(hilo)
    ctx = ContextoCliente.desde_json(pendiente["contexto"])
    codigo = f"""
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command
from agente.bd.pool import abrir_pool
from agente.construir import construir_agente
from nucleo.contexto import ContextoCliente
from agente.modelo_offline import ModeloOffline
from caja.pasarela import PasarelaSimulada
pool = abrir_pool({bd_url!r})
agente = construir_agente(ModeloOffline(), PostgresSaver(pool), pool=pool, pasarela=PasarelaSimulada(pool=pool))
salida = agente.invoke(Command(resume={{{pendiente['interrupt_id']!r}: {{"decisions": [{{"type": "approve"}}]}}}}),
    {{"configurable": {{"thread_id": {hilo!r}}}, "metadata": {{"aprobado_por": "enc-talavera"}}}},
    context=ContextoCliente(**{ctx.como_json()!r}), durability="sync", version="v2")
print(salida.value["messages"][-1].content)
"""
    r = subprocess.run([sys.executable, "-c", codigo], cwd=RAIZ, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "DATABASE_URL": bd_url})
    assert r.returncode == 0, r.stderr
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert numero and numero in r.stdout


@pytest.mark.parametrize(
    ("cliente", "texto", "estado", "esperado"),
    [
        ("C-0004", "¿Dónde está mi pedido P-20260925-0150?", "respondida", "P-20260925-0150"),
        ("C-0002", f"Quiero devolver la sartén del pedido {PEDIDO_PEQUENO} porque se pega", "respondida", "RE-"),
        ("C-0001", DEVOLVER_CAFETERA, "esperando_aprobacion", "pendiente de revisión"),
        ("C-0001", f"Quiero cambiar la cafetera del pedido {PEDIDO_GRANDE} por una más barata", "respondida", "¿Confirmas el cambio"),
        ("C-0001", f"Quiero cambiar la cafetera del pedido {PEDIDO_GRANDE} por la CAF-005", "respondida", "SU-"),
        ("C-0001", f"Quiero cambiar la cafetera del pedido {PEDIDO_GRANDE} por la CAF-004", "esperando_aprobacion", "pendiente de revisión"),
        ("C-0001", "¿Tenéis la jarra de repuesto de la cafetera?", "esperando_aprobacion", "consulta"),
        ("C-0003", "Quiero devolver las sábanas del pedido P-20260801-0007 porque no me gustan", "esperando_aprobacion", "pendiente"),
        ("C-0005", "Quiero devolver la batidora del pedido P-20260922-0077 porque no funciona", "esperando_aprobacion", "pendiente"),
    ],
)
def test_modelo_offline_resuelve_cada_caso_de_la_demo(servicio, cliente, texto, estado, esperado):
    _, respuesta = conversacion(servicio, cliente, texto)
    assert respuesta.estado == estado, respuesta.mensaje_cliente
    assert esperado in respuesta.mensaje_cliente


def test_pedido_de_otro_cliente_se_contesta_como_no_encontrado(servicio, bd_url):
    _, respuesta = conversacion(servicio, "C-0002", DEVOLVER_CAFETERA)
    assert respuesta.estado == "respondida"
    assert "no encontrado" in respuesta.mensaje_cliente.lower()
    assert _reembolsos(bd_url) == 0


def test_sustitucion_aprobada_tras_cambiar_el_precio_caduca_y_no_mueve_stock(servicio, bd_url):
    hilo, respuesta = conversacion(
        servicio, "C-0001", f"Quiero cambiar la cafetera del pedido {PEDIDO_GRANDE} por la CAF-004"
    )
    assert respuesta.estado == "esperando_aprobacion"
    stock = "SELECT unidades FROM stock WHERE tienda = 'talavera' AND sku = %(s)s"
    antes = (uno(bd_url, stock, {"s": "CAF-004"}), uno(bd_url, stock, {"s": "CAF-001"}))
    with psycopg.connect(bd_url, autocommit=True) as c:
        c.execute("UPDATE precios_tienda SET pvp = 259.00 WHERE tienda = 'talavera' AND sku = 'CAF-004'")
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert "caducado" in final.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
    assert (uno(bd_url, stock, {"s": "CAF-004"}), uno(bd_url, stock, {"s": "CAF-001"})) == antes


def test_cada_checkpoint_guarda_solo_lo_que_anade_su_paso_y_la_conversacion_sigue_entera(servicio, bd_url):
    # DeltaChannel en ``messages`` (agente/construir.py): sin él, cada paso guardaba la
    # conversación entera otra vez y los bytes del hilo crecían con el cuadrado de los turnos.
    from langgraph.channels.delta import DeltaChannel

    assert isinstance(servicio.ejecutor.agente.channels["messages"], DeltaChannel)
    textos = [f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?"] * 4
    hilo, respuesta = conversacion(servicio, "C-0001", *textos)
    assert respuesta.estado == "respondida" and PEDIDO_PEQUENO in respuesta.mensaje_cliente
    mensajes = servicio.ejecutor.estado(hilo).values["messages"]
    assert sum(1 for m in mensajes if m.type == "human") == 4
    # Ningún blob de messages lleva la conversación entera (4 turnos ya pasan de 2 KiB): lo
    # que añade cada paso está en checkpoint_writes.
    mayor = uno(bd_url, "SELECT max(length(blob)) FROM checkpoint_blobs WHERE thread_id = %(t)s "
                        "AND channel = 'messages'", {"t": hilo})
    entera = uno(bd_url, "SELECT max(length(blob)) FROM checkpoint_writes WHERE thread_id = %(t)s "
                         "AND channel = 'messages'", {"t": hilo})
    assert entera is not None and (mayor or 0) < 200, (mayor, entera)
