"""Reenviar lo que no llegó o llegó roto (issue 27, punto 2), por la API HTTP con el modelo offline.

Cada historia de la demo: la base (stock, reenvío, libro, ningún movimiento de pasarela) y
lo que lee el cliente (en español, sin SKU). Una pausa (por encima del límite y una segunda
vez) decidida por un encargado de la tienda; la auditoría encuentra un reenvío que
necesitaba firma y salió sin ella.
"""

# ruff: noqa: F811 - las fixtures importadas de otro módulo de pruebas se piden por nombre
from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import informe
from agente.web.entrada.auth import emitir_token
from herramientas.envoltorios import Dependencias
from operaciones.reenvio.declaracion import REENVIO
from tests.apoyo.fabricas import uno
from tests.apoyo.web_util import cab, sql

PERDIDO = "P-20261010-0300"  # C-0012, Madrid-Centro, enviado hace 6 días, lámpara de 40 EUR
RECIENTE = "P-20261011-0310"  # C-0008, Madrid-Centro, enviado ayer
CARO = "P-20261009-0120"  # C-0010, Madrid-Centro, enviado hace 8 días, cafetera de 120 EUR
ENTREGADO = "P-20260924-0035"  # C-0012, entregado hace 1 día: tostadora y sartén
RE_SKU = re.compile(r"\b[A-Z]{3}-\d{3}\b")
TIENDAS = {"C-0007": "madrid-centro", "C-0008": "madrid-centro", "C-0010": "madrid-centro",
           "C-0012": "madrid-centro", "enc-madrid-centro": "madrid-centro", "reg-centro": "madrid-centro"}


@pytest.fixture
def tok(ajustes):
    """Un token de cliente o de quien firma (encargado o regional) de Madrid-Centro."""
    def emitir(sujeto: str) -> str:
        rol = "cliente" if sujeto.startswith("C-") else "encargado"
        return emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=TIENDAS[sujeto])
    return emitir


def _hablar(http, tok, cliente: str, texto: str, hilo: str | None = None) -> tuple[str, dict]:
    if hilo is None:
        r = http.post("/api/conversaciones", headers=cab(tok(cliente)))
        assert r.status_code == 201, r.text
        hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok(cliente)))
    assert r.status_code == 200, r.text
    return hilo, r.json()


def _texto(respuesta: dict) -> str:
    return "\n".join(m["texto"] for m in respuesta["mensajes"])


def _stock(bd_url: str, tienda: str, sku: str) -> int:
    return sql(bd_url, "SELECT unidades FROM stock WHERE tienda = %(t)s AND sku = %(s)s",
               {"t": tienda, "s": sku})[0]["unidades"]


def _reenvios(bd_url: str) -> list[dict]:
    return sql(bd_url, "SELECT numero, pedido_id, linea, sku, unidades, motivo, valor, vez, aprobado_por "
                       "FROM reenvios ORDER BY id")


def _libro(bd_url: str, pedido: str) -> list[tuple]:
    return [(f["linea"], f["unidad"], f["importe"], f["reenvio_id"] is not None) for f in sql(
        bd_url, "SELECT linea, unidad, importe, reenvio_id FROM compensaciones_unidad "
                "WHERE pedido_id = %(p)s ORDER BY linea, unidad", {"p": pedido})]


def _pasarela(bd_url: str) -> int:
    return uno(bd_url, "SELECT count(*) FROM pasarela_movimientos")


def test_no_me_ha_llegado_se_reenvia_solo_sin_cargo_y_la_unidad_queda_compensada(http, tok, bd_url):
    antes, movimientos = _stock(bd_url, "madrid-centro", "ILU-001"), _pasarela(bd_url)
    hilo, r = _hablar(http, tok, "C-0012", f"Hola, no me ha llegado el pedido {PERDIDO}")
    assert r["estado"] == "respondida", r
    texto = _texto(r)
    assert texto == (f"He tramitado el reenvío RV-000001 del pedido {PERDIDO}: te enviamos otra vez "
                     "«Lámpara de mesa Nube» (1 unidad) desde nuestra tienda de Madrid-Centro, sin ningún "
                     "cargo: no se te cobra nada.")
    assert not RE_SKU.search(texto)
    assert _reenvios(bd_url) == [{"numero": "RV-000001", "pedido_id": PERDIDO, "linea": 1, "sku": "ILU-001",
                                  "unidades": 1, "motivo": "no_llego", "valor": Decimal("40.00"), "vez": 1,
                                  "aprobado_por": None}]
    assert _stock(bd_url, "madrid-centro", "ILU-001") == antes - 1
    assert _libro(bd_url, PERDIDO) == [(1, 1, Decimal("40.00"), True)]
    assert _pasarela(bd_url) == movimientos  # ni se cobra ni se paga
    # Nadie tuvo que firmar y la auditoría no encuentra nada.
    assert http.get("/api/aprobaciones", headers=cab(tok("enc-madrid-centro"))).json() == []
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        auditoria = informe(c)
    assert auditoria["sin_firma"] == [] and auditoria["firmas"] == []

    # La unidad reenviada ya no se reembolsa: no queda nada reembolsable en el pedido.
    pedido = http.get("/api/pedidos", headers=cab(tok("C-0012"))).json()
    assert any(p.get("id", p.get("pedido")) == PERDIDO for p in pedido)
    assert sql(bd_url, "SELECT reembolsable FROM elegibilidad_pedidos WHERE pedido_id = %(p)s",
               {"p": PERDIDO})[0]["reembolsable"] == 0


def test_enviado_ayer_no_llega_tarde_y_el_cliente_lee_cuando_esperarlo(http, tok, bd_url):
    antes = _stock(bd_url, "madrid-centro", "MEN-005")
    _, r = _hablar(http, tok, "C-0008", f"El pedido {RECIENTE} no me ha llegado todavía")
    assert r["estado"] == "respondida"
    texto = _texto(r)
    assert "dentro del plazo de reparto (3 días): no llega tarde, debería llegarte como tarde el" in texto
    assert "No se ha reenviado nada" in texto and not RE_SKU.search(texto)
    assert re.search(r"como tarde el \d{2}/\d{2}/\d{4}", texto)
    assert _reenvios(bd_url) == [] and _stock(bd_url, "madrid-centro", "MEN-005") == antes
    assert _libro(bd_url, RECIENTE) == []
    # Imposible: no se pidió a nadie.
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0


def test_dias_de_reparto_de_la_tienda_deciden_cuando_cuenta_como_perdido(http, tok, bd_url):
    # Con 10 días de reparto, el pedido de hace 6 aún no llega tarde.
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE politicas_tienda SET dias_reparto_maximos = 10 WHERE tienda = 'madrid-centro'")
    _, r = _hablar(http, tok, "C-0012", f"No me ha llegado el pedido {PERDIDO}")
    assert "plazo de reparto (10 días)" in _texto(r) and _reenvios(bd_url) == []


def test_por_encima_del_limite_firma_un_encargado_y_sale_con_su_firma(http, tok, bd_url):
    antes = _stock(bd_url, "madrid-centro", "CAF-001")
    hilo, r = _hablar(http, tok, "C-0010", f"No me ha llegado el pedido {CARO}, ¿me lo reenviáis?")
    assert r["estado"] == "esperando_aprobacion"
    texto = _texto(r)
    assert f"el reenvío sin cargo de una unidad de la línea 1 del pedido {CARO}" in texto
    assert not RE_SKU.search(texto)
    assert _reenvios(bd_url) == [] and _stock(bd_url, "madrid-centro", "CAF-001") == antes

    encargado = cab(tok("enc-madrid-centro"))
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=encargado).json()
    (accion,) = tarjeta["acciones"]
    assert accion["titulo"] == REENVIO.titulo
    assert accion["motivos"] == ["cada unidad vale 120,00 EUR (sin firma hasta 50,00 EUR)"]
    assert [c["etiqueta"] for c in accion["campos"]][:3] == ["Pedido", "Línea del pedido", "Unidades a reenviar"]
    assert (tarjeta["requisito"]["rol_minimo"], tarjeta["requisito"]["importe"]) == ("encargado", "120.00")

    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=encargado)
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text
    conversacion = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0010"))).json()
    final = conversacion["mensajes"][-1]["texto"]
    assert final.startswith(f"He tramitado el reenvío RV-000001 del pedido {CARO}") and not RE_SKU.search(final)
    (fila,) = _reenvios(bd_url)
    assert (fila["aprobado_por"], fila["valor"], fila["vez"]) == ("enc-madrid-centro", Decimal("120.00"), 1)
    assert _stock(bd_url, "madrid-centro", "CAF-001") == antes - 1
    assert _libro(bd_url, CARO) == [(1, 1, Decimal("120.00"), True)]

    # El historial de decisiones y su CSV lo enseñan con sus etiquetas.
    pagina = http.get("/api/decisiones", headers=encargado).json()
    assert any(d["thread_id"] == hilo for d in pagina["decisiones"]), pagina
    csv_texto = http.get("/api/decisiones.csv?formato=maquina", headers=encargado).text
    filas = [f for f in csv.DictReader(io.StringIO(csv_texto)) if hilo in f.values()]
    assert [(f["operacion"], f["pedido"], f["decision"], f["estado"]) for f in filas] == [
        ("reenviar", CARO, "approve", "aplicada")]
    assert "enc-madrid-centro" in filas[0]["firmas"]


def test_la_segunda_vez_de_una_linea_firma_un_encargado_y_el_rechazo_no_envia_nada(http, tok, bd_url):
    hilo, r = _hablar(http, tok, "C-0012", f"No me ha llegado el pedido {PERDIDO}")
    assert r["estado"] == "respondida" and len(_reenvios(bd_url)) == 1
    antes = _stock(bd_url, "madrid-centro", "ILU-001")
    # La segunda vez (el reenvío tampoco llegó): pide firma.
    hilo2, r = _hablar(http, tok, "C-0012", f"Tampoco me ha llegado el reenvío del pedido {PERDIDO}, "
                                            "mandadme otra")
    assert r["estado"] == "esperando_aprobacion"
    encargado = cab(tok("enc-madrid-centro"))
    tarjeta = http.get(f"/api/aprobaciones/{hilo2}", headers=encargado).json()
    assert tarjeta["acciones"][0]["motivos"] == ["esta línea ya se reenvió 1 vez"]
    r = http.post(f"/api/aprobaciones/{hilo2}/decision",
                  json={"decisiones": [{"type": "reject", "message": "ya enviamos uno; esperemos al transportista"}]},
                  headers=encargado)
    assert r.status_code == 200, r.text
    final = http.get(f"/api/conversaciones/{hilo2}", headers=cab(tok("C-0012"))).json()["mensajes"][-1]["texto"]
    assert "El encargado no ha aprobado el reenvío" in final and "No he tramitado ningún reenvío" in final
    assert len(_reenvios(bd_url)) == 1 and _stock(bd_url, "madrid-centro", "ILU-001") == antes

    # Aprobada por otro encargado, la segunda sale (vez 2) y no vuelve a apuntar la unidad.
    hilo3, r = _hablar(http, tok, "C-0012", f"Sigue sin llegarme, reenviadme el pedido {PERDIDO}")
    assert r["estado"] == "esperando_aprobacion"
    r = http.post(f"/api/aprobaciones/{hilo3}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=cab(tok("reg-centro")))
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text
    segunda = _reenvios(bd_url)[-1]
    assert (segunda["vez"], segunda["aprobado_por"]) == (2, "reg-centro")
    assert _libro(bd_url, PERDIDO) == [(1, 1, Decimal("40.00"), True)]
    assert _stock(bd_url, "madrid-centro", "ILU-001") == antes - 1


def test_sin_stock_se_dice_y_se_ofrece_el_reembolso(http, tok, bd_url):
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE stock SET unidades = 0 WHERE tienda = 'madrid-centro' AND sku = 'ILU-001'")
    _, r = _hablar(http, tok, "C-0012", f"No me ha llegado el pedido {PERDIDO}")
    texto = _texto(r)
    assert r["estado"] == "respondida"
    assert "no queda stock de «Lámpara de mesa Nube»" in texto and "devolverte lo que pagaste" in texto
    assert _reenvios(bd_url) == [] and _libro(bd_url, PERDIDO) == []
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0


def test_llego_roto_y_quiere_otro_se_reenvia_una_unidad(http, tok, bd_url):
    _, r = _hablar(http, tok, "C-0012", f"La tostadora del pedido {ENTREGADO} llegó rota, mandadme otra")
    assert r["estado"] == "respondida", r
    texto = _texto(r)
    assert "«Tostadora 2 ranuras» (1 unidad)" in texto and not RE_SKU.search(texto)
    (fila,) = _reenvios(bd_url)
    assert (fila["linea"], fila["motivo"], fila["valor"]) == (1, "llego_roto", Decimal("25.00"))
    assert _libro(bd_url, ENTREGADO) == [(1, 1, Decimal("25.00"), True)]
    # La unidad reenviada cuenta como compensada: ya no se reembolsa ni se cambia.
    _, r = _hablar(http, tok, "C-0012", f"Quiero devolver la tostadora del pedido {ENTREGADO} porque no me gusta")
    assert "supera lo reembolsable de las líneas indicadas (0,00 EUR)" in _texto(r)
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    _, r = _hablar(http, tok, "C-0012", f"Quiero cambiar la tostadora del pedido {ENTREGADO} por otra más barata")
    assert "cada unidad se compensa una sola vez" in _texto(r)
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0


def test_un_pedido_sin_enviar_no_se_reenvia(http, tok, bd_url):
    _, r = _hablar(http, tok, "C-0007", "No me ha llegado el pedido P-20260914-0025")
    assert "aún no ha salido de la tienda" in _texto(r)
    assert _reenvios(bd_url) == []


def test_la_auditoria_encuentra_un_reenvio_sin_la_firma_que_necesitaba(http, tok, bd_url):
    # Un reenvío solo (sin firma, no la necesitaba) cuadra.
    _hablar(http, tok, "C-0012", f"No me ha llegado el pedido {PERDIDO}")
    # El de la cafetera espera a un encargado; alguien lo escribe en la tabla sin su firma.
    hilo, r = _hablar(http, tok, "C-0010", f"No me ha llegado el pedido {CARO}")
    assert r["estado"] == "esperando_aprobacion"
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []
        (veredicto,) = c.execute("SELECT thread_id, tool_call_id FROM evaluaciones_politica "
                                 "WHERE herramienta = 'reenviar' AND requiere_encargado").fetchall()
        c.execute(A_MANO_SQL, {**veredicto, "clave": "a-mano-1", "pedido": CARO, "cliente": "C-0010",
                               "sku": "CAF-001", "valor": Decimal("120.00")})
        assert [(e["tipo"], e["numero"], e["importe"]) for e in informe(c)["sin_firma"]] == [
            ("reenvio", "RV-000002", Decimal("120.00"))]
        # Y uno sin veredicto ni firma (nadie lo evaluó), también.
        c.execute(A_MANO_SQL, {"thread_id": "a-mano", "tool_call_id": "a-mano", "clave": "a-mano-2",
                               "pedido": PERDIDO, "cliente": "C-0012", "sku": "ILU-001", "valor": Decimal("40.00")})
        assert [e["numero"] for e in informe(c)["sin_firma"]] == ["RV-000002", "RV-000003"]


A_MANO_SQL = """
INSERT INTO reenvios (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id, tienda, linea, sku,
                      unidades, motivo, valor, vez)
VALUES (%(clave)s, %(thread_id)s, %(tool_call_id)s, %(pedido)s, %(cliente)s, 'madrid-centro', 1, %(sku)s, 1,
        'no_llego', %(valor)s, 1)
"""


def test_el_esquema_de_reenviar_que_ve_el_modelo():
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from operaciones.reenvio.herramienta import crear_reenviar

    funcion = convert_to_openai_tool(crear_reenviar(Dependencias(pool=None, pasarela=None)))["function"]
    parametros = funcion["parameters"]
    assert set(parametros["properties"]) == {"pedido", "linea", "unidades", "motivo", "descripcion"}
    assert set(parametros["required"]) == {"pedido", "linea", "motivo"}
    assert parametros["properties"]["motivo"]["enum"] == ["no_llego", "llego_roto"]
    assert "runtime" not in str(parametros)
    # Lo que el modelo necesita saber: sin cargo, sin pasarela, compensa, plazo de reparto, sin stock.
    for frase in ("sin ningún cargo", "No cobra ni devuelve dinero", "ya no se podrán reembolsar ni cambiar",
                  "aún no llega tarde", "ofrece al cliente el reembolso", "Nunca le digas al cliente códigos"):
        assert frase in funcion["description"], frase
    assert "\n    " not in funcion["description"]
