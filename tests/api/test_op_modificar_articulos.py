"""Modificar los artículos de un pedido pendiente (issue 41, séptima operación), por la API HTTP
con el modelo offline y por su función de dominio.

La demo (``operaciones/modificar_articulos/demo.sql``): Elena (C-0005, Talavera) tiene
P-20261013-0510 pendiente con una camisa blanca talla M (la L con 4 unidades, la XL agotada),
P-20261013-0511 pendiente con una chaqueta de piel negra (la coñac, 70,00 EUR más: pasa del
umbral de 60,00 EUR) y P-20261013-0512 ya enviado. Se comprueba la base (modificación, línea,
stock en los dos sentidos, importe del pedido, cobro o reembolso una sola vez), lo que lee el
cliente y la tarjeta del encargado, y que dos conversaciones a la vez sobre la misma línea
dejan una sola modificación.
"""

# ruff: noqa: F811 - las fixtures importadas de otro módulo de pruebas se piden por nombre
from __future__ import annotations

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import hallazgos, informe
from nucleo.contexto import ContextoCliente
from nucleo.errores import ConflictoIdempotencia, ErrorDominio
from operaciones.modificar_articulos.herramienta import modificar_articulos
from tests.apoyo.fabricas import consultar, crear_pedido, en_carrera, uno
from tests.apoyo.web_util import cab

PEDIDO = "P-20261013-0510"
CHAQUETA = "P-20261013-0511"
ENVIADO = "P-20261013-0512"
CLIENTE = "C-0005"
ENCARGADO = "enc-talavera"
TALLA_L = f"¿Me lo podéis cambiar a la talla L? Es el pedido {PEDIDO}"
COÑAC = f"Quiero cambiar la chaqueta del pedido {CHAQUETA} al color coñac"

MODIFICACIONES_SQL = """
SELECT numero, pedido_id, linea, linea_nueva, sku_original, sku_nuevo, precio_original, precio_nuevo,
       diferencia, liquidacion, aprobado_por FROM modificaciones_articulos ORDER BY id
"""
STOCK_SQL = "SELECT sku, unidades FROM stock WHERE tienda = 'talavera' AND sku = ANY(%(skus)s)"
LINEAS_SQL = "SELECT linea, sku, unidades, precio_unitario FROM lineas_pedido WHERE pedido_id = %(p)s ORDER BY linea"


def _hablar(http, tok, texto: str, cliente: str = CLIENTE) -> tuple[str, dict]:
    r = http.post("/api/conversaciones", headers=cab(tok(cliente)))
    assert r.status_code == 201, r.text
    hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok(cliente)))
    assert r.status_code == 200, r.text
    return hilo, r.json()


def _texto(cuerpo: dict) -> str:
    return "\n".join(m["texto"] for m in cuerpo["mensajes"])


def _stock(bd_url: str, *skus: str) -> dict[str, int]:
    return {f["sku"]: f["unidades"] for f in consultar(bd_url, STOCK_SQL, {"skus": list(skus)})}


def _ctx(cliente: str = CLIENTE) -> ContextoCliente:
    return ContextoCliente(cliente_id=cliente, tienda="talavera", nombre="Elena Navarro Ramos")


def test_la_talla_l_sin_firma_cambia_la_linea_y_mueve_el_stock_en_los_dos_sentidos(http, tok, bd_url):
    antes = _stock(bd_url, "CAM-011", "CAM-012")
    _hilo, cuerpo = _hablar(http, tok, TALLA_L)
    assert cuerpo["estado"] == "respondida", cuerpo
    (mod,) = consultar(bd_url, MODIFICACIONES_SQL)
    assert (mod["pedido_id"], mod["linea"], mod["sku_original"], mod["sku_nuevo"], str(mod["diferencia"]),
            mod["liquidacion"], mod["aprobado_por"]) == (PEDIDO, 1, "CAM-011", "CAM-012", "0.00", "ninguna", None)
    assert consultar(bd_url, LINEAS_SQL, {"p": PEDIDO}) == [
        {"linea": 1, "sku": "CAM-012", "unidades": 1, "precio_unitario": mod["precio_nuevo"]}]
    assert _stock(bd_url, "CAM-011", "CAM-012") == {"CAM-011": antes["CAM-011"] + 1, "CAM-012": antes["CAM-012"] - 1}
    # Mismo precio: nada que cobrar ni devolver.
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 0
    texto = _texto(cuerpo)
    assert mod["numero"] in texto and "Camisa Oxford blanca, talla L" in texto
    assert "CAM-01" not in texto and CLIENTE not in texto and "modificar_articulos" not in texto
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        (efecto,) = c.execute("SELECT tipo, numero FROM efectos WHERE tipo = 'modificar_articulos'").fetchall()
    assert efecto["numero"] == mod["numero"]


def test_un_pedido_enviado_no_se_modifica_y_el_cliente_lee_por_que_y_las_alternativas(http, tok, bd_url, pool):
    antes = _stock(bd_url, "CAM-011", "CAM-012")
    _hilo, cuerpo = _hablar(http, tok, f"Quiero cambiar la camisa del pedido {ENVIADO} a la talla L")
    assert cuerpo["estado"] == "respondida"
    texto = _texto(cuerpo)
    assert "ya ha salido" in texto and "cambio" in texto and "devolverlo" in texto
    assert uno(bd_url, "SELECT count(*) FROM modificaciones_articulos") == 0
    assert _stock(bd_url, "CAM-011", "CAM-012") == antes
    # La herramienta sola tampoco lo hace, y dice lo mismo.
    with pytest.raises(ErrorDominio, match="ya ha salido.*cambio de ese artículo.*devolverlo"):
        modificar_articulos(pool, contexto=_ctx(), thread_id="h", tool_call_id="t", pedido=ENVIADO,
                            linea=1, talla="L", pasarela=None)
    assert uno(bd_url, "SELECT count(*) FROM modificaciones_articulos") == 0


def test_sin_stock_no_cambia_nada_y_dice_que_hay(http, tok, bd_url):
    _hilo, cuerpo = _hablar(http, tok, f"¿Me lo podéis cambiar a la talla XL? Es el pedido {PEDIDO}")
    assert cuerpo["estado"] == "respondida"  # imposible: no pasa por nadie
    texto = _texto(cuerpo)
    assert "no queda stock" in texto and "talla L" in texto
    assert uno(bd_url, "SELECT count(*) FROM modificaciones_articulos") == 0
    assert consultar(bd_url, LINEAS_SQL, {"p": PEDIDO})[0]["sku"] == "CAM-011"


def test_sobre_el_umbral_firma_un_encargado_que_ve_la_tarjeta_y_se_cobra_la_diferencia(http, tok, bd_url):
    hilo, cuerpo = _hablar(http, tok, COÑAC)
    assert cuerpo["estado"] == "esperando_aprobacion", cuerpo
    assert uno(bd_url, "SELECT count(*) FROM modificaciones_articulos") == 0  # nada antes de la firma
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO)))
    assert tarjeta.status_code == 200, tarjeta.text
    (accion,) = tarjeta.json()["acciones"]
    assert accion["titulo"] == "Modificación de artículos de un pedido sin enviar"
    (motivo,) = accion["motivos"]
    assert "diferencia de 70,00 EUR a cobrar al cliente" in motivo and "60,00 EUR" in motivo
    (detalles,) = tarjeta.json()["detalles"]
    vistos = {d["etiqueta"]: d["valor"] for d in detalles}
    assert (vistos["Artículo actual"], vistos["Artículo nuevo"], vistos["Diferencia"], vistos["Precio del nuevo"]) == (
        "Chaqueta de piel negra, talla M", "Chaqueta de piel coñac, talla M", "70.00", "219.00")
    assert vistos["Quién paga la diferencia"] == "la paga el cliente (cobro por la pasarela)"
    assert tarjeta.json()["requisito"]["importe"] == "70.00"

    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=cab(tok(ENCARGADO)))
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text
    (mod,) = consultar(bd_url, MODIFICACIONES_SQL)
    assert (mod["sku_nuevo"], str(mod["diferencia"]), mod["liquidacion"], mod["aprobado_por"]) == (
        "CHA-022", "70.00", "cobro", ENCARGADO)
    (cobro,) = consultar(bd_url, "SELECT numero, importe, estado FROM cobros WHERE pedido_id = %(p)s", {"p": CHAQUETA})
    assert (str(cobro["importe"]), cobro["estado"]) == ("70.00", "confirmado")
    # La pasarela (la simulada del servicio) movió ese cobro y nada más.
    assert consultar(bd_url, "SELECT referencia, importe FROM pasarela_movimientos") == [
        {"referencia": cobro["numero"], "importe": cobro["importe"]}]
    assert str(uno(bd_url, "SELECT importe FROM pedidos WHERE id = %(p)s", {"p": CHAQUETA})) == "219.00"
    final = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok(CLIENTE))).json()["mensajes"][-1]["texto"]
    assert mod["numero"] in final and "70,00 EUR" in final and "-70" not in final
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:  # firmado y cobrado: la auditoría cuadra
        hallado = informe(c)
    assert hallazgos(hallado) == 0, hallado


def test_la_misma_peticion_desde_otra_conversacion_no_abre_otra_tarjeta(http, tok, bd_url):
    primera, cuerpo = _hablar(http, tok, COÑAC)
    assert cuerpo["estado"] == "esperando_aprobacion", cuerpo
    _otra, segunda = _hablar(http, tok, COÑAC)
    assert segunda["estado"] == "respondida", segunda  # ni firma ni efecto
    assert "ya se está revisando" in _texto(segunda) or "esperando la revisión" in _texto(segunda)
    pendientes = http.get("/api/aprobaciones", headers=cab(tok(ENCARGADO))).json()
    assert [a["thread_id"] for a in pendientes] == [primera]
    assert uno(bd_url, "SELECT count(*) FROM modificaciones_articulos") == 0


def test_mas_barata_devuelve_la_diferencia_una_sola_vez_y_repetir_no_paga_dos_veces(pool, bd_url, pasarela):
    pedido = crear_pedido(bd_url, CLIENTE, [("CAM-014", 1)], dias_entrega=None)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE pedidos SET estado = 'pendiente', entregado_en = NULL WHERE id = %s", (pedido,))
    argumentos = dict(contexto=_ctx(), thread_id="hilo-1", tool_call_id="llamada-1", pedido=pedido, linea=1,
                      color="blanca", pasarela=pasarela)
    primero = modificar_articulos(pool, **argumentos)
    assert (primero["articulo_nuevo"], primero["diferencia"], primero["liquidacion"]["tipo"],
            primero["liquidacion"]["estado"], primero["repetido"]) == (
        "Camisa Oxford blanca, talla M", "5.00", "reembolso", "completado", False)
    otra = modificar_articulos(pool, **argumentos)
    assert otra["repetido"] is True and otra["modificacion"] == primero["modificacion"]
    (reembolso,) = consultar(bd_url, "SELECT numero, importe, concepto, estado FROM reembolsos WHERE pedido_id = %(p)s",
                             {"p": pedido})
    assert (str(reembolso["importe"]), reembolso["concepto"], reembolso["estado"]) == ("5.00", "modificacion", "emitido")
    assert pasarela.llamadas == [(reembolso["numero"], reembolso["importe"])]  # una sola vez
    assert str(uno(bd_url, "SELECT importe FROM pedidos WHERE id = %(p)s", {"p": pedido})) == "29.90"
    with pytest.raises(ConflictoIdempotencia, match="otros datos"):
        modificar_articulos(pool, **{**argumentos, "color": "azul"})
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:  # el reembolso de la diferencia cuadra en el libro
        hallado = informe(c)
    # Llamada directa, sin veredicto: la modificación y su reembolso salen «sin firma»; nada más.
    assert {e["tipo"] for e in hallado["sin_firma"]} == {"modificar_articulos", "reembolso"}
    assert hallazgos(hallado) == len(hallado["sin_firma"]), hallado


def test_una_linea_de_varias_unidades_se_parte_y_solo_cambia_una(pool, bd_url, pasarela):
    pedido = crear_pedido(bd_url, CLIENTE, [("CAM-011", 3)], dias_entrega=None)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE pedidos SET estado = 'pendiente', entregado_en = NULL WHERE id = %s", (pedido,))
    hecho = modificar_articulos(pool, contexto=_ctx(), thread_id="h", tool_call_id="t", pedido=pedido, linea=1,
                                talla="l", pasarela=pasarela)
    assert hecho["linea"] == 2
    assert [(f["linea"], f["sku"], f["unidades"]) for f in consultar(bd_url, LINEAS_SQL, {"p": pedido})] == [
        (1, "CAM-011", 2), (2, "CAM-012", 1)]


def test_dos_conversaciones_a_la_vez_sobre_la_misma_linea_solo_una_la_modifica(pool, bd_url, pasarela):
    antes = _stock(bd_url, "CAM-011", "CAM-012", "CAM-014")

    def intento(n: int, **variante):
        return lambda: modificar_articulos(pool, contexto=_ctx(), thread_id=f"hilo-{n}", tool_call_id=f"t-{n}",
                                           pedido=PEDIDO, linea=1, pasarela=pasarela, **variante)

    resultados = en_carrera(pool, bd_url, "SELECT 1 FROM pedidos WHERE id = %s FOR UPDATE", (PEDIDO,), {
        "l-1": intento(1, talla="L"), "l-2": intento(2, talla="L"), "l-3": intento(3, talla="L"),
        "azul": intento(4, color="azul")})
    hechos = {n: r for n, r in resultados.items() if isinstance(r, dict)}
    fallidos = {n: r for n, r in resultados.items() if not isinstance(r, dict)}
    assert len(hechos) == 1 and len(fallidos) == 3, resultados
    assert all(isinstance(e, ErrorDominio) for e in fallidos.values()), fallidos
    (mod,) = consultar(bd_url, MODIFICACIONES_SQL)
    (linea,) = consultar(bd_url, LINEAS_SQL, {"p": PEDIDO})
    assert linea["sku"] == mod["sku_nuevo"] and mod["sku_original"] == "CAM-011"
    # El stock se movió una vez: la M volvió una vez y la nueva salió una vez.
    despues = _stock(bd_url, "CAM-011", "CAM-012", "CAM-014")
    assert despues["CAM-011"] == antes["CAM-011"] + 1
    assert sum(despues.values()) == sum(antes.values())

