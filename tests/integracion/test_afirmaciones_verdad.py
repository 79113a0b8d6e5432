"""El agente nunca cuenta algo que no pasó (issue 42, parte 3), contra PostgreSQL de verdad.

Una conversación real del modelo offline (reembolso sin firma, vale con firma) no tiene
ninguna afirmación falsa; un mensaje inyectado que sí la tiene lo ven el comprobador, la
auditoría (``agente auditoria``), la puntuación de Langfuse y la comprobación que cierra
cada base de las pruebas (``tests/apoyo/afirmaciones.py``).
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.afirmaciones import extraer
from agente.servicio.auditoria.informe import hallazgos
from agente.servicio.auditoria.verdad import afirmaciones_falsas, puntuar_respuesta
from agente.servicio.fabrica import crear_servicio
from agente.servicio.resultados import Respuesta
from agente.trazas import PUNTUACION_AFIRMACIONES, Trazador
from tests.apoyo.afirmaciones import comprobar_afirmaciones
from tests.apoyo.fabricas import ajustes_prueba, consultar, conversacion
from tests.apoyo.receptor_langfuse import ReceptorLangfuse

SARTENES = "P-20261003-0045"  # C-0010, entregado, 2 × sartén de 24,90 EUR
VAJILLA = "P-20261012-0099"  # C-0003, entregado, 1 × vajilla de 99,00 EUR
INSERT_MENSAJE_SQL = "INSERT INTO mensajes_conversacion (thread_id, rol, texto) VALUES (%(hilo)s, 'agente', %(texto)s)"
SIN_EMITIR_SQL = "UPDATE reembolsos SET estado = 'pendiente', emitido_en = NULL WHERE numero = %(numero)s"


def _mensajes_agente(bd_url: str, hilo: str) -> list[str]:
    filas = consultar(bd_url, "SELECT texto FROM mensajes_conversacion WHERE thread_id = %(h)s AND rol = 'agente'",
                      {"h": hilo})
    return [f["texto"] for f in filas]


def _inyectar(bd_url: str, hilo: str, *textos: str) -> None:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        for texto in textos:
            c.execute(INSERT_MENSAJE_SQL, {"hilo": hilo, "texto": texto})


def _falsas(bd_url: str, hilo: str | None = None) -> list[dict]:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        return afirmaciones_falsas(c, hilos=[hilo] if hilo else None)


def test_una_conversacion_real_con_reembolso_y_vale_solo_afirma_lo_que_paso(servicio, bd_url):
    hilo, respuesta = conversacion(servicio, "C-0010", f"Quiero devolver una sartén del pedido {SARTENES}")
    assert respuesta.estado == "respondida", respuesta.mensaje_cliente
    hilo_vale, pausa = conversacion(servicio, "C-0003", f"Lo del rayón del pedido {VAJILLA} me parece poco: "
                                    "quiero que me compenséis con 30 euros, sin devolverlo.")
    assert pausa.estado == "esperando_aprobacion"
    final = servicio.decidir(hilo_vale, "enc-madrid-centro", [{"type": "approve"}])

    # Hay algo que comprobar: números, importes y efectos, y todos son verdad.
    dichos = [a for h in (hilo, hilo_vale) for t in _mensajes_agente(bd_url, h) for a in extraer(t)]
    assert {a.operacion for a in dichos if a.tipo == "efecto"} >= {"reembolso", "vale"}, final.mensaje_cliente
    assert {a.codigos[0][:2] for a in dichos if a.tipo == "referencia"} >= {"RE", "VA"}
    assert _falsas(bd_url) == []
    informe = servicio.auditoria()
    assert informe["afirmaciones"] == [] and hallazgos(informe) == 0


@pytest.mark.afirmaciones_falsas
def test_una_afirmacion_falsa_la_ven_el_comprobador_la_auditoria_y_la_prueba(servicio, bd_url):
    hilo, respuesta = conversacion(servicio, "C-0010", f"Quiero devolver una sartén del pedido {SARTENES}")
    numero = consultar(bd_url, "SELECT numero FROM reembolsos")[0]["numero"]
    otro, _ = conversacion(servicio, "C-0003", f"Lo del rayón del pedido {VAJILLA} me parece poco: "
                           "quiero que me compenséis con 30 euros, sin devolverlo.")
    assert _falsas(bd_url) == []

    _inyectar(bd_url, hilo,
              f"He tramitado el reembolso RE-000120 de 120,00 EUR del pedido {SARTENES}.",  # no existe
              "Te he devuelto 120,00 EUR.",  # no hay reembolso de 120 en el hilo
              f"He cancelado tu pedido {SARTENES}.",  # no hay cancelación
              f"En cuanto un encargado lo apruebe te reembolsaremos la otra sartén ({numero} ya está).")
    _inyectar(bd_url, otro, f"Tu reembolso {numero} de 24,90 EUR ya está en marcha.")  # de otra conversación
    falsas = _falsas(bd_url)
    assert sorted((f["thread_id"] == hilo, f["hallazgo"]) for f in falsas) == [
        (False, "referencia_ajena"), (True, "importe_distinto"), (True, "referencia_inexistente"),
        (True, "sin_efecto")]
    assert any("RE-000120 no existe" in f["detalle"] for f in falsas)

    informe = servicio.auditoria()
    assert len(informe["afirmaciones"]) == 4 and hallazgos(informe) >= 4

    # «Te hemos devuelto» un reembolso que sigue pendiente: el estado no es el que dice.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(SIN_EMITIR_SQL, {"numero": numero})
    _inyectar(bd_url, hilo, f"Te hemos devuelto 24,90 EUR (reembolso {numero}).")
    assert "estado_distinto" in {f["hallazgo"] for f in _falsas(bd_url, hilo)}

    # La comprobación que cierra cada base de las pruebas suspende sin la marca.
    sin_marca = SimpleNamespace(node=SimpleNamespace(get_closest_marker=lambda nombre: None))
    with pytest.raises(pytest.fail.Exception, match="RE-000120 no existe"):
        comprobar_afirmaciones(sin_marca, bd_url)


def test_cada_turno_puntua_en_langfuse_si_sus_afirmaciones_son_verdad(bd_url, pasarela):
    with ReceptorLangfuse() as receptor:
        trazador = Trazador(public_key=f"pk-test-{uuid.uuid4().hex}", secret_key="sk-test", host=receptor.url)
        servicio = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=pasarela, trazador=trazador,
                                  pausa_reintentos=0.01)
        try:
            hilo, respuesta = conversacion(servicio, "C-0010", f"Quiero devolver una sartén del pedido {SARTENES}")
            mentira = Respuesta(estado="respondida", thread_id=hilo, trace_id=trazador.nuevo_trace_id(),
                                mensaje_cliente="He tramitado el reembolso RE-000120 de 120,00 EUR.")
            assert puntuar_respuesta(servicio.ejecutor, mentira) is mentira
            trazador.flush()
            verdad = [s for s in receptor.scores_de(respuesta.trace_id) if s["name"] == PUNTUACION_AFIRMACIONES]
            falsa = [s for s in receptor.scores_de(mentira.trace_id) if s["name"] == PUNTUACION_AFIRMACIONES]
        finally:
            servicio.cerrar()
        assert receptor.errores == []
    assert [s["value"] for s in verdad] == [1] and verdad[0]["dataType"] == "BOOLEAN"
    assert [s["value"] for s in falsa] == [0] and "RE-000120 no existe" in falsa[0]["comment"]


def test_los_mensajes_del_agente_de_los_ultimos_dias_se_leen_por_indice_no_toda_la_tabla(bd_url):
    """La auditoría corre en cada lectura de /metrics: leer «los últimos 7 días» no puede
    recorrer todos los mensajes que la tienda ha tenido nunca."""
    from datetime import UTC, datetime, timedelta

    from agente.servicio.auditoria.verdad import SELECT_MENSAJES_AGENTE_SQL

    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("SET enable_seqscan = off")  # con la tabla casi vacía el planificador la recorrería igual
        plan = "\n".join(f["QUERY PLAN"] for f in c.execute(
            "EXPLAIN " + SELECT_MENSAJES_AGENTE_SQL,
            {"desde": datetime.now(UTC) - timedelta(days=7), "hilos": None}).fetchall())
    assert "mensajes_agente_creado_idx" in plan, plan
