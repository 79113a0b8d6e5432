"""Cancelar un pedido sin enviar (issue 27), por la API HTTP con el modelo offline.

Las tres historias de la demo: 25 EUR se cancela solo; 420 EUR espera la firma de un
gerente (el encargado, con límite de 300 EUR, recibe 403) y termina bien; un pedido
enviado no se cancela y el cliente lee qué puede hacer. En cada una se mira la base
(estado del pedido, stock, libro, reembolso y pasarela) y lo que lee el cliente; y la
auditoría encuentra una cancelación que necesitaba firma y salió sin ella.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import informe
from agente.servicio.decisiones.ficha import historial_cliente, lineas_de
from politicas.valores import VALORES, FueraDeDominio, validar
from tests.apoyo.web_util import sql

SOLO = "P-20261008-0201"  # C-0002, talavera, pendiente, 25,00 EUR (1 tostadora)
GRANDE = "P-20261009-0420"  # C-0011, talavera, pendiente, 420,00 EUR (3 cafeteras + 2 flexos)
ENVIADO = "P-20260925-0150"  # C-0004, madrid-centro, enviado
RE_SKU = re.compile(r"\b[A-Z]{3}-\d{3}\b")


def _decir(http, como, cliente: str, texto: str) -> tuple[str, dict]:
    r = http.post("/api/conversaciones", headers=como(cliente))
    assert r.status_code == 201, r.text
    hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=como(cliente), json={"texto": texto})
    assert r.status_code == 200, r.text
    return hilo, r.json()


def _stock(url: str, *skus: str) -> dict[str, int]:
    filas = sql(url, "SELECT sku, unidades FROM stock WHERE tienda = 'talavera' AND sku = ANY(%(s)s)",
                {"s": list(skus)})
    return {f["sku"]: f["unidades"] for f in filas}


def _estado(url: str, pedido: str) -> str:
    return sql(url, "SELECT estado FROM pedidos WHERE id = %(p)s", {"p": pedido})[0]["estado"]


def _libro(url: str, pedido: str) -> list[tuple[int, int, Decimal]]:
    """Las unidades del pedido compensadas por su cancelación: (línea, unidades, importe)."""
    return [(f["linea"], f["n"], f["total"]) for f in sql(url, """
        SELECT u.linea, count(*)::int AS n, sum(u.importe) AS total FROM compensaciones_unidad u
        JOIN cancelaciones c ON c.id = u.cancelacion_id
        WHERE u.pedido_id = %(p)s GROUP BY u.linea ORDER BY u.linea""", {"p": pedido})]


def _dinero(url: str, pedido: str) -> list[tuple]:
    """(reembolso, importe, concepto, estado, importe en la pasarela) de la cancelación del pedido."""
    return [tuple(f.values()) for f in sql(url, """
        SELECT r.numero, r.importe, r.concepto, r.estado, m.importe AS pasarela
        FROM reembolsos r LEFT JOIN pasarela_movimientos m ON m.referencia = r.numero
        WHERE r.pedido_id = %(p)s ORDER BY r.id""", {"p": pedido})]


def test_25_eur_se_cancela_solo_devuelve_el_stock_compensa_el_libro_y_devuelve_el_dinero(http, como, ajustes):
    url = ajustes.database_url
    antes = _stock(url, "ELE-002")["ELE-002"]
    hilo, r = _decir(http, como, "C-0002", f"Cancela mi pedido {SOLO}, por favor")
    assert r["estado"] == "respondida", r
    texto = r["mensajes"][-1]["texto"]

    (cancelacion,) = sql(url, "SELECT numero, importe, aprobado_por, motivo FROM cancelaciones")
    assert (cancelacion["numero"], cancelacion["importe"], cancelacion["aprobado_por"]) == (
        "CA-000001", Decimal("25.00"), None)
    assert _estado(url, SOLO) == "cancelado"
    assert _stock(url, "ELE-002")["ELE-002"] == antes + 1
    assert _libro(url, SOLO) == [(1, 1, Decimal("25.00"))]
    ((numero, importe, concepto, estado, pasarela),) = _dinero(url, SOLO)
    assert (importe, concepto, estado, pasarela) == (Decimal("25.00"), "cancelacion", "emitido", Decimal("25.00"))

    # Lo que lee el cliente: verdad, en español, sin SKUs ni nada interno.
    assert f"He cancelado tu pedido {SOLO} entero (cancelación CA-000001)" in texto
    assert "25,00 EUR" in texto and numero in texto
    assert not RE_SKU.search(texto) and "cancelar_pedido" not in texto
    # Nadie tuvo que firmar y la auditoría cuadra.
    assert http.get("/api/aprobaciones", headers=como("enc-talavera")).json() == []
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        auditoria = informe(c)
    assert auditoria["sin_firma"] == [] and auditoria["firmas"] == []
    assert all(v == [] for v in auditoria["libro"].values()), auditoria["libro"]

    # Pedirlo otra vez: ya está cancelado; nada se mueve dos veces.
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=como("C-0002"),
                  json={"texto": f"Cancela el pedido {SOLO}"})
    assert "ya está cancelado" in r.json()["mensajes"][-1]["texto"]
    assert len(_dinero(url, SOLO)) == 1 and _stock(url, "ELE-002")["ELE-002"] == antes + 1


def test_420_eur_espera_al_gerente_el_encargado_recibe_403_y_el_gerente_la_aplica(http, como, ajustes):
    url = ajustes.database_url
    antes = _stock(url, "CAF-001", "ILU-002")
    hilo, r = _decir(http, como, "C-0011", f"Ya no lo quiero, anuladlo: {GRANDE}")
    assert r["estado"] == "esperando_aprobacion", r
    espera = r["mensajes"][-1]["texto"]
    assert f"la cancelación del pedido {GRANDE} y la devolución de 420,00 EUR" in espera
    assert not RE_SKU.search(espera)
    # Nada se ha movido mientras espera.
    assert _estado(url, GRANDE) == "pendiente" and _stock(url, "CAF-001", "ILU-002") == antes
    assert sql(url, "SELECT count(*) AS n FROM cancelaciones")[0]["n"] == 0

    # La tarjeta: título, campos de la declaración, motivo de la política y requisito (gerente).
    tarjeta = http.get(f"/api/aprobaciones/{hilo}", headers=como("enc-talavera")).json()
    (accion,) = tarjeta["acciones"]
    assert accion["titulo"] == "Cancelación de pedido"
    assert [(c["campo"], c["etiqueta"], c["dinero"]) for c in accion["campos"]] == [
        ("pedido", "Pedido", False), ("importe", "Importe a devolver", True), ("motivo", "Motivo del cliente", False)]
    assert accion["motivos"] == ["cancelación de 420,00 EUR supera el límite de 200,00 EUR de la tienda"]
    assert "Importe a devolver: 420,00 EUR." in accion["descripcion"]
    assert "entrega: pendiente de envío; total 420,00 EUR" in accion["descripcion"]
    assert (tarjeta["requisito"]["rol_minimo"], tarjeta["requisito"]["importe"]) == ("gerente", "420.00")

    # El encargado (hasta 300 EUR) no puede; nada cambia.
    r = http.post(f"/api/aprobaciones/{hilo}/decision", headers=como("enc-talavera"),
                  json={"decisiones": [{"type": "approve"}]})
    assert r.status_code == 403, r.text
    assert "300,00 EUR" in r.json()["detalle"] and "420,00 EUR" in r.json()["detalle"]
    assert _estado(url, GRANDE) == "pendiente" and _dinero(url, GRANDE) == []

    # El gerente sí: el pedido entero queda cancelado, con su stock, su libro y su dinero.
    r = http.post(f"/api/aprobaciones/{hilo}/decision", headers=como("ger-talavera"),
                  json={"decisiones": [{"type": "approve"}]})
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"
    texto = r.json()["mensaje_cliente"]
    assert f"He cancelado tu pedido {GRANDE} entero (cancelación CA-000001)" in texto
    assert "420,00 EUR" in texto and not RE_SKU.search(texto)
    assert _estado(url, GRANDE) == "cancelado"
    assert _stock(url, "CAF-001", "ILU-002") == {"CAF-001": antes["CAF-001"] + 3, "ILU-002": antes["ILU-002"] + 2}
    assert _libro(url, GRANDE) == [(1, 3, Decimal("360.00")), (2, 2, Decimal("60.00"))]
    ((_, importe, concepto, estado, pasarela),) = _dinero(url, GRANDE)
    assert (importe, concepto, estado, pasarela) == (Decimal("420.00"), "cancelacion", "emitido", Decimal("420.00"))
    assert sql(url, "SELECT aprobado_por FROM cancelaciones")[0]["aprobado_por"] == "ger-talavera"
    # Cada unidad queda compensada: ya no queda nada reembolsable ni que cambiar.
    libres = sql(url, "SELECT sum(unidades_libres)::int AS n FROM libro_lineas WHERE pedido_id = %(p)s", {"p": GRANDE})
    assert libres[0]["n"] == 0

    # Historial de decisiones y CSV: la operación, el pedido y el importe (de la declaración).
    (decision,) = http.get("/api/decisiones", headers=como("ger-talavera")).json()["decisiones"]
    (fila,) = decision["acciones"]
    assert (fila["nombre"], fila["pedido"], fila["importe_propuesto"], fila["importe_final"]) == (
        "cancelar_pedido", GRANDE, "420.00", "420.00")
    filas = list(csv.DictReader(io.StringIO(http.get("/api/decisiones.csv?formato=maquina", headers=como("ger-talavera")).text)))
    assert [(f["operacion"], f["pedido"], f["importe_final"]) for f in filas] == [("cancelar_pedido", GRANDE, "420.00")]

    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        auditoria = informe(c)
        # La ficha del cliente: su cancelación en el historial y cada línea «cancelada».
        historial = historial_cliente(c, "C-0011")
        lineas = lineas_de(c, [GRANDE], "C-0011")[GRANDE]["lineas"]
    assert auditoria["sin_firma"] == [] and auditoria["firmas"] == []
    assert [(x["numero"], x["pedido"], x["importe"]) for x in historial["cancelaciones"]] == [
        ("CA-000001", GRANDE, "420.00")]
    assert [(x["linea"], x["estado"], x["unidades_libres"]) for x in lineas] == [
        (1, "cancelada", 0), (2, "cancelada", 0)]


def test_un_pedido_enviado_no_se_cancela_y_el_cliente_lee_que_puede_hacer(http, como, ajustes):
    url = ajustes.database_url
    _, r = _decir(http, como, "C-0004", f"Quiero cancelar el pedido {ENVIADO}, ya no lo necesito")
    assert r["estado"] == "respondida"
    texto = r["mensajes"][-1]["texto"]
    assert "no se puede cancelar" in texto
    for alternativa in ("rechazar la entrega", "devolverlo cuando lo recibas", "pedido perdido"):
        assert alternativa in texto
    assert not RE_SKU.search(texto)
    assert _estado(url, ENVIADO) == "enviado"
    assert sql(url, "SELECT count(*) AS n FROM cancelaciones")[0]["n"] == 0
    assert _dinero(url, ENVIADO) == []
    assert sql(url, "SELECT count(*) AS n FROM aprobaciones_pendientes")[0]["n"] == 0


def test_la_auditoria_ve_una_cancelacion_que_necesitaba_firma_y_salio_sin_ella(http, como, ajustes):
    url = ajustes.database_url
    hilo, r = _decir(http, como, "C-0011", f"Cancela el pedido {GRANDE}")
    assert r["estado"] == "esperando_aprobacion"
    (veredicto,) = sql(url, "SELECT tool_call_id, requiere_encargado FROM evaluaciones_politica "
                            "WHERE thread_id = %(h)s AND herramienta = 'cancelar_pedido'", {"h": hilo})
    assert veredicto["requiere_encargado"] is True
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        assert informe(c)["sin_firma"] == []
        # Alguien escribe la cancelación en las tablas sin la firma que pidió la política.
        c.execute("""INSERT INTO cancelaciones (clave_idempotencia, thread_id, tool_call_id, pedido_id,
                                                cliente_id, tienda, importe, motivo)
                     VALUES ('a-mano', %(h)s, %(t)s, %(p)s, 'C-0011', 'talavera', 420.00, 'a mano')""",
                  {"h": hilo, "t": veredicto["tool_call_id"], "p": GRANDE})
        (hallazgo,) = informe(c)["sin_firma"]
    assert (hallazgo["tipo"], hallazgo["numero"], hallazgo["importe"], hallazgo["aprobado_por"]) == (
        "cancelacion", "CA-000001", Decimal("420.00"), None)
    assert hallazgo["motivos"] == ["cancelación de 420,00 EUR supera el límite de 200,00 EUR de la tienda"]


# El reembolso manipulado deja falso lo que el agente dijo («te devolvemos 25,00 EUR»): se ve.
@pytest.mark.afirmaciones_falsas
def test_la_auditoria_del_libro_ve_una_cancelacion_manipulada(http, como, ajustes):
    url = ajustes.database_url
    _, r = _decir(http, como, "C-0002", f"Cancela mi pedido {SOLO}")
    assert r["estado"] == "respondida"
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        assert informe(c)["libro"]["cancelaciones"] == []
        # Alguien devuelve el pedido a «pendiente» y rebaja la unidad del libro: se ve.
        c.execute("UPDATE pedidos SET estado = 'pendiente' WHERE id = %(p)s", {"p": SOLO})
        assert [h["hallazgo"] for h in informe(c)["libro"]["cancelaciones"]] == ["cancelacion_de_pedido_no_cancelado"]
        c.execute("DELETE FROM compensaciones_unidad WHERE pedido_id = %(p)s", {"p": SOLO})
        assert [h["hallazgo"] for h in informe(c)["libro"]["cancelaciones"]] == ["cancelacion_sin_sus_unidades"]
        c.execute("UPDATE reembolsos SET importe = 250.00 WHERE pedido_id = %(p)s", {"p": SOLO})
        (hallazgo,) = informe(c)["libro"]["cancelaciones"]
        dicho = [(f["hallazgo"], f["detalle"]) for f in informe(c)["afirmaciones"]]
    assert (hallazgo["hallazgo"], hallazgo["referencia"]) == ("reembolso_de_cancelacion_con_otro_importe", "CA-000001")
    assert dicho == [("importe_distinto", "25,00 EUR: no es el importe de RE-000001 de 250,00 EUR")]


def test_limite_cancelacion_tiene_dominio_y_defecto_de_200():
    valor = VALORES["limite_cancelacion"]
    assert (valor.defecto, valor.regla, valor.endurece) == (Decimal("200.00"), "cancelacion", "bajar")
    assert validar("limite_cancelacion", "150.00") == Decimal("150.00")
    with pytest.raises(FueraDeDominio, match="entre 0,00 EUR y 1.000.000,00 EUR"):
        validar("limite_cancelacion", "1000000.01")


@pytest.mark.parametrize(("texto", "esperado"), [
    (f"cancela mi pedido {SOLO}", [("cancelacion", SOLO)]),
    (f"Ya no lo quiero, anuladlo: {GRANDE}", [("cancelacion", GRANDE)]),
    (f"¿Podéis cancelar el {ENVIADO}? Lo pedí por error", [("cancelacion", ENVIADO)]),
    # Describir un pedido cancelado no es pedir una cancelación.
    ("Quiero devolver el exprimidor del pedido P-20260920-0031, que está cancelado", [("reembolso", "P-20260920-0031")]),
    (f"Quiero cambiar la tostadora del pedido {SOLO} por otra", [("cambio", SOLO)]),
])
def test_el_modelo_offline_entiende_la_cancelacion_y_no_la_confunde(texto, esperado):
    from agente.modelo_offline.lectura import tareas

    assert [(t.tipo, t.pedido) for t in tareas(texto, [])] == esperado


def test_cancela_ante_una_propuesta_de_cambio_es_no_hacer_el_cambio():
    from langchain_core.messages import AIMessage, HumanMessage

    from agente.modelo_offline.lectura import tareas

    antes = [HumanMessage("Quiero cambiar la cafetera del pedido P-20260917-0041 por una más barata"),
             AIMessage("¿Confirmas el cambio de CAF-001 del pedido P-20260917-0041 por la CAF-002?")]
    assert [t.tipo for t in tareas("No, cancélalo", antes)] == ["anulada"]
    assert [(t.tipo, t.pedido) for t in tareas(f"Cancela el pedido {SOLO}", antes)] == [("cancelacion", SOLO)]
