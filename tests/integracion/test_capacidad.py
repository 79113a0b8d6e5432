"""Capacidad: ninguna conexión del pool mientras el modelo piensa, el límite de ejecuciones
vive en el servicio (503 con ``Retry-After`` por encima, nunca un 500 ni un ``PoolTimeout``)
y una ejecución que pierde el candado de su hilo se detiene antes de cualquier efecto.

El modelo es el proveedor con latencia (``tests/apoyo/proveedor_latencia.py``) por el cliente
real ``langchain-openai``, con una latencia que deja ver la ejecución a medias.
"""

from __future__ import annotations

import threading
import time
from functools import partial

import psycopg
import pytest
from fastapi.testclient import TestClient

from agente.modelos import crear_modelo
from agente.servicio.conversaciones.candados import NOMBRE_APLICACION
from agente.servicio.fabrica import crear_servicio
from agente.web.app import crear_app
from nucleo.claves_candado import ESPACIO_HILOS
from nucleo.errores import CandadoPerdido, Saturado
from tests.apoyo.fabricas import PEDIDO_GRANDE, PEDIDO_PEQUENO, ajustes_prueba, uno
from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnHilo
from tests.apoyo.web_util import DEVOLVER_CAFETERA, ajustes_web, cab, token

CONSULTA = f"¿Dónde está mi pedido {PEDIDO_PEQUENO}?"
LENTA = Latencia(primer_token=1.0, tokens_por_segundo=1000)


@pytest.fixture
def proveedor(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ProveedorEnHilo(LENTA) as p:
        yield p


def _servicio(bd_url, proveedor, **ajustes):
    modelo = crear_modelo("openai:latencia", base_url=proveedor.url, sin_reintentos=True)
    return crear_servicio(ajustes_prueba(bd_url, **ajustes), url=bd_url, modelo=modelo, pausa_reintentos=0.01)


def _esperar(condicion, limite=20.0) -> None:
    fin = time.monotonic() + limite
    while not condicion():
        assert time.monotonic() < fin, "no llegó a pasar"
        time.sleep(0.01)


def _en_hilo(funcion, *args) -> tuple[threading.Thread, dict]:
    resultado: dict = {}

    def correr():
        try:
            resultado["valor"] = funcion(*args)
        except Exception as exc:  # se comprueba en el test
            resultado["error"] = exc

    hilo = threading.Thread(target=correr)
    hilo.start()
    return hilo, resultado


def test_mientras_el_modelo_piensa_no_se_retiene_ninguna_conexion_del_pool(bd_url, proveedor):
    servicio = _servicio(bd_url, proveedor, pool_max=3)
    try:
        ctx = servicio.contexto_de_cliente("C-0002")
        hilos = [servicio.iniciar_conversacion(ctx) for _ in range(6)]
        corriendo = [_en_hilo(servicio.conversar, h, CONSULTA, ctx) for h in hilos]
        _esperar(lambda: proveedor.proveedor.en_curso == 6)  # seis turnos a la vez, pool de 3
        stats = servicio.pool.get_stats()
        with psycopg.connect(bd_url, autocommit=True) as c:
            candados = c.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s", (ESPACIO_HILOS,)
            ).fetchone()[0]
        for hilo, _ in corriendo:
            hilo.join(timeout=60)
    finally:
        servicio.cerrar()
    assert stats["pool_size"] - stats["pool_available"] == 0
    assert stats.get("requests_waiting", 0) == 0
    assert candados == 6  # y cada turno tiene su candado, en la conexión de los candados
    assert all(r["valor"].estado == "respondida" for _, r in corriendo)


def test_por_encima_del_maximo_se_espera_lo_fijado_y_despues_saturado(bd_url, proveedor):
    servicio = _servicio(bd_url, proveedor, ejecuciones_max=1, espera_ejecucion=0.3)
    try:
        ctx = servicio.contexto_de_cliente("C-0002")
        primero, segundo = servicio.iniciar_conversacion(ctx), servicio.iniciar_conversacion(ctx)
        hilo, resultado = _en_hilo(servicio.conversar, primero, CONSULTA, ctx)
        _esperar(lambda: proveedor.proveedor.en_curso == 1)
        inicio = time.monotonic()
        with pytest.raises(Saturado) as error:
            servicio.conversar(segundo, CONSULTA, ctx)
        espera = time.monotonic() - inicio
        # Las tareas del servidor comparten el límite: la pasada no hace nada y no falla.
        assert servicio.reconciliar() == []
        hilo.join(timeout=60)
        assert resultado["valor"].estado == "respondida"
        assert servicio.conversar(segundo, CONSULTA, ctx).estado == "respondida"  # ya hay sitio
    finally:
        servicio.cerrar()
    assert 0.25 <= espera < 2
    assert error.value.estado_http == 503 and error.value.datos["reintentar_en"] >= 1
    assert uno(bd_url, "SELECT count(*) FROM mensajes_conversacion WHERE thread_id = %(h)s", {"h": segundo}) == 2


def test_la_web_responde_503_con_retry_after_y_una_decision_rechazada_no_cambia_nada(bd_url, proveedor):
    ajustes = ajustes_web(bd_url, modelo="openai:latencia", modelo_base_url=proveedor.url,
                          ejecuciones_max=1, espera_ejecucion=0.3)
    with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
        def tok(sujeto):
            return cab(token(ajustes, sujeto))

        hilo = http.post("/api/conversaciones", headers=tok("C-0001")).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA}, headers=tok("C-0001"))
        assert r.json()["estado"] == "esperando_aprobacion"
        otro = http.post("/api/conversaciones", headers=tok("C-0002")).json()["thread_id"]
        largo, resultado = _en_hilo(partial(http.post, f"/api/conversaciones/{otro}/mensajes",
                                            json={"texto": CONSULTA}, headers=tok("C-0002")))
        _esperar(lambda: proveedor.proveedor.en_curso == 1)
        turno = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "¿Hay novedades?"},
                          headers={**tok("C-0001"), "Accept": "text/event-stream"})
        decision = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                             headers=tok("enc-talavera"))
        largo.join(timeout=60)
        assert resultado["valor"].status_code == 200
        for r in (turno, decision):
            assert r.status_code == 503, r.text
            assert int(r.headers["Retry-After"]) >= 1
            assert "inténtalo" in r.json()["detalle"]
        # Nada cambió: la decisión no se registró y la aprobación sigue pendiente.
        assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
        assert http.get(f"/api/aprobaciones/{hilo}", headers=tok("enc-talavera")).json()["estado"] == "pendiente"
        assert http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                         headers=tok("enc-talavera")).status_code == 200


def test_si_se_pierde_el_candado_mientras_el_modelo_piensa_no_se_ejecuta_ningun_efecto(bd_url, proveedor):
    servicio = _servicio(bd_url, proveedor)
    try:
        ctx = servicio.contexto_de_cliente("C-0001")
        hilo = servicio.iniciar_conversacion(ctx)
        corriendo, resultado = _en_hilo(
            servicio.conversar, hilo, f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea", ctx
        )
        _esperar(lambda: proveedor.proveedor.en_curso == 1)
        with psycopg.connect(bd_url, autocommit=True) as c:  # la base corta la conexión de los candados
            c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE application_name = %s AND datname = current_database()", (NOMBRE_APLICACION,))
        corriendo.join(timeout=60)
        assert isinstance(resultado.get("error"), CandadoPerdido)
        assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
        assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
        # Ni disculpa ni cierre escritos por la ejecución anulada: solo el mensaje del cliente.
        assert uno(bd_url, "SELECT count(*) FROM mensajes_conversacion WHERE thread_id = %(h)s AND rol = 'agente'",
                   {"h": hilo}) == 0
        # El proceso sigue sirviendo: otra conversación entera, con candados nuevos.
        otra = servicio.iniciar_conversacion(ctx)
        assert servicio.conversar(otra, CONSULTA.replace(PEDIDO_PEQUENO, PEDIDO_GRANDE), ctx).estado == "respondida"
    finally:
        servicio.cerrar()


CONEXIONES_DE_LA_BASE_SQL = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
"""


def test_un_proceso_no_abre_mas_conexiones_que_agente_pool_max(bd_url, proveedor):
    # AGENTE_POOL_MAX es el presupuesto del proceso entero: pool, candados y LISTEN.
    ajustes = ajustes_web(bd_url, modelo="openai:latencia", modelo_base_url=proveedor.url, pool_max=4)
    clientes = ["C-0001", "C-0002", "C-0003", "C-0004", "C-0005", "C-0001"]  # seis conversaciones
    with psycopg.connect(bd_url, autocommit=True) as sondeo:
        antes = sondeo.execute(CONEXIONES_DE_LA_BASE_SQL).fetchone()[0]
        with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
            hilos = [http.post("/api/conversaciones", headers=cab(token(ajustes, c))).json()["thread_id"]
                     for c in clientes]
            turnos = [_en_hilo(partial(http.post, f"/api/conversaciones/{h}/mensajes",
                                       json={"texto": CONSULTA}, headers=cab(token(ajustes, c))))
                      for h, c in zip(hilos, clientes, strict=True)]
            maximo = pensando = 0
            while any(h.is_alive() for h, _ in turnos):
                maximo = max(maximo, sondeo.execute(CONEXIONES_DE_LA_BASE_SQL).fetchone()[0] - antes)
                pensando = max(pensando, proveedor.proveedor.en_curso)
                time.sleep(0.01)
    assert [r["valor"].status_code for _, r in turnos] == [200] * len(clientes)
    assert pensando == len(clientes)  # los seis turnos estuvieron a la vez en el modelo
    assert 3 <= maximo <= 4  # el LISTEN y los candados están abiertos: se midió con el proceso en marcha


def test_con_un_proveedor_real_los_tokens_llegan_en_directo_del_flujo_del_proveedor(bd_url, proveedor, monkeypatch):
    # Sin el troceado de respaldo, los tokens solo pueden venir del flujo del proveedor.
    import re

    from agente.web.en_vivo import directo
    from tests.apoyo.web_util import eventos_sse

    monkeypatch.setattr(directo, "_PALABRAS", re.compile(r"(?!)"))
    ajustes = ajustes_web(bd_url, modelo="openai:latencia", modelo_base_url=proveedor.url)
    with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
        hilo = http.post("/api/conversaciones", headers=cab(token(ajustes, "C-0002"))).json()["thread_id"]
        with http.stream("POST", f"/api/conversaciones/{hilo}/mensajes", json={"texto": CONSULTA},
                         headers=cab(token(ajustes, "C-0002"), Accept="text/event-stream")) as r:
            eventos = list(eventos_sse(r.iter_lines()))
    assert eventos[-1][0] == "estado"
    final = eventos[-1][1]["mensajes"][0]["texto"]
    ultimo_descarte = max((i for i, (t, _) in enumerate(eventos) if t == "descartar"), default=-1)
    tokens = [d["texto"] for t, d in eventos[ultimo_descarte + 1:] if t == "token"]
    assert len(tokens) > 3
    assert "".join(tokens) == final


def test_el_unico_limite_es_el_del_servicio_y_la_web_solo_reparte_hilos(bd_url, proveedor):
    # Un sitio en el servicio y dos hilos en la web. Con un turno en el modelo, tres más a la
    # vez: el tercero espera hilo (la web no lo rechaza) y los tres reciben el 503 del servicio,
    # que los cuenta todos.
    ajustes = ajustes_web(bd_url, modelo="openai:latencia", modelo_base_url=proveedor.url,
                          ejecuciones_max=1, espera_ejecucion=0.1)
    with TestClient(crear_app(ajustes), raise_server_exceptions=False) as http:
        limite, hilos = http.app.state.servicio.limite, http.app.state.limitador
        assert (limite.maximo, hilos.hilos) == (1, 2)
        cliente = cab(token(ajustes, "C-0002"))
        conversaciones = [http.post("/api/conversaciones", headers=cliente).json()["thread_id"] for _ in range(4)]
        largo, resultado = _en_hilo(partial(http.post, f"/api/conversaciones/{conversaciones[0]}/mensajes",
                                            json={"texto": CONSULTA}, headers=cliente))
        _esperar(lambda: proveedor.proveedor.en_curso == 1)
        otros = [_en_hilo(partial(http.post, f"/api/conversaciones/{hilo}/mensajes",
                                  json={"texto": CONSULTA}, headers=cliente)) for hilo in conversaciones[1:]]
        for hilo, _ in otros:
            hilo.join(timeout=30)
        largo.join(timeout=60)
    assert resultado["valor"].status_code == 200
    respuestas = [r["valor"] for _, r in otros]
    assert [r.status_code for r in respuestas] == [503] * 3, [r.text for r in respuestas]
    assert all(int(r.headers["Retry-After"]) >= 1 and "inténtalo" in r.json()["detalle"] for r in respuestas)
    assert limite.rechazadas == 3  # cada 503 salió del límite del servicio
    assert hilos.borrowed_tokens == 0
