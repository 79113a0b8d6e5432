"""Cambiar la dirección de envío de un pedido pendiente, de punta a punta por la API HTTP
con el modelo offline (issue 27, operación 4).

P-20260914-0025 es de C-0007 (Madrid-Centro), pendiente, 30,00 EUR, y va a su dirección de
la demo (Calle de Fuencarral 101, 2º B, 28004 Madrid). A 28013 Madrid se cambia sola; a
08001 Barcelona firma un encargado, que ve la antigua y la nueva. Se comprueban la base (la
dirección del pedido y el registro CD-...), lo que lee el cliente, la tarjeta, el historial
y el CSV, la auditoría y lo que se rechaza (pedido enviado, código postal imposible).
"""

# ruff: noqa: F811 - las fixtures importadas de otro módulo de pruebas se piden por nombre
from __future__ import annotations

import csv
import io
import re

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import informe
from nucleo.contexto import ContextoCliente
from nucleo.direcciones import PROVINCIAS, CodigoPostalNoValido, provincia_de
from nucleo.errores import ErrorDominio
from operaciones.direccion.herramienta import cambiar_direccion
from tests.apoyo.fabricas import consultar, uno
from tests.apoyo.firmas import TIENDA_DE
from tests.apoyo.web_util import cab

PEDIDO = "P-20260914-0025"
ENVIADO = "P-20260925-0150"  # C-0004, enviado
MADRID = "Cambia la dirección de envío del pedido P-20260914-0025 a Calle Mayor 5, 28013 Madrid"
BARCELONA = "Quiero cambiar la dirección de envío del pedido P-20260914-0025 a Carrer de Balmes 10, 08001 Barcelona"
DIRECCION_PEDIDO_SQL = "SELECT calle, codigo_postal, localidad, provincia FROM pedidos WHERE id = %(p)s"
CAMBIOS_SQL = ("SELECT numero, pedido_id, calle_anterior, codigo_postal_anterior, provincia_anterior, calle, "
               "codigo_postal, localidad, provincia, aprobado_por FROM cambios_direccion ORDER BY id")


def _hablar(http, tok, cliente: str, texto: str) -> tuple[str, dict]:
    cabecera = cab(tok(cliente, tienda=TIENDA_DE[cliente]))
    r = http.post("/api/conversaciones", headers=cabecera)
    assert r.status_code == 201, r.text
    hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cabecera)
    assert r.status_code == 200, r.text
    return hilo, r.json()


def _texto(respuesta: dict) -> str:
    return "\n".join(m["texto"] for m in respuesta["mensajes"])


def _direccion(bd_url, pedido=PEDIDO) -> dict:
    return consultar(bd_url, DIRECCION_PEDIDO_SQL, {"p": pedido})[0]


def test_la_demo_da_a_cada_pedido_la_direccion_de_su_cliente_en_la_provincia_de_su_tienda(bd_url):
    assert _direccion(bd_url) == {"calle": "Calle de Fuencarral 101, 2º B", "codigo_postal": "28004",
                                  "localidad": "Madrid", "provincia": "Madrid"}
    filas = consultar(bd_url, "SELECT p.tienda, p.provincia, p.codigo_postal, c.codigo_postal AS del_cliente "
                              "FROM pedidos p JOIN clientes c ON c.id = p.cliente_id")
    assert filas and all(f["codigo_postal"] == f["del_cliente"] for f in filas)
    assert {(f["tienda"], f["provincia"]) for f in filas} == {("talavera", "Toledo"), ("madrid-centro", "Madrid")}


def test_en_la_misma_provincia_se_cambia_sola_y_el_cliente_lee_la_nueva(http, tok, bd_url):
    _hilo, r = _hablar(http, tok, "C-0007", MADRID)
    assert r["estado"] == "respondida", r
    texto = _texto(r)
    assert "He cambiado la dirección de envío del pedido P-20260914-0025" in texto
    assert "Calle Mayor 5, 28013 Madrid (Madrid)" in texto and "CD-000001" in texto
    assert "Fuencarral" in texto  # la anterior, que es suya
    assert not re.search(r"\b[A-Z]{3}-\d{3}\b", texto)  # ningún SKU
    assert _direccion(bd_url) == {"calle": "Calle Mayor 5", "codigo_postal": "28013", "localidad": "Madrid",
                                  "provincia": "Madrid"}
    assert consultar(bd_url, CAMBIOS_SQL) == [{
        "numero": "CD-000001", "pedido_id": PEDIDO, "calle_anterior": "Calle de Fuencarral 101, 2º B",
        "codigo_postal_anterior": "28004", "provincia_anterior": "Madrid", "calle": "Calle Mayor 5",
        "codigo_postal": "28013", "localidad": "Madrid", "provincia": "Madrid", "aprobado_por": None}]
    # Sin dinero ni género: ningún movimiento de pasarela, ninguna cola para el encargado.
    assert uno(bd_url, "SELECT count(*) FROM libro_movimientos") == 0
    assert http.get("/api/aprobaciones", headers=cab(tok("enc-madrid-centro"))).json() == []
    assert uno(bd_url, "SELECT count(*) FROM efectos WHERE tipo = 'direccion'") == 1


def test_a_otra_provincia_firma_un_encargado_que_ve_la_antigua_y_la_nueva(http, tok, bd_url):
    hilo, r = _hablar(http, tok, "C-0007", BARCELONA)
    assert r["estado"] == "esperando_aprobacion", r
    espera = _texto(r)
    assert "cambio de la dirección de envío del pedido P-20260914-0025 a Carrer de Balmes 10, 08001 Barcelona" in espera
    assert _direccion(bd_url)["codigo_postal"] == "28004"  # nada cambia antes de la firma
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 0

    encargado = cab(tok("enc-madrid-centro"))
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=encargado)
    assert tarjeta.status_code == 200, tarjeta.text
    (accion,) = tarjeta.json()["acciones"]
    assert accion["titulo"] == "Cambio de dirección de envío"
    assert [c["etiqueta"] for c in accion["campos"]] == [
        "Pedido", "Calle y número nuevos", "Código postal nuevo", "Localidad nueva"]
    (motivo,) = accion["motivos"]
    assert motivo == ("cambia de provincia: de Calle de Fuencarral 101, 2º B, 28004 Madrid (Madrid) "
                      "a Carrer de Balmes 10, 08001 Barcelona (Barcelona)")
    assert tarjeta.json()["requisito"]["rol_minimo"] == "encargado"
    assert tarjeta.json()["requisito"]["importe"] == "30.00"  # el importe del pedido

    # Otra tienda no la decide; el encargado de la suya, sí.
    ajeno = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                      headers=cab(tok("enc-talavera")))
    assert ajeno.status_code in (403, 404), ajeno.text
    decision = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                         headers=encargado)
    assert decision.status_code == 200 and decision.json()["estado"] == "aplicada", decision.text

    conversacion = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0007", tienda="madrid-centro"))).json()
    final = conversacion["mensajes"][-1]["texto"]
    assert "He cambiado la dirección de envío del pedido P-20260914-0025" in final
    assert "Carrer de Balmes 10, 08001 Barcelona (Barcelona)" in final
    assert _direccion(bd_url) == {"calle": "Carrer de Balmes 10", "codigo_postal": "08001",
                                  "localidad": "Barcelona", "provincia": "Barcelona"}
    (cambio,) = consultar(bd_url, CAMBIOS_SQL)
    assert (cambio["provincia_anterior"], cambio["provincia"], cambio["aprobado_por"]) == (
        "Madrid", "Barcelona", "enc-madrid-centro")

    # Historial de decisiones y CSV: la operación, su pedido y quién firmó (sin importe: no mueve dinero).
    decididas = http.get("/api/decisiones", headers=encargado)
    assert decididas.status_code == 200, decididas.text
    (decidida,) = decididas.json()["decisiones"]
    assert [(a["nombre"], a["pedido"], a["tipo"], a["importe_propuesto"]) for a in decidida["acciones"]] == [
        ("cambiar_direccion", PEDIDO, "approve", None)]
    filas = list(csv.DictReader(io.StringIO(http.get("/api/decisiones.csv?formato=maquina", headers=encargado).text)))
    assert [(f["operacion"], f["pedido"], f["encargado"], f["estado"]) for f in filas] == [
        ("cambiar_direccion", PEDIDO, "enc-madrid-centro", "aplicada")]

    # La auditoría: firmado, cuadra.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []


def test_el_encargado_rechaza_y_nada_cambia(http, tok, bd_url):
    hilo, r = _hablar(http, tok, "C-0007", BARCELONA)
    assert r["estado"] == "esperando_aprobacion"
    decision = http.post(f"/api/aprobaciones/{hilo}/decision",
                         json={"decisiones": [{"type": "reject", "message": "Dirección sin verificar"}]},
                         headers=cab(tok("enc-madrid-centro")))
    assert decision.status_code == 200, decision.text
    final = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0007", tienda="madrid-centro"))).json()["mensajes"][-1]["texto"]
    assert "no ha aprobado" in final and "Dirección sin verificar" in final
    assert _direccion(bd_url)["codigo_postal"] == "28004"
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 0


def test_un_pedido_caro_pide_firma_aunque_no_cambie_de_provincia(http, tok, bd_url):
    # limite_cambio_direccion de la tienda por debajo de los 30,00 EUR del pedido.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE politicas_tienda SET limite_cambio_direccion = 20 WHERE tienda = 'madrid-centro'")
    hilo, r = _hablar(http, tok, "C-0007", MADRID)
    assert r["estado"] == "esperando_aprobacion", r
    (accion,) = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-madrid-centro"))).json()["acciones"]
    assert accion["motivos"][0].startswith("pedido de 30,00 EUR (límite 20,00 EUR")


def test_un_pedido_enviado_no_cambia_y_el_cliente_lee_que_puede_hacer(http, tok, bd_url):
    antes = _direccion(bd_url, ENVIADO)
    _hilo, r = _hablar(http, tok, "C-0004", MADRID.replace(PEDIDO, ENVIADO))
    assert r["estado"] == "respondida"
    texto = _texto(r)
    assert "ya ha salido" in texto and "rechazar la entrega" in texto
    assert _direccion(bd_url, ENVIADO) == antes
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 0


def test_un_codigo_postal_imposible_no_cambia_nada(http, tok, bd_url):
    _hilo, r = _hablar(http, tok, "C-0007", MADRID.replace("28013", "99001"))
    assert r["estado"] == "respondida"
    assert "El código postal 99001 no es válido" in _texto(r)
    assert _direccion(bd_url)["codigo_postal"] == "28004"
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 0
    assert http.get("/api/aprobaciones", headers=cab(tok("enc-madrid-centro"))).json() == []


# -- la herramienta, sin agente ------------------------------------------------------------------


def _ctx() -> ContextoCliente:
    return ContextoCliente(cliente_id="C-0007", tienda="madrid-centro", nombre="Gloria Herrera Castro")


@pytest.mark.parametrize("cp", ["99001", "00123", "53000", "2801", "280130", "28O13", ""])
def test_la_herramienta_rechaza_un_codigo_postal_que_no_es_espanol(pool, bd_url, cp):
    with pytest.raises(CodigoPostalNoValido, match="no es válido"):
        cambiar_direccion(pool, contexto=_ctx(), thread_id="h", tool_call_id="t", pedido=PEDIDO,
                          calle="Calle Mayor 5", codigo_postal=cp, localidad="Madrid")
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 0
    # Y la base dice lo mismo que Python (el CHECK de sql/019).
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c, pytest.raises(psycopg.errors.CheckViolation):
        c.execute("UPDATE pedidos SET codigo_postal = %s WHERE id = %s", (cp, PEDIDO))


def test_la_tabla_de_provincias_tiene_las_52_y_el_prefijo_manda():
    assert len(PROVINCIAS) == 52 and list(PROVINCIAS) == [f"{n:02d}" for n in range(1, 53)]
    assert (provincia_de("28013"), provincia_de("08001"), provincia_de("45600"), provincia_de("52001")) == (
        "Madrid", "Barcelona", "Toledo", "Melilla")


def test_es_idempotente_por_tool_call_id_y_no_reutiliza_la_llamada_para_otra_direccion(pool, bd_url):
    args = {"contexto": _ctx(), "thread_id": "h-1", "tool_call_id": "llamada-1", "pedido": PEDIDO,
            "calle": "Calle Mayor 5", "codigo_postal": "28013", "localidad": "Madrid"}
    primero = cambiar_direccion(pool, **args)
    segundo = cambiar_direccion(pool, **args)
    assert (primero["repetido"], segundo["repetido"]) == (False, True)
    assert primero["cambio_direccion"] == segundo["cambio_direccion"] == "CD-000001"
    with pytest.raises(ErrorDominio, match="ya cambió otra dirección"):
        cambiar_direccion(pool, **{**args, "codigo_postal": "28014"})
    assert uno(bd_url, "SELECT count(*) FROM cambios_direccion") == 1
    # Otro cliente no ve ni cambia el pedido.
    with pytest.raises(ErrorDominio, match="pedido no encontrado"):
        cambiar_direccion(pool, **{**args, "tool_call_id": "llamada-2",
                                   "contexto": ContextoCliente(cliente_id="C-0001", tienda="talavera",
                                                              nombre="Ana García López")})


def test_la_auditoria_ve_un_cambio_que_necesitaba_firma_y_salio_sin_ella(http, tok, bd_url):
    hilo, r = _hablar(http, tok, "C-0007", BARCELONA)
    assert r["estado"] == "esperando_aprobacion"
    # Alguien escribe el cambio a mano, con la llamada que esperaba firma, y sin firma.
    tool_call_id = uno(bd_url, "SELECT tool_call_id FROM evaluaciones_politica "
                               "WHERE thread_id = %(h)s AND herramienta = 'cambiar_direccion'", {"h": hilo})
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []
        c.execute("""INSERT INTO cambios_direccion (thread_id, tool_call_id, pedido_id, cliente_id, tienda, importe,
                         calle, codigo_postal, localidad, provincia)
                     VALUES (%s, %s, %s, 'C-0007', 'madrid-centro', 30.00, 'Carrer de Balmes 10', '08001',
                             'Barcelona', 'Barcelona')""", (hilo, tool_call_id, PEDIDO))
        c.execute("UPDATE pedidos SET codigo_postal = '08001', provincia = 'Barcelona' WHERE id = %s", (PEDIDO,))
        hallados = informe(c)["sin_firma"]
    assert [(h["tipo"], h["numero"], h["tienda"]) for h in hallados] == [("direccion", "CD-000001", "madrid-centro")]
    assert hallados[0]["requiere_encargado"] is True


def test_la_ficha_del_cliente_ensena_sus_cambios_de_direccion(http, tok, bd_url):
    _hilo, r = _hablar(http, tok, "C-0007", MADRID)
    assert r["estado"] == "respondida"
    hilo, r = _hablar(http, tok, "C-0007", BARCELONA)
    assert r["estado"] == "esperando_aprobacion"
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok("enc-madrid-centro"))).json()
    (cambio,) = tarjeta["historial_cliente"]["direcciones"]
    assert (cambio["numero"], cambio["pedido"]) == ("CD-000001", PEDIDO)
    assert (cambio["anterior"], cambio["nueva"]) == ("Calle de Fuencarral 101, 2º B, 28004 Madrid",
                                                     "Calle Mayor 5, 28013 Madrid")
    # Y la tarjeta parte de la dirección que tiene ahora el pedido.
    (accion,) = tarjeta["acciones"]
    assert accion["motivos"] == ["cambia de provincia: de Calle Mayor 5, 28013 Madrid (Madrid) "
                                 "a Carrer de Balmes 10, 08001 Barcelona (Barcelona)"]
