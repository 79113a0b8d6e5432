"""Una traza por historia con el servicio real: petición, pausa, decisión en otro proceso, efecto."""

from __future__ import annotations

import uuid

import pytest

from agente.servicio.fabrica import crear_servicio
from agente.trazas import Trazador
from tests.apoyo.fabricas import PEDIDO_GRANDE, ajustes_prueba, conversacion, uno
from tests.apoyo.procesos import CliConServidor
from tests.apoyo.receptor_langfuse import ReceptorLangfuse


@pytest.fixture
def receptor():
    with ReceptorLangfuse() as r:
        yield r


@pytest.fixture
def claves():
    # Una clave pública por test: el SDK guarda un cliente por clave y proceso.
    return {"LANGFUSE_PUBLIC_KEY": f"pk-lf-{uuid.uuid4().hex[:8]}", "LANGFUSE_SECRET_KEY": "sk-lf-prueba"}


@pytest.fixture
def servicio(bd_url, receptor, claves):
    trazador = Trazador(public_key=claves["LANGFUSE_PUBLIC_KEY"], secret_key=claves["LANGFUSE_SECRET_KEY"],
                        host=receptor.url)
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, trazador=trazador, pausa_reintentos=0.01)
    yield s
    s.cerrar()


def _esperar(condicion, intentos=100):
    import time

    for _ in range(intentos):
        if condicion():
            return True
        time.sleep(0.1)
    return False


def test_pausa_y_decision_en_otro_proceso_comparten_una_traza(servicio, receptor, claves, bd_url, tmp_path):
    hilo, respuesta = conversacion(
        servicio, "C-0001", f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
    )
    assert respuesta.estado == "esperando_aprobacion"
    servicio.trazador.flush()
    traza = uno(bd_url, "SELECT trace_id FROM aprobaciones_pendientes WHERE thread_id = %(h)s", {"h": hilo})
    assert traza and len(traza) == 32

    # Decide el servidor (otro proceso, con Langfuse) como quien entró en la CLI.
    with CliConServidor(bd_url, tmp_path / "config", LANGFUSE_HOST=receptor.url, **claves) as cli:
        cli.entrar("enc-talavera")
        r = cli("decidir", hilo, "aprobar")
        assert r.returncode == 0, r.stderr
        assert _esperar(lambda: {s["name"] for s in receptor.scores_de(traza)} >= {"decision_encargado", "espera_minutos"})

    assert uno(bd_url, "SELECT trace_id FROM decisiones_encargado") == traza
    assert uno(bd_url, "SELECT trace_id FROM reembolsos") == traza
    assert _esperar(lambda: {s["name"] for s in receptor.scores_de(traza)} >= {"decision_encargado", "espera_minutos"})

    trazas = {s.trace_id for s in receptor.spans}
    assert trazas == {traza}
    assert {"turno_cliente", "decision_encargado"} <= {s.nombre for s in receptor.spans_de(traza)}
    # Sesión y usuario van en cada span de las ejecuciones del agente (Langfuse los sube a
    # la traza); el evento del veredicto lo emite el servicio y hereda la traza.
    del_agente = [s for s in receptor.spans_de(traza) if s.nombre != "veredicto_politica"]
    assert {s.atributos.get("session.id") for s in del_agente} == {hilo}
    assert {s.atributos.get("user.id") for s in del_agente} == {"C-0001"}
    nombres = {s.nombre for s in receptor.spans_de(traza)}
    assert "reembolsar" in nombres
    # El veredicto de la política, con sus motivos, está en la traza.
    assert "supera el límite de 60,00 EUR" in receptor.texto_enviado()
    decision = next(s for s in receptor.scores_de(traza) if s["name"] == "decision_encargado")
    assert decision["value"] == "approve"


def test_datos_personales_del_cliente_llegan_enmascarados(servicio, receptor):
    texto = ("¿Dónde está mi pedido P-20260917-0041? Escribidme a ana.garcia@example.com, "
             "llamad al +34 600 111 001 o devolved a ES91 2100 0418 4502 0005 1332")
    conversacion(servicio, "C-0001", texto)
    servicio.trazador.flush()
    assert _esperar(lambda: receptor.spans)
    enviado = receptor.texto_enviado()
    assert "P-20260917-0041" in enviado
    for dato in ("ana.garcia@example.com", "600 111 001", "ES91 2100 0418 4502 0005 1332", "2100 0418"):
        assert dato not in enviado
    assert "[CORREO]" in enviado and "[IBAN]" in enviado


def test_sin_claves_una_conversacion_no_envia_nada(bd_url, receptor, monkeypatch):
    monkeypatch.setenv("LANGFUSE_HOST", receptor.url)
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pausa_reintentos=0.01)
    try:
        hilo, _ = conversacion(s, "C-0001", f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea")
        s.decidir(hilo, "enc-talavera", [{"type": "approve"}])
        assert not s.trazador.activo
    finally:
        s.cerrar()
    assert receptor.num_peticiones == 0
