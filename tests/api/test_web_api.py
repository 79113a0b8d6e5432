"""La API HTTP en proceso (TestClient): códigos de estado, autorización, límites, SSE, métricas."""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import jwt
import psycopg
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from agente.web.app import ESTATICOS, crear_app
from agente.web.en_vivo import directo
from nucleo.ajustes import SECRETO_DEMO, Ajustes
from nucleo.errores import ErrorConfiguracion
from tests.apoyo.a_la_vez import a_la_vez
from tests.apoyo.web_util import (
    DEVOLVER_BATIDORA,
    DEVOLVER_CAFETERA,
    DEVOLVER_SABANAS,
    DONDE_ESTA,
    EDITAR_A_90,
    abrir_conversacion,
    ajustes_web,
    cab,
    cliente_http,
    conversacion_en_pausa,
    eventos_sse,
    sql,
    token,
)


def _metrica(http, nombre: str, **etiquetas) -> float:
    for familia in text_string_to_metric_families(http.get("/metrics").text):
        for muestra in familia.samples:
            if muestra.name == nombre and all(muestra.labels.get(k) == v for k, v in etiquetas.items()):
                return muestra.value
    return 0.0


# -- conversación del cliente -------------------------------------------------------------


def test_cliente_abre_conversacion_y_recibe_respuesta(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0004")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA}, headers=cab(tok("C-0004")))
    assert r.status_code == 200, r.text
    cuerpo = r.json()
    assert cuerpo["estado"] == "respondida"
    assert [m["rol"] for m in cuerpo["mensajes"]] == ["agente"]
    assert "P-20260925-0150" in cuerpo["mensajes"][0]["texto"]

    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0004"))).json()
    assert historial["thread_id"] == hilo
    assert [(m["rol"], m["texto"]) for m in historial["mensajes"]] == [
        ("cliente", DONDE_ESTA), ("agente", cuerpo["mensajes"][0]["texto"])]
    assert all(set(m) >= {"rol", "texto", "fecha"} for m in historial["mensajes"])
    # Solo lo que ve el cliente: ninguna llamada a herramienta ni JSON interno.
    assert "consultar_pedido" not in r.text + str(historial)


def test_reembolso_grande_espera_al_encargado_y_el_mensaje_siguiente_da_409_y_se_guarda(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "¿Hay novedades?"},
                  headers=cab(tok("C-0001")))
    assert r.status_code == 409
    assert "pendiente" in r.json()["detalle"]
    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()
    assert historial["estado"] == "esperando_aprobacion"
    assert historial["mensajes"][-1]["texto"] == "¿Hay novedades?"
    assert historial["mensajes"][-1]["retenido"] is True
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()
    assert [m["texto"] for m in tarjeta["mensajes_retenidos"]] == ["¿Hay novedades?"]


def test_cliente_no_puede_leer_ni_escribir_en_hilo_ajeno(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    otro = cab(tok("C-0002"))
    assert http.get(f"/api/conversaciones/{hilo}", headers=otro).status_code == 403
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "hola"}, headers=otro)
    assert r.status_code == 403
    assert r.json()["detalle"]
    assert http.get(f"/api/conversaciones/{hilo}/eventos", headers=otro).status_code == 403
    # El token en la URL no vale: acabaría en el log de accesos.
    assert http.get(f"/api/conversaciones/{hilo}/eventos?token={tok('C-0001')}").status_code == 401
    assert sql(http.app.state.ajustes.database_url,
               "SELECT count(*) AS n FROM mensajes_conversacion WHERE thread_id = %(h)s", {"h": hilo})[0]["n"] == 0


def test_hilo_inexistente_da_404(http, tok):
    r = http.get("/api/conversaciones/h-no-existe", headers=cab(tok("C-0001")))
    assert r.status_code == 404
    assert r.json() == {"detalle": "conversación no encontrada: h-no-existe"}


def test_texto_vacio_o_demasiado_largo_da_422_en_espanol(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    casos = [({"texto": ""}, "texto: no puede estar vacío"), ({"texto": "x" * 2001}, "máximo 2000 caracteres"),
             ({}, "texto: es obligatorio"), ({"texto": "   "}, "vacío"), ({"texto": 5}, "texto: debe ser un texto")]
    for cuerpo, detalle in casos:
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json=cuerpo, headers=cab(tok("C-0001")))
        assert r.status_code == 422, cuerpo
        assert detalle in r.json()["detalle"], cuerpo
    assert http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()["mensajes"] == []


def test_cuerpo_de_mas_de_16_kib_da_413(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", content=b'{"texto": "' + b"a" * 17000 + b'"}',
                  headers=cab(tok("C-0001"), **{"Content-Type": "application/json"}))
    assert r.status_code == 413
    assert "demasiado grande" in r.json()["detalle"]


def test_mas_mensajes_por_minuto_de_los_permitidos_da_429(bd_url):
    ajustes = ajustes_web(bd_url, mensajes_por_minuto=2)
    with cliente_http(ajustes) as http:
        cabecera = cab(token(ajustes, "C-0004"))
        hilo = http.post("/api/conversaciones", headers=cabecera).json()["thread_id"]
        url = f"/api/conversaciones/{hilo}/mensajes"
        assert [http.post(url, json={"texto": DONDE_ESTA}, headers=cabecera).status_code for _ in range(2)] == [200, 200]
        r = http.post(url, json={"texto": DONDE_ESTA}, headers=cabecera)
        assert r.status_code == 429
        assert "por minuto" in r.json()["detalle"]
        assert int(r.headers["Retry-After"]) >= 1
        # Otro cliente no comparte el cupo.
        otro = cab(token(ajustes, "C-0003"))
        hilo_otro = http.post("/api/conversaciones", headers=otro).json()["thread_id"]
        assert http.post(f"/api/conversaciones/{hilo_otro}/mensajes", json={"texto": "hola"}, headers=otro).status_code == 200


def test_doce_mensajes_a_la_vez_de_un_cliente_pasan_solo_los_del_ritmo(bd_url):
    # Antes se contaban los mensajes ya guardados, que el turno guarda más tarde: a la vez,
    # en conversaciones distintas del mismo cliente, pasaban todos.
    ajustes = ajustes_web(bd_url, mensajes_por_minuto=3)
    with cliente_http(ajustes) as http:
        cabecera = cab(token(ajustes, "C-0004"))
        hilos = [http.post("/api/conversaciones", headers=cabecera).json()["thread_id"] for _ in range(12)]
        respuestas = a_la_vez([
            lambda h=h: http.post(f"/api/conversaciones/{h}/mensajes", json={"texto": DONDE_ESTA}, headers=cabecera)
            for h in hilos])
        codigos = [r.status_code for r in respuestas]
        assert codigos.count(429) == 9, codigos
        assert sorted(c for c in codigos if c != 429) == [200] * 3
        mensajes = sql(bd_url, "SELECT count(*) AS n FROM mensajes_conversacion WHERE rol = 'cliente'")
        assert mensajes[0]["n"] == 3
        # La pasada periódica barre lo que ya no cuenta, de todos los clientes.
        sql(bd_url, "UPDATE ritmo_mensajes SET creado = creado - interval '3 minutes' RETURNING id")
        assert http.app.state.servicio.barrer_ritmos() == 3
        assert sql(bd_url, "SELECT count(*) AS n FROM ritmo_mensajes")[0]["n"] == 0


def test_respuesta_en_directo_llega_por_tokens_y_termina_con_estado(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0004")
    with http.stream("POST", f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA},
                     headers=cab(tok("C-0004"), Accept="text/event-stream")) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        eventos = list(eventos_sse(r.iter_lines()))
    tipo_final, final = eventos[-1]
    assert tipo_final == "estado"
    assert final["estado"] == "respondida"
    texto = final["mensajes"][0]["texto"]
    ultimo_descarte = max((i for i, (t, _) in enumerate(eventos) if t == "descartar"), default=-1)
    tokens = [d["texto"] for t, d in eventos[ultimo_descarte + 1:] if t == "token"]
    assert len(tokens) > 3
    assert "".join(tokens) == texto
    guardado = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0004"))).json()["mensajes"][-1]
    assert guardado["texto"] == texto


def test_los_tokens_en_directo_salen_del_modelo_no_del_texto_final(http, tok, monkeypatch):
    # Sin el troceado de respaldo, los tokens solo pueden venir del streaming del modelo.
    monkeypatch.setattr(directo, "_PALABRAS", re.compile(r"(?!)"))
    hilo = abrir_conversacion(http, tok, "C-0004")
    with http.stream("POST", f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA},
                     headers=cab(tok("C-0004"), Accept="text/event-stream")) as r:
        eventos = list(eventos_sse(r.iter_lines()))
    tokens = [d["texto"] for t, d in eventos if t == "token"]
    assert len(tokens) > 3
    assert "".join(tokens) == eventos[-1][1]["mensajes"][0]["texto"]


def test_respuesta_en_directo_de_una_pausa_acaba_en_esperando_aprobacion(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    with http.stream("POST", f"/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA},
                     headers=cab(tok("C-0001"), Accept="text/event-stream")) as r:
        eventos = list(eventos_sse(r.iter_lines()))
    assert eventos[-1][0] == "estado"
    assert eventos[-1][1]["estado"] == "esperando_aprobacion"
    ultimo_descarte = max((i for i, (t, _) in enumerate(eventos) if t == "descartar"), default=-1)
    tokens = "".join(d["texto"] for t, d in eventos[ultimo_descarte + 1:] if t == "token")
    assert tokens == eventos[-1][1]["mensajes"][0]["texto"]
    assert "pendiente de revisión" in tokens
    # Con la pausa abierta, el modo en directo también responde 409 (antes de abrir el flujo).
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "¿y bien?"},
                  headers=cab(tok("C-0001"), Accept="text/event-stream"))
    assert r.status_code == 409
    assert r.json()["detalle"]


# -- autenticación --------------------------------------------------------------------------


RUTAS_CLIENTE = [("post", "/api/conversaciones"), ("get", "/api/conversaciones/h-x"),
                 ("post", "/api/conversaciones/h-x/mensajes"), ("get", "/api/conversaciones/h-x/eventos")]
RUTAS_ENCARGADO = [("get", "/api/aprobaciones"), ("get", "/api/aprobaciones/h-x"),
                   ("post", "/api/aprobaciones/h-x/decision")]


def _llamar(http, metodo, ruta, cabeceras):
    cuerpos = {"mensajes": {"texto": "hola"}, "decision": {"decisiones": [{"type": "approve"}]}}
    cuerpo = next((c for k, c in cuerpos.items() if ruta.endswith(k)), None)
    return http.request(metodo.upper(), ruta, json=cuerpo, headers=cabeceras)


def test_sin_token_o_con_token_malo_o_caducado_da_401(http, ajustes):
    for metodo, ruta in RUTAS_CLIENTE + RUTAS_ENCARGADO:
        sujeto = "enc-talavera" if "aprobaciones" in ruta else "C-0001"
        caducado = token(ajustes, sujeto, ahora=datetime.now(UTC) - timedelta(hours=30))
        otro_secreto = token(Ajustes(secreto="otro" * 10), sujeto)
        sin_exp = jwt.encode({"rol": "cliente", "cliente_id": "C-0001", "tienda": "talavera"}, ajustes.secreto.get_secret_value())
        for cabeceras in ({}, cab("no-es-un-jwt"), cab(caducado), cab(otro_secreto), cab(sin_exp)):
            r = _llamar(http, metodo, ruta, cabeceras)
            assert r.status_code == 401, (ruta, cabeceras, r.text)
            assert r.headers["WWW-Authenticate"] == "Bearer"
            assert r.json()["detalle"]
        assert "caducado" in _llamar(http, metodo, ruta, cab(caducado)).json()["detalle"]


def test_token_en_la_url_solo_vale_para_eventos(http, tok):
    hilo = abrir_conversacion(http, tok, "C-0001")
    assert http.get(f"/api/conversaciones/{hilo}?token={tok('C-0001')}").status_code == 401


def test_cada_rol_solo_abre_sus_rutas(http, tok):
    for metodo, ruta in RUTAS_ENCARGADO:
        assert _llamar(http, metodo, ruta, cab(tok("C-0001"))).status_code == 403, ruta
    for metodo, ruta in RUTAS_CLIENTE[:3]:
        assert _llamar(http, metodo, ruta, cab(tok("enc-talavera"))).status_code == 403, ruta


def test_token_con_otra_tienda_que_la_del_cliente_da_403(http, tok):
    assert http.post("/api/conversaciones", headers=cab(tok("C-0001", tienda="madrid-centro"))).status_code == 403


def test_encargado_de_baja_rechazado_al_momento(http, tok, bd_url):
    assert http.get("/api/aprobaciones", headers=cab(tok("enc-talavera-baja"))).status_code == 403
    vigente = cab(tok("enc-talavera"))
    assert http.get("/api/aprobaciones", headers=vigente).status_code == 200
    sql(bd_url, "UPDATE encargados SET activo = false WHERE id = 'enc-talavera'")
    r = http.get("/api/aprobaciones", headers=vigente)
    assert r.status_code == 403
    assert "de baja" in r.json()["detalle"]


# -- bandeja y decisiones -----------------------------------------------------------------


def test_bandeja_muestra_solo_su_tienda_la_mas_antigua_primero(http, tok):
    primero = conversacion_en_pausa(http, tok, "C-0001", DEVOLVER_CAFETERA)
    segundo = conversacion_en_pausa(http, tok, "C-0005", DEVOLVER_BATIDORA)
    madrid = conversacion_en_pausa(http, tok, "C-0003", DEVOLVER_SABANAS)

    talavera = http.get("/api/aprobaciones", headers=cab(tok("enc-talavera"))).json()
    assert [a["thread_id"] for a in talavera] == [primero, segundo]
    tarjeta = talavera[0]
    assert tarjeta["cliente"] == {"id": "C-0001", "nombre": "Ana García López"}
    assert tarjeta["espera_segundos"] >= 0 and tarjeta["creada"]
    assert "traza_url" in tarjeta and tarjeta["mensajes_retenidos"] == []
    (accion,) = tarjeta["acciones"]
    assert accion["nombre"] == "reembolsar"
    assert accion["args"]["pedido"] == "P-20260917-0041"
    assert accion["args"]["importe"] == "120.00"
    assert accion["decisiones_permitidas"] == ["approve", "edit", "reject"]
    assert (accion["titulo"], accion["campos_editables"]) == ("Reembolso", ["importe"])  # del registro
    assert any("60,00" in m for m in accion["motivos"])
    assert "P-20260917-0041" in accion["descripcion"]

    en_madrid = http.get("/api/aprobaciones", headers=cab(tok("enc-madrid-centro"))).json()
    assert [a["thread_id"] for a in en_madrid] == [madrid]


def test_encargado_de_otra_tienda_recibe_403_al_listar_leer_y_decidir(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    ajeno = cab(tok("enc-madrid-centro"))
    assert http.get("/api/aprobaciones?tienda=talavera", headers=ajeno).status_code == 403
    assert http.get(f"/api/aprobaciones/{hilo}", headers=ajeno).status_code == 403
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]}, headers=ajeno)
    assert r.status_code == 403
    assert r.json()["detalle"] == "esta aprobación es de otra tienda"
    # Nada ha cambiado: sigue pendiente para su tienda.
    assert http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()["estado"] == "pendiente"


def test_decision_editada_a_90_responde_al_cliente_y_vacia_la_cola(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    assert "90,00 EUR" in r.json()["mensaje_cliente"]
    assert http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).status_code == 404
    again = http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    assert again.status_code == 404
    historial = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()
    assert historial["mensajes"][-1]["texto"] == r.json()["mensaje_cliente"]
    importes = sql(http.app.state.ajustes.database_url, "SELECT importe FROM reembolsos")
    assert [f["importe"] for f in importes] == [Decimal("90.00")]


# Mal formadas (el esquema ya lo dice): 422.
DECISIONES_NO_VALIDAS = [
        [{"type": "reject", "message": "  "}],
        [{"type": "aprobar"}],
        [{"type": "approve", "extra": 1}],
        [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {"importe": "-5"}}}],
        [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {"importe": 90}}}],
        [{"type": "edit", "edited_action": {"name": "reembolsar", "args": {"pedido": {"anidado": 1}}}}],
        [],
        # Más decisiones que operaciones: el cuerpo no casa con la tarjeta (422 con el orden).
        [{"type": "approve"}, {"type": "approve"}],
        [{"type": "approve", "tool_call_id": "call_de_otra_tarjeta"}],
]
# Bien formadas pero que no encajan con lo pendiente (una sola operación, un reembolso de
# 120,00): 409, como cualquier conflicto con el estado.
DECISIONES_NO_APLICABLES = [
        [{"type": "respond", "message": "vale"}],
        [{"type": "edit", "edited_action": {"name": "reembolsar",
                                            "args": {"pedido": "P-20260917-0041", "importe": "500"}}}],
        [{"type": "edit", "edited_action": {"name": "sustituir", "args": {"pedido": "P-20260917-0041"}}}],
]


def test_decision_no_valida_da_422_la_que_no_encaja_409_y_no_cambia_nada(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    for estado, lista in ((422, DECISIONES_NO_VALIDAS), (409, DECISIONES_NO_APLICABLES)):
        for decisiones in lista:
            r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": decisiones},
                          headers=cab(tok("enc-talavera")))
            assert r.status_code == estado, (decisiones, r.text)
            assert r.json()["detalle"]
    assert http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()["estado"] == "pendiente"
    assert sql(http.app.state.ajustes.database_url, "SELECT count(*) AS n FROM reembolsos")[0]["n"] == 0


def test_edicion_a_10_009_da_422_y_la_aprobacion_sigue_pendiente(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    edicion = {"decisiones": [{"type": "edit", "edited_action": {
        "name": "reembolsar", "args": {"pedido": "P-20260917-0041", "importe": "10.009"}}}]}
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json=edicion, headers=cab(tok("enc-talavera")))
    assert r.status_code == 422, r.text
    assert "más de dos decimales" in r.json()["detalle"]
    assert http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()["estado"] == "pendiente"
    url = http.app.state.ajustes.database_url
    assert sql(url, "SELECT count(*) AS n FROM reembolsos")[0]["n"] == 0
    assert sql(url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 0


def test_decidir_pasado_el_plazo_da_409_y_la_aprobacion_sigue_pendiente(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    url = http.app.state.ajustes.database_url
    pendiente = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()
    assert datetime.fromisoformat(pendiente["caduca"]) > datetime.now(UTC) + timedelta(hours=71)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("UPDATE aprobaciones_pendientes SET caduca = now() - interval '1 minute'")
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=cab(tok("enc-talavera")))
    assert r.status_code == 409, r.text
    assert "caducó el" in r.json()["detalle"] and "(hora de Madrid)" in r.json()["detalle"]
    assert http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()["estado"] == "pendiente"
    assert sql(url, "SELECT count(*) AS n FROM decisiones_encargado")[0]["n"] == 0
    assert sql(url, "SELECT count(*) AS n FROM pasarela_movimientos")[0]["n"] == 0


def test_conversacion_ocupada_da_409_con_retry_after_y_no_es_una_aprobacion_pendiente(bd_url):
    from agente.servicio.fabrica import crear_servicio
    from nucleo.claves_candado import ESPACIO_HILOS

    ajustes = ajustes_web(bd_url)
    servicio = crear_servicio(ajustes, url=bd_url, espera_candado=0.3)
    try:
        with TestClient(crear_app(ajustes, servicio=servicio), raise_server_exceptions=False) as http:
            tok = lambda s: token(ajustes, s)  # noqa: E731
            hilo = abrir_conversacion(http, tok, "C-0004")
            with psycopg.connect(bd_url, autocommit=True) as retenedor:
                retenedor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
                r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA},
                              headers=cab(tok("C-0004")))
                directo = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA},
                                    headers=cab(tok("C-0004"), Accept="text/event-stream"))
                retenedor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
            assert r.status_code == 409, r.text
            assert "ocupada" in r.json()["detalle"] and "pendiente" not in r.json()["detalle"]
            assert int(r.headers["Retry-After"]) >= 1
            assert directo.status_code == 409 and "Retry-After" in directo.headers
            assert http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0004"))).json()["mensajes"] == []
            ok = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA},
                           headers=cab(tok("C-0004")))
            assert ok.status_code == 200, ok.text
    finally:
        servicio.cerrar()


@pytest.mark.temporal
def test_dos_decisiones_a_la_vez_una_gana_y_la_otra_recibe_409(bd_url):
    from agente.bd.pool import abrir_pool
    from agente.servicio.fabrica import crear_servicio
    from caja.pasarela import PasarelaSimulada
    from tests.apoyo.fabricas import PasarelaRetenida

    # La primera decisión se queda en la pasarela hasta que llega la segunda (antes, un
    # retardo de 1,5 s: bajo carga la segunda podía llegar tarde y recibir 404).
    ajustes = ajustes_web(bd_url)
    pool_pasarela = abrir_pool(bd_url, max_size=2)
    pasarela = PasarelaRetenida(PasarelaSimulada(pool=pool_pasarela))
    servicio = crear_servicio(ajustes, url=bd_url, pasarela=pasarela)
    try:
        with TestClient(crear_app(ajustes, servicio=servicio), raise_server_exceptions=False) as http:
            tok = lambda s: token(ajustes, s)  # noqa: E731
            hilo = conversacion_en_pausa(http, tok)
            salida = threading.Barrier(2)
            codigos: list[int] = []

            def decidir():
                salida.wait()
                r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                              headers=cab(tok("enc-talavera")))
                codigos.append(r.status_code)

            hilos = [threading.Thread(target=decidir) for _ in range(2)]
            for h in hilos:
                h.start()
            try:
                # La que gana se queda en la pasarela; la otra vuelve sin esperarla.
                assert pasarela.dentro.wait(60)
                fin = time.monotonic() + 60
                while not codigos and time.monotonic() < fin:
                    time.sleep(0.02)
                assert codigos == [409]
            finally:
                pasarela.soltar.set()
            for h in hilos:
                h.join(timeout=60)
            assert sorted(codigos) == [200, 409]
            assert sql(bd_url, "SELECT count(*) AS n FROM reembolsos")[0]["n"] == 1
    finally:
        servicio.cerrar()
        pool_pasarela.close()


@pytest.mark.temporal
def _abrir_conversacion(http, cabeceras) -> str:
    """Abre una conversación; un 503 con la máquina cargada (el pool de 3 ocupado) se
    reintenta como lo haría un cliente, tras su ``Retry-After``: lo que se prueba son los turnos."""
    for _ in range(5):
        r = http.post("/api/conversaciones", headers=cabeceras)
        if r.status_code != 503:
            break
        time.sleep(float(r.headers.get("Retry-After", "1")))
    assert r.status_code == 201, r.text
    return r.json()["thread_id"]


def test_mas_turnos_simultaneos_que_conexiones_no_agotan_el_pool(bd_url):
    # Pool de 3 (AGENTE_POOL_MAX=5 menos las dos conexiones propias) y cuatro turnos a la
    # vez: ninguno retiene una conexión del pool mientras corre, así que todos acaban.
    ajustes = ajustes_web(bd_url, pool_max=5)
    with cliente_http(ajustes) as http:
        clientes = ["C-0001", "C-0002", "C-0005", "C-0006"]
        hilos_conv = {c: _abrir_conversacion(http, cab(token(ajustes, c, tienda="talavera"))) for c in clientes}
        salida = threading.Barrier(len(clientes))
        codigos: list[int] = []

        def turno(cliente):
            salida.wait()
            r = http.post(f"/api/conversaciones/{hilos_conv[cliente]}/mensajes", json={"texto": "hola"},
                          headers=cab(token(ajustes, cliente, tienda="talavera")))
            codigos.append(r.status_code)

        hilos = [threading.Thread(target=turno, args=(c,)) for c in clientes]
        for h in hilos:
            h.start()
        for h in hilos:
            h.join(timeout=120)
        assert codigos == [200] * len(clientes)


# -- operación, demo, arranque -----------------------------------------------------------


def test_healthz_y_metricas(http, tok):
    assert http.get("/healthz").json() == {"estado": "ok"}
    antes = _metrica(http, "agente_decisiones_total", tipo="edit")
    turnos_antes = _metrica(http, "agente_latencia_turno_segundos_count", estado="esperando_aprobacion")
    hilo = conversacion_en_pausa(http, tok)
    assert _metrica(http, "agente_aprobaciones_pendientes", tienda="talavera") == 1
    assert _metrica(http, "agente_aprobaciones_pendientes", tienda="madrid-centro") == 0
    assert _metrica(http, "agente_latencia_turno_segundos_count", estado="esperando_aprobacion") == turnos_antes + 1
    espera_antes = _metrica(http, "agente_tiempo_hasta_decision_segundos_count")
    http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    assert _metrica(http, "agente_decisiones_total", tipo="edit") == antes + 1
    assert _metrica(http, "agente_tiempo_hasta_decision_segundos_count") == espera_antes + 1
    assert _metrica(http, "agente_aprobaciones_pendientes", tienda="talavera") == 0


def test_error_de_herramienta_se_cuenta_en_metricas(http, tok):
    antes = _metrica(http, "agente_errores_herramienta_total", herramienta="consultar_pedido")
    hilo = abrir_conversacion(http, tok, "C-0001")
    # Un pedido de otro cliente: la herramienta falla (PedidoNoEncontrado) y el agente lo explica.
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DONDE_ESTA}, headers=cab(tok("C-0001")))
    assert r.status_code == 200
    assert _metrica(http, "agente_errores_herramienta_total", herramienta="consultar_pedido") == antes + 1


def test_login_de_demo_emite_tokens_que_funcionan(http):
    identidades = http.get("/api/demo/identidades").json()
    assert {"rol": "encargado", "id": "enc-talavera"}.items() <= next(
        i for i in identidades if i["id"] == "enc-talavera").items()
    r = http.post("/api/demo/login", json={"rol": "cliente", "id": "C-0001"})
    assert r.status_code == 200 and r.json()["destino"] == "/"
    assert http.post("/api/conversaciones", headers=cab(r.json()["token"])).status_code == 201
    r = http.post("/api/demo/login", json={"rol": "encargado", "id": "enc-talavera"})
    assert http.get("/api/aprobaciones", headers=cab(r.json()["token"])).status_code == 200
    assert http.post("/api/demo/login", json={"rol": "encargado", "id": "enc-talavera-baja"}).status_code == 403
    assert http.get("/demo").status_code == 200


def test_fuera_de_demo_no_hay_login_de_demo(bd_url):
    ajustes = ajustes_web(bd_url, demo=False)
    with cliente_http(ajustes) as http:
        assert http.post("/api/demo/login", json={"rol": "cliente", "id": "C-0001"}).status_code == 404
        assert http.get("/api/demo/identidades").status_code == 404
        assert http.get("/demo").status_code == 404
        assert http.get("/").status_code == 200


@pytest.mark.parametrize("secreto", [SECRETO_DEMO, ""])
def test_fuera_de_demo_no_arranca_con_el_secreto_de_serie_o_vacio(bd_url, secreto, monkeypatch):
    with pytest.raises(ErrorConfiguracion, match="AGENTE_SECRETO"):
        crear_app(ajustes_web(bd_url, demo=False, secreto=secreto))
    from agente.cli import app as cli

    monkeypatch.setenv("AGENTE_SECRETO", secreto)
    monkeypatch.setenv("AGENTE_DEMO", "0")
    monkeypatch.setenv("DATABASE_URL", bd_url)
    resultado = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert resultado.exit_code == 2
    lineas = resultado.output.strip().splitlines()
    assert len(lineas) == 1 and lineas[0].startswith("Error: AGENTE_SECRETO")


def test_token_por_cli_funciona_en_la_api(http, bd_url, monkeypatch):
    from agente.cli import app as cli

    monkeypatch.setenv("AGENTE_SECRETO", http.app.state.ajustes.secreto.get_secret_value())
    monkeypatch.setenv("DATABASE_URL", bd_url)
    monkeypatch.delenv("AGENTE_DEMO", raising=False)
    cliente = CliRunner().invoke(cli, ["token", "cliente", "C-0003"])
    assert cliente.exit_code == 0, cliente.output
    assert http.post("/api/conversaciones", headers=cab(cliente.output.strip())).status_code == 201
    encargado = CliRunner().invoke(cli, ["token", "encargado", "enc-madrid-centro"])
    assert http.get("/api/aprobaciones", headers=cab(encargado.output.strip())).status_code == 200
    baja = CliRunner().invoke(cli, ["token", "encargado", "enc-talavera-baja"])
    assert baja.exit_code == 2 and "de baja" in baja.output


EXTERNO = re.compile(r"""(src|href)\s*=\s*["']?(https?:)?//|from\s+["'](https?:)?//|url\(\s*["']?(https?:)?//|jsdelivr|unpkg""")


def test_paginas_y_docs_sin_cdn_y_con_csp(http):
    for ruta in ("/", "/encargado", "/docs"):
        r = http.get(ruta)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in r.headers["content-security-policy"]
    assert http.get("/openapi.json").json()["paths"]["/api/aprobaciones/{thread_id}/decision"]
    for fichero in ESTATICOS.iterdir():
        texto = fichero.read_text(encoding="utf-8")
        assert not EXTERNO.search(texto), fichero.name
        assert "innerHTML" not in texto and "insertAdjacentHTML" not in texto, fichero.name
        assert http.get(f"/estaticos/{fichero.name}").status_code == 200


def test_ruta_desconocida_da_404_en_espanol(http):
    r = http.get("/api/no-existe")
    assert r.status_code == 404
    assert r.json() == {"detalle": "no encontrado"}


def test_readyz_da_503_si_la_base_no_responde_y_healthz_sigue_vivo(http):
    # Cambio intencionado: /healthz es liveness (el proceso) y la base la mira /readyz.
    assert http.get("/readyz").json() == {"estado": "ok"}
    http.app.state.servicio.pool.close()
    r = http.get("/readyz")
    assert r.status_code == 503
    assert r.json() == {"detalle": "la base de datos no responde: vuelve a intentarlo en unos segundos"}
    assert r.headers["Retry-After"] == "5"
    assert http.get("/healthz").json() == {"estado": "ok"}


def test_el_token_de_eventos_no_queda_en_el_log_de_accesos():
    import logging

    from agente.web.app import _SinTokenEnLog

    registro = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                                 ("127.0.0.1:1", "GET", "/api/conversaciones/h-1/eventos?desde=3&token=abc.def.ghi",
                                  "1.1", 200), None)
    _SinTokenEnLog().filter(registro)
    assert "abc.def" not in registro.getMessage()
    assert "desde=3&token=***" in registro.getMessage()


def test_un_405_dice_en_allow_todos_los_metodos_de_la_url(http):
    for ruta, metodos in [("/api/conversaciones", "GET, POST"), ("/api/aprobaciones/h-1/reclamar", "DELETE, POST"),
                          ("/api/politica/talavera", "GET, POST"),
                          # La plantilla más concreta manda: /search no es un {thread_id}.
                          ("/langgraph/threads/search", "POST"), ("/langgraph/threads/h-1/runs/wait", "POST")]:
        r = http.request("OPTIONS", ruta)
        assert r.status_code == 405, (ruta, r.text)
        assert r.headers["allow"] == metodos, ruta


def test_las_fechas_del_historial_son_fecha_y_hora_con_zona_como_dice_el_esquema(http, tok):
    enc = cab(tok("enc-talavera"))
    for valor in ("0.5", "1700000000", "2026-12-01", "2026-12-01T00:00:00"):
        for ruta in ("/api/decisiones", "/api/decisiones.csv"):
            r = http.get(ruta, params={"hasta": valor}, headers=enc)
            assert r.status_code == 422 and "ISO 8601" in r.json()["detalle"], (ruta, valor, r.text)
    assert http.get("/api/decisiones", params={"desde": "2026-12-01T00:00:00Z"}, headers=enc).status_code == 200
    assert http.get("/api/decisiones", params={"hasta": "2026-12-01T00:00:00.000+01:00"}, headers=enc).status_code == 200
