"""La bandeja de producto por la API: ficha de la aprobación, nota, «lo atiendo yo», mensajes
retenidos contestados, historial de decisiones (filtros, páginas, CSV) y el chat del cliente."""

from __future__ import annotations

import csv
import io
import queue
import threading
import time

import httpx
import psycopg
import pytest

from agente.web.app import crear_app
from tests.apoyo.web_util import (
    DEVOLVER_SABANAS,
    EDITAR_A_90,
    abrir_conversacion,
    cab,
    conversacion_en_pausa,
    eventos_sse,
    servidor_en_hilo,
    sql,
)

DONDE_JARRA = "¿Dónde está mi pedido P-20260919-0055?"
NOTA = "Te devolvemos 90 € porque la caja llegó abierta."


def _retener(http, tok, hilo, texto, cliente="C-0001"):
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok(cliente)))
    assert r.status_code == 409, r.text


def _enc2(tok):
    return cab(tok("enc-talavera-2", tienda="talavera"))


def test_la_ficha_trae_la_transcripcion_con_el_retenido_el_historial_y_las_lineas_del_libro(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    _retener(http, tok, hilo, "La jarra llegó rota, por cierto")
    ficha = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-talavera"))).json()

    conversacion = ficha["conversacion"]
    assert [m["rol"] for m in conversacion] == ["cliente", "agente", "cliente"]
    assert conversacion[0]["texto"].startswith("Quiero devolver la cafetera")
    assert [m["retenido"] for m in conversacion] == [False, False, True]
    assert all(m["fecha"] for m in conversacion)

    historial = ficha["historial_cliente"]
    assert historial["dias"] == 90
    pedidos = {p["id"] for p in historial["pedidos"]}
    assert {"P-20260917-0041", "P-20260919-0055"} <= pedidos
    assert set(historial) >= {"reembolsos", "cambios", "devoluciones"}

    pedido = ficha["pedidos"]["P-20260917-0041"]
    (linea,) = pedido["lineas"]
    assert linea["sku"] == "CAF-001" and linea["producto"] != "CAF-001"  # el nombre, no el SKU
    assert (linea["estado"], linea["reembolsable"], linea["unidades_libres"]) == ("sin compensar", "120.00", 1)
    # La lista no carga la ficha entera: solo la aprobación.
    lista = http.get("/api/aprobaciones", headers=cab(tok("enc-talavera"))).json()
    assert lista[0]["conversacion"] is None and lista[0]["historial_cliente"] is None


def test_la_ficha_ensena_lo_que_el_cliente_ya_recibio(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    otra = conversacion_en_pausa(http, tok, "C-0001", "Quiero devolver los cojines del pedido P-20260925-0036 porque no me gustan")
    ficha = http.get(f"/api/aprobaciones/{otra}", headers=cab(tok("enc-talavera"))).json()
    assert [(r["pedido"], r["importe"]) for r in ficha["historial_cliente"]["reembolsos"]] == [
        ("P-20260917-0041", "90.00")]
    (linea,) = ficha["pedidos"]["P-20260925-0036"]["lineas"]
    assert (linea["unidades"], linea["estado"]) == (3, "sin compensar")


def test_el_estado_de_cada_linea_sale_del_libro():
    from agente.servicio.decisiones.ficha import estado_linea

    def linea(reembolsadas, cambiadas, libres):
        return {"unidades_reembolsadas": reembolsadas, "unidades_cambiadas": cambiadas, "unidades_libres": libres}

    assert estado_linea(linea(0, 0, 2)) == "sin compensar"
    assert estado_linea(linea(1, 0, 1)) == "en parte"
    assert estado_linea(linea(2, 0, 0)) == "reembolsada"
    assert estado_linea(linea(0, 1, 0)) == "cambiada"
    assert estado_linea(linea(1, 1, 0)) == "en parte"


def test_editar_con_nota_llega_al_cliente_sin_la_propuesta_interna_y_el_retenido_se_contesta(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    _retener(http, tok, hilo, DONDE_JARRA)
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={**EDITAR_A_90, "nota": NOTA},
                  headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    final = r.json()["mensaje_cliente"]
    assert final.endswith(f"Nota del encargado: {NOTA}")
    assert "90,00 EUR" in final and "120,00" not in final and "propuesta" not in final

    mensajes = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()["mensajes"]
    textos = [(m["rol"], m["texto"]) for m in mensajes]
    posicion = textos.index(("agente", final))
    # Después del mensaje final, la respuesta a lo que escribió mientras esperaba.
    assert textos[posicion + 1][0] == "agente"
    assert "P-20260919-0055" in textos[posicion + 1][1]
    assert textos.index(("cliente", DONDE_JARRA)) < posicion


def test_sin_retenidos_la_decision_no_ejecuta_un_turno_mas(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    mensajes = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()["mensajes"]
    assert mensajes[-1]["texto"] == r.json()["mensaje_cliente"]
    assert [m["rol"] for m in mensajes] == ["cliente", "agente", "agente"]


def test_la_nota_va_al_final_del_mensaje_con_cualquier_decision_y_tiene_limite(http, tok):
    hilo = conversacion_en_pausa(http, tok)
    enc = cab(tok("enc-talavera"))
    url = f"/api/aprobaciones/{hilo}/decision"
    assert http.post(url, json={**EDITAR_A_90, "nota": "x" * 2001}, headers=enc).status_code == 422
    assert http.get(f"/api/aprobaciones/{hilo}", headers=enc).json()["estado"] == "pendiente"
    r = http.post(url, json={"decisiones": [{"type": "reject", "message": "no procede"}],
                             "nota": "Pásate por la tienda y lo vemos."}, headers=enc)
    assert r.status_code == 200
    assert r.json()["mensaje_cliente"].endswith("Nota del encargado: Pásate por la tienda y lo vemos.")
    # También con una aprobación: el esquema no la ata a un tipo de decisión, la API tampoco.
    otro = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/aprobaciones/{otro}/decision",
                  json={"decisiones": [{"type": "approve"}], "nota": "Gracias por tu paciencia."}, headers=enc)
    assert r.status_code == 200, r.text
    assert r.json()["mensaje_cliente"].endswith("Nota del encargado: Gracias por tu paciencia.")


def test_lo_atiendo_yo_lo_ven_los_demas_y_se_suelta_al_decidir_o_al_vencer(http, tok, bd_url):
    hilo = conversacion_en_pausa(http, tok)
    url = f"/api/aprobaciones/{hilo}/reclamar"
    r = http.post(url, headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    assert r.json()["encargado"] == "enc-talavera"
    visto = http.get("/api/aprobaciones", headers=_enc2(tok)).json()[0]["reclamada"]
    assert visto["encargado"] == "enc-talavera"
    assert http.post(url, headers=_enc2(tok)).status_code == 409
    assert http.delete(url, headers=_enc2(tok)).status_code == 409
    assert http.post(url, headers=cab(tok("enc-madrid-centro"))).status_code == 403
    assert http.post("/api/aprobaciones/h-no-existe/reclamar", headers=cab(tok("enc-talavera"))).status_code == 404
    # Vencida: otro la puede reclamar.
    sql(bd_url, "UPDATE aprobaciones_pendientes SET reclamada_hasta = now() - interval '1 second'")
    assert http.get(f"/api/aprobaciones/{hilo}", headers=_enc2(tok)).json()["reclamada"] is None
    assert http.post(url, headers=_enc2(tok)).status_code == 200
    assert http.delete(url, headers=_enc2(tok)).status_code == 204
    assert http.get(f"/api/aprobaciones/{hilo}", headers=_enc2(tok)).json()["reclamada"] is None
    # Reclamada y decidida: ya no hay nada que reclamar.
    assert http.post(url, headers=cab(tok("enc-talavera"))).status_code == 200
    http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=_enc2(tok))
    assert http.post(url, headers=cab(tok("enc-talavera"))).status_code == 404


def _decidir_tres(http, tok):
    """Tres decisiones: una edición en Talavera, un rechazo en Talavera y una en Madrid."""
    editada = conversacion_en_pausa(http, tok)
    http.post(f"/api/aprobaciones/{editada}/decision", json={**EDITAR_A_90, "nota": "=HYPERLINK(1)"},
              headers=cab(tok("enc-talavera")))
    rechazada = conversacion_en_pausa(http, tok, "C-0005", "Quiero devolver la batidora del pedido P-20260922-0077 porque no funciona")
    http.post(f"/api/aprobaciones/{rechazada}/decision",
              json={"decisiones": [{"type": "reject", "message": "fuera de plazo"}]}, headers=_enc2(tok))
    madrid = conversacion_en_pausa(http, tok, "C-0003", DEVOLVER_SABANAS)
    http.post(f"/api/aprobaciones/{madrid}/decision", json={"decisiones": [{"type": "approve"}]},
              headers=cab(tok("enc-madrid-centro")))
    return editada, rechazada, madrid


def test_el_historial_solo_ensena_sus_tiendas_con_filtros_y_paginas(http, tok):
    editada, rechazada, madrid = _decidir_tres(http, tok)
    enc = cab(tok("enc-talavera"))
    pagina = http.get("/api/decisiones", headers=enc).json()
    assert pagina["total"] == 2
    assert [d["thread_id"] for d in pagina["decisiones"]] == [rechazada, editada]  # la más reciente primero
    primera = pagina["decisiones"][1]
    assert (primera["tipo"], primera["encargado"]["id"], primera["cliente"]["id"]) == ("edit", "enc-talavera", "C-0001")
    (accion,) = primera["acciones"]
    assert (accion["importe_propuesto"], accion["importe_final"], accion["pedido"]) == ("120.00", "90.00", "P-20260917-0041")

    def ids(**filtros):
        r = http.get("/api/decisiones", params=filtros, headers=enc)
        assert r.status_code == 200, r.text
        return [d["thread_id"] for d in r.json()["decisiones"]]

    assert ids(decision="edit") == [editada]
    assert ids(decision="reject") == [rechazada]
    assert ids(encargado="enc-talavera-2") == [rechazada]
    assert ids(cliente="C-0005") == [rechazada]
    assert ids(pedido="P-20260917-0041") == [editada]
    assert ids(desde="2999-01-01T00:00:00Z") == []
    assert ids(por_pagina=1, pagina=2) == [editada]
    assert http.get("/api/decisiones", params={"por_pagina": 1}, headers=enc).json()["total"] == 2
    assert http.get("/api/decisiones", params={"tienda": "madrid-centro"}, headers=enc).status_code == 403
    assert http.get("/api/decisiones", params={"decision": "quizas"}, headers=enc).status_code == 422
    assert http.get("/api/decisiones", headers=cab(tok("C-0001"))).status_code == 403
    en_madrid = http.get("/api/decisiones", headers=cab(tok("enc-madrid-centro"))).json()
    assert [d["thread_id"] for d in en_madrid["decisiones"]] == [madrid]


def test_el_csv_tiene_una_fila_por_operacion_y_no_deja_formulas(http, tok):
    editada, rechazada, _ = _decidir_tres(http, tok)
    r = http.get("/api/decisiones.csv", params={"decision": "edit", "formato": "maquina"}, headers=cab(tok("enc-talavera")))
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    filas = list(csv.DictReader(io.StringIO(r.text)))
    assert [f["hilo"] for f in filas] == [editada]
    assert (filas[0]["importe_final"], filas[0]["decision"], filas[0]["nota"]) == ("90.00", "edit", "'=HYPERLINK(1)")
    todas = list(csv.DictReader(io.StringIO(http.get("/api/decisiones.csv?formato=maquina", headers=cab(tok("enc-talavera"))).text)))
    assert {f["hilo"] for f in todas} == {editada, rechazada}


def test_el_cliente_ve_sus_pedidos_y_sus_conversaciones_la_pendiente_primero(http, tok):
    pedidos = http.get("/api/pedidos", headers=cab(tok("C-0001"))).json()
    assert {"P-20260917-0041", "P-20260919-0055"} <= {p["id"] for p in pedidos}
    cafetera = next(p for p in pedidos if p["id"] == "P-20260917-0041")
    assert (cafetera["importe"], cafetera["estado"]) == ("120.00", "entregado") and cafetera["productos"]
    assert not {p["id"] for p in pedidos} & {p["id"] for p in http.get("/api/pedidos", headers=cab(tok("C-0003"))).json()}

    pendiente = conversacion_en_pausa(http, tok)
    nueva = abrir_conversacion(http, tok, "C-0001")
    lista = http.get("/api/conversaciones", headers=cab(tok("C-0001"))).json()
    assert [c["thread_id"] for c in lista] == [pendiente, nueva]
    assert lista[0]["estado"] == "esperando_aprobacion" and "pendiente" in lista[0]["ultimo_texto"]
    assert http.get("/api/conversaciones", headers=cab(tok("C-0003"))).json() == []
    assert http.get("/api/pedidos", headers=cab(tok("enc-talavera"))).status_code == 403


def _escuchar(url: str, recibidos: queue.Queue, abierto: threading.Event, tok: str) -> None:
    try:
        with httpx.stream("GET", url, headers={"Authorization": f"Bearer {tok}"},
                          timeout=httpx.Timeout(60, read=60)) as r:
            abierto.set()
            for tipo, datos in eventos_sse(r.iter_lines()):
                recibidos.put((tipo, datos))
    except httpx.HTTPError:
        pass  # el servidor de la prueba se para con el flujo abierto


def _bandeja_en_vivo(base: str, tok: str) -> queue.Queue:
    """Abre la bandeja en vivo en otro hilo; sus eventos llegan a la cola devuelta."""
    recibidos: queue.Queue = queue.Queue()
    abierto = threading.Event()
    url = f"{base}/api/aprobaciones/eventos"
    threading.Thread(target=_escuchar, args=(url, recibidos, abierto, tok), daemon=True).start()
    assert abierto.wait(20)
    return recibidos


def test_la_bandeja_en_vivo_avisa_de_una_pausa_nueva_sin_sondear(ajustes):
    from tests.apoyo.web_util import token

    with servidor_en_hilo(crear_app(ajustes)) as base:
        recibidos = _bandeja_en_vivo(base, token(ajustes, "enc-talavera"))
        tipo, datos = recibidos.get(timeout=20)
        assert (tipo, datos["pendientes"]) == ("bandeja", 0)
        cliente = {"Authorization": f"Bearer {token(ajustes, 'C-0001')}"}
        hilo = httpx.post(f"{base}/api/conversaciones", headers=cliente).json()["thread_id"]
        httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=cliente, timeout=60,
                   json={"texto": "Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea"})
        tipo, datos = recibidos.get(timeout=10)  # mucho menos que la relectura de 15 s
        assert (tipo, datos["pendientes"]) == ("bandeja", 1)
        assert datos["aprobaciones"][0]["thread_id"] == hilo
        cliente_c1 = {"Authorization": f"Bearer {token(ajustes, 'C-0001')}"}
        assert httpx.get(f"{base}/api/aprobaciones/eventos", headers=cliente_c1).status_code == 403
        # El token en la URL ya no vale (acabaría en el log de accesos): 401.
        enc = token(ajustes, "enc-talavera")
        assert httpx.get(f"{base}/api/aprobaciones/eventos?token={enc}").status_code == 401


@pytest.mark.temporal
def test_la_bandeja_en_vivo_no_relee_una_vez_por_aviso(ajustes, bd_url, monkeypatch):
    # Cien avisos de otros chats de golpe (lo que da un centenar de turnos en curso).
    from agente.web.en_vivo import bandeja as eventos_bandeja
    from tests.apoyo.web_util import token

    lecturas: list[float] = []
    original = eventos_bandeja.lista_bandeja

    def contar(*args, **kwargs):
        lecturas.append(time.monotonic())
        return original(*args, **kwargs)

    monkeypatch.setattr(eventos_bandeja, "lista_bandeja", contar)
    with servidor_en_hilo(crear_app(ajustes)) as base:
        recibidos = _bandeja_en_vivo(base, token(ajustes, "enc-talavera"))
        assert recibidos.get(timeout=20)[0] == "bandeja"
        antes = len(lecturas)
        inicio = time.monotonic()
        with psycopg.connect(bd_url, autocommit=True) as c:
            for i in range(100):
                c.execute("SELECT pg_notify('mensajes_hilo', %s)", (f"otro-hilo-{i}",))
        envio = time.monotonic() - inicio
        time.sleep(2 * eventos_bandeja.AGRUPAR_SEGUNDOS + 0.5)
        releidas = len(lecturas) - antes
    assert releidas >= 1  # los avisos sí llegan
    assert releidas <= 2 + envio / eventos_bandeja.AGRUPAR_SEGUNDOS
