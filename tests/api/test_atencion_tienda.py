"""La tienda sobre las conversaciones de sus clientes (issue 30, punto 8): «Escribir al
cliente», la pestaña «Conversaciones» y la lista de tiendas de la página «Política».

Escribir al cliente nunca toca el agente: con una aprobación pendiente, la fila de la cola,
el último checkpoint y el estado siguen idénticos, y la firma posterior se aplica como siempre.
"""

from __future__ import annotations

from tests.apoyo.firmas import PEDIDO_350, decidir_como, pausa_de_pedido
from tests.apoyo.web_util import conversacion_en_pausa, sql

RUTA = "/api/personal/conversaciones"
PEDIDO_CAFETERA = "P-20260917-0041"


def _escribir(http, como, hilo, quien, texto):
    return http.post(f"{RUTA}/{hilo}/mensajes", headers=como(quien), json={"texto": texto})


def _foto_de_la_pausa(bd_url, hilo):
    """Todo lo que define la pausa: su fila en la cola, el último checkpoint y el estado."""
    cola = sql(bd_url, "SELECT * FROM aprobaciones_pendientes WHERE thread_id = %(h)s", {"h": hilo})
    checkpoint = sql(bd_url, "SELECT max(checkpoint_id) AS id, count(*) AS n FROM checkpoints "
                             "WHERE thread_id = %(h)s", {"h": hilo})
    escrituras = sql(bd_url, "SELECT count(*) AS n FROM checkpoint_writes WHERE thread_id = %(h)s", {"h": hilo})
    estado = sql(bd_url, "SELECT estado FROM consultas_asistente WHERE thread_id = %(h)s", {"h": hilo})
    decisiones = sql(bd_url, "SELECT count(*) AS n FROM decisiones_encargado WHERE thread_id = %(h)s", {"h": hilo})
    return cola, checkpoint, escrituras, estado, decisiones


def test_escribir_al_cliente_no_cambia_la_aprobacion_pendiente(http, tok, como, bd_url):
    hilo = conversacion_en_pausa(http, tok)
    antes = _foto_de_la_pausa(bd_url, hilo)
    assert antes[0] and antes[0][0]["estado"] == "pendiente"
    tarjeta_antes = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()

    r = _escribir(http, como, hilo, "enc-talavera", "Hola Ana, soy Lucía: lo reviso esta tarde.")
    assert r.status_code == 201, r.text
    creado = r.json()
    assert creado["autor"] == "Lucía Moreno" and creado["thread_id"] == hilo

    assert _foto_de_la_pausa(bd_url, hilo) == antes  # misma fila, mismo checkpoint, sin decisión
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    assert tarjeta["acciones"] == tarjeta_antes["acciones"]
    assert tarjeta["requisito"] == tarjeta_antes["requisito"] and tarjeta["firmas"] == tarjeta_antes["firmas"]
    # Queda en la transcripción de la tarjeta, con su autor.
    assert {"rol": "tienda", "autor": "Lucía Moreno"}.items() <= tarjeta["conversacion"][-1].items()

    # El cliente lo ve en su conversación, firmado, y sigue esperando a la tienda.
    conv = http.get(f"/api/conversaciones/{hilo}", headers=como("C-0001")).json()
    assert conv["estado"] == "esperando_aprobacion"
    ultimo = conv["mensajes"][-1]
    assert (ultimo["rol"], ultimo["autor"], ultimo["id"]) == ("tienda", "Lucía Moreno", creado["id"])
    # Auditado: quién, cuándo, qué y en qué hilo.
    fila = sql(bd_url, "SELECT * FROM mensajes_tienda WHERE id = %(id)s", {"id": creado["id"]})[0]
    assert (fila["encargado_id"], fila["thread_id"], fila["tienda"]) == ("enc-talavera", hilo, "talavera")
    assert fila["texto"] == "Hola Ana, soy Lucía: lo reviso esta tarde." and fila["creado"] is not None

    # Sin el chat abierto, el aviso por correo de siempre; uno solo aunque escriba otra vez.
    avisos = "SELECT count(*) AS n FROM avisos_salida WHERE thread_id = %(h)s AND tipo = 'cliente'"
    assert sql(bd_url, avisos, {"h": hilo})[0]["n"] == 1
    assert _escribir(http, como, hilo, "enc-talavera", "Y te llamo mañana.").status_code == 201
    assert sql(bd_url, avisos, {"h": hilo})[0]["n"] == 1
    assert _foto_de_la_pausa(bd_url, hilo) == antes

    # La firma después se aplica como siempre (la pausa no se tocó).
    r = decidir_como(http, como, hilo, "enc-talavera")
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"


def test_solo_personal_de_la_tienda_escribe(http, tok, como, bd_url):
    hilo = conversacion_en_pausa(http, tok)  # de talavera
    assert _escribir(http, como, hilo, "enc-madrid-centro", "Hola").status_code == 403
    assert http.get(f"{RUTA}/{hilo}", headers=como("enc-madrid-centro")).status_code == 403
    r = _escribir(http, como, hilo, "C-0001", "Hola")
    assert r.status_code == 403 and "encargado" in r.json()["detalle"]
    assert http.get(RUTA, headers=como("C-0001")).status_code == 403
    assert _escribir(http, como, "h-no-existe", "enc-talavera", "Hola").status_code == 404
    assert _escribir(http, como, hilo, "reg-centro", "Soy la regional").status_code == 201  # su región
    assert sql(bd_url, "SELECT count(*) AS n FROM mensajes_tienda")[0]["n"] == 1


def test_el_texto_se_valida(http, tok, como, bd_url):
    hilo = conversacion_en_pausa(http, tok)
    for texto, parte in (("", "vacío"), ("   ", "vacío"), ("x" * 2001, "2000"),
                         ("Mira <b>esto</b>", "HTML"), ("<script>alert(1)</script>", "HTML")):
        r = _escribir(http, como, hilo, "enc-talavera", texto)
        assert r.status_code == 422, (texto, r.text)
        assert parte in r.json()["detalle"], (texto, r.json())
    assert _escribir(http, como, hilo, "enc-talavera", "Cuesta < 50 € y 3 > 2").status_code == 201
    assert sql(bd_url, "SELECT count(*) AS n FROM mensajes_tienda")[0]["n"] == 1


def test_la_busqueda_da_la_conversacion_con_su_estado(http, tok, como):
    hilo = conversacion_en_pausa(http, tok)
    buscar = lambda quien, **q: http.get(RUTA, headers=como(quien), params=q)  # noqa: E731

    r = buscar("enc-talavera", cliente="ana garcía")
    assert r.status_code == 200, r.text
    fila = next(c for c in r.json()["conversaciones"] if c["thread_id"] == hilo)
    assert fila["estado_cliente"] == "esperando_tienda" and fila["pendiente"] is True
    assert fila["cliente_id"] == "C-0001" and PEDIDO_CAFETERA in fila["pedidos"]
    # El mismo estado que lee el cliente en «Tus conversaciones».
    portal = http.get("/api/conversaciones", headers=como("C-0001")).json()
    assert next(c for c in portal if c["thread_id"] == hilo)["estado_cliente"] == fila["estado_cliente"]

    assert [c["thread_id"] for c in buscar("enc-talavera", pedido=PEDIDO_CAFETERA).json()["conversaciones"]] == [hilo]
    assert buscar("enc-talavera", pedido="P-20260920-0102").json()["total"] == 0
    assert buscar("enc-talavera", estado="esperando_tienda").json()["total"] == 1
    assert buscar("enc-talavera", estado="resuelta").json()["total"] == 0
    assert buscar("enc-madrid-centro", cliente="C-0001").json()["total"] == 0  # otra tienda
    assert buscar("reg-centro", cliente="C-0001").json()["total"] == 1  # su región
    assert buscar("enc-talavera", tienda="madrid-centro").status_code == 403
    assert buscar("enc-talavera", estado="cerrada").status_code == 422

    # Se resuelve: cambia de estado en la búsqueda, igual que en el portal.
    assert decidir_como(http, como, hilo, "enc-talavera").json()["estado"] == "aplicada"
    resuelta = buscar("enc-talavera", estado="resuelta").json()
    assert [c["thread_id"] for c in resuelta["conversaciones"]] == [hilo]
    portal = http.get("/api/conversaciones", headers=como("C-0001")).json()
    assert next(c for c in portal if c["thread_id"] == hilo)["estado_cliente"] == "resuelta"

    # Transcripción con los mensajes de la tienda en su sitio.
    assert _escribir(http, como, hilo, "enc-talavera", "¿Todo bien con el reembolso?").status_code == 201
    t = http.get(f"{RUTA}/{hilo}", headers=como("enc-talavera")).json()
    assert [m["rol"] for m in t["mensajes"]][-1] == "tienda" and t["mensajes"][0]["rol"] in ("cliente", "agente")
    assert [m["id"] for m in t["mensajes"]] == sorted(m["id"] for m in t["mensajes"])


def test_paginas(http, tok, como):
    # Dos pausas de dos clientes: una segunda petición por las mismas unidades no abre tarjeta.
    hilos = [conversacion_en_pausa(http, tok), pausa_de_pedido(http, como, "C-0009", PEDIDO_350)]
    uno = http.get(RUTA, headers=como("enc-talavera"), params={"por_pagina": 1}).json()
    dos = http.get(RUTA, headers=como("enc-talavera"), params={"por_pagina": 1, "pagina": 2}).json()
    assert uno["total"] == dos["total"] == 2
    assert {uno["conversaciones"][0]["thread_id"], dos["conversaciones"][0]["thread_id"]} == set(hilos)


def test_tiendas_de_la_pagina_de_politica(http, como):
    assert http.get("/api/politica", headers=como("enc-talavera")).status_code == 403
    assert http.get("/api/politica", headers=como("C-0001")).status_code == 403
    gerente = http.get("/api/politica", headers=como("ger-talavera")).json()
    assert [t["id"] for t in gerente["tiendas"]] == ["talavera"]
    assert gerente["reglas"]["reembolso"] == "reembolsos"
    assert {"clave": "horas_caducidad", "tipo": "entero"}.items() <= next(
        v for v in gerente["valores"] if v["clave"] == "horas_caducidad").items()
    regional = http.get("/api/politica", headers=como("reg-centro")).json()
    assert {t["id"] for t in regional["tiendas"]} == {"talavera", "madrid-centro"}


def test_el_estado_es_el_mismo_que_ve_el_cliente(http, tok, como):
    """La regla de ``portal_cliente`` (Python) y la de la búsqueda (SQL) dan lo mismo."""
    conversacion_en_pausa(http, tok)  # C-0001: esperando a la tienda
    for texto in ("Quiero devolver el pedido P-20260920-0102", "¿Dónde está mi pedido P-20260928-0039?"):
        hilo = http.post("/api/conversaciones", headers=como("C-0002")).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=como("C-0002"), json={"texto": texto})
        assert r.status_code == 200, r.text
    tienda = {c["thread_id"]: c["estado_cliente"]
              for c in http.get(RUTA, headers=como("enc-talavera")).json()["conversaciones"]}
    portal = {c["thread_id"]: c["estado_cliente"] for cliente in ("C-0001", "C-0002")
              for c in http.get("/api/conversaciones", headers=como(cliente)).json() if c["mensajes"]}
    assert tienda == portal
    assert set(tienda.values()) == {"esperando_tienda", "resuelta", "abierta"}
