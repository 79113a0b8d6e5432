"""Una tarjeta con varias operaciones: una decisión por operación, en su orden (issue #42, parte 2b).

El cliente pide en un mensaje un vale y un reembolso del mismo pedido; la tarjeta lleva las dos
operaciones. El encargado aprueba una y rechaza la otra; si manda otro número u otro orden de
decisiones, 422 con el orden esperado en español y la aprobación sigue pendiente.
P-20261012-0099: C-0003, Madrid-Centro, entregado, una vajilla de 99,00 EUR.
"""

from __future__ import annotations

from decimal import Decimal

from tests.apoyo.fabricas import consultar, uno
from tests.apoyo.web_util import cab

PEDIDO = "P-20261012-0099"
CLIENTE = "C-0003"
ENCARGADO = "enc-madrid-centro"
DOS = f"Del pedido {PEDIDO} quiero un vale de 30 euros por el rayón y además devolver la vajilla."


def _tarjeta_de_dos(http, tok) -> tuple[str, list[dict]]:
    hilo = http.post("/api/conversaciones", headers=cab(tok(CLIENTE))).json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DOS}, headers=cab(tok(CLIENTE)))
    assert r.status_code == 200 and r.json()["estado"] == "esperando_aprobacion", r.text
    acciones = http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO))).json()["acciones"]
    assert sorted(a["nombre"] for a in acciones) == ["compensar_con_vale", "reembolsar"]
    assert all(a["tool_call_id"] for a in acciones)
    return hilo, acciones


def _decidir(http, tok, hilo, decisiones):
    return http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": decisiones},
                     headers=cab(tok(ENCARGADO)))


def _pendiente(http, tok, hilo) -> bool:
    return http.get(f"/api/aprobaciones/{hilo}", headers=cab(tok(ENCARGADO))).json()["estado"] == "pendiente"


def test_aprobar_una_y_rechazar_otra_ejecuta_solo_la_aprobada(http, tok, bd_url):
    hilo, acciones = _tarjeta_de_dos(http, tok)
    decisiones = [
        {"type": "approve", "tool_call_id": a["tool_call_id"]} if a["nombre"] == "compensar_con_vale"
        else {"type": "reject", "message": "El rayón no justifica devolverla.", "tool_call_id": a["tool_call_id"]}
        for a in acciones
    ]
    r = _decidir(http, tok, hilo, decisiones)
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "aplicada"
    assert [v["importe"] for v in consultar(bd_url, "SELECT importe FROM vales")] == [Decimal("30.00")]
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    guardadas = uno(bd_url, "SELECT decisiones FROM decisiones_encargado WHERE thread_id = %(h)s", {"h": hilo})
    assert [d["type"] for d in guardadas] == [d["type"] for d in decisiones]


def test_una_decision_para_dos_operaciones_da_422_con_el_orden_y_sigue_pendiente(http, tok, bd_url):
    hilo, acciones = _tarjeta_de_dos(http, tok)
    r = _decidir(http, tok, hilo, [{"type": "approve"}])
    assert r.status_code == 422, r.text
    detalle = r.json()["detalle"]
    assert "tiene 2 operaciones y se han enviado 1 decisión" in detalle
    assert "1) " in detalle and "2) " in detalle and "sigue pendiente" in detalle
    assert _pendiente(http, tok, hilo)
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
    assert uno(bd_url, "SELECT count(*) FROM vales") == 0


def test_decisiones_en_otro_orden_dan_422_y_no_deciden_nada(http, tok, bd_url):
    hilo, acciones = _tarjeta_de_dos(http, tok)
    al_reves = [{"type": "approve", "tool_call_id": a["tool_call_id"]} for a in reversed(acciones)]
    r = _decidir(http, tok, hilo, al_reves)
    assert r.status_code == 422, r.text
    assert r.json()["detalle"].startswith("La decisión 1 es para la operación 2")
    # Una edición que nombra la operación de otra posición también es otro orden.
    vale = next(i for i, a in enumerate(acciones) if a["nombre"] == "compensar_con_vale")
    otra = 1 - vale
    editada = [{"type": "approve"}, {"type": "approve"}]
    editada[otra] = {"type": "edit", "edited_action": {"name": "compensar_con_vale", "args": {"importe": "20.00"}}}
    r = _decidir(http, tok, hilo, editada)
    assert r.status_code == 422, r.text
    assert f"La decisión {otra + 1} es para la operación {vale + 1}" in r.json()["detalle"]
    assert _pendiente(http, tok, hilo)
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
    assert uno(bd_url, "SELECT count(*) FROM vales") + uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
