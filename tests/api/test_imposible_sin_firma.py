"""Al encargado no se le pide aprobar lo imposible, y lo aprobado que falla consta como fallido.

- Un reembolso o un cambio de unidades ya compensadas, o de un pedido cancelado o sin
  entregar, no pide firma: la herramienta lo rechaza con su error verdadero (sin fila en la
  cola ni aviso a nadie), y si al ejecutar resultara posible, tampoco sale sin firma.
- Un efecto aprobado que falla al ejecutarse (sin stock entre la pausa y la firma) consta
  como «fallida» en el historial, el CSV, la respuesta de la decisión y la auditoría.
"""

from __future__ import annotations

import csv
import io

import psycopg
import pytest
from langchain_core.messages import AIMessage, ToolMessage

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.fabrica import crear_servicio
from nucleo.errores import ErrorDominio
from tests.apoyo.fabricas import (
    PEDIDO_GRANDE,
    ajustes_prueba,
    consultar,
    conversacion,
    crear_pedido,
    uno,
)
from tests.apoyo.modelo_guion import guion, llamada
from tests.apoyo.web_util import cab, conversacion_en_pausa

CANCELADO = "P-20260920-0031"  # C-0010, cancelado


def _sql(bd_url: str, sentencia: str, *params) -> None:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(sentencia, params)


def test_cambiar_lo_ya_reembolsado_no_pide_firma_y_el_cliente_lee_por_que(http, tok, bd_url):
    cliente, encargado = cab(tok("C-0001")), cab(tok("enc-talavera"))
    hilo = conversacion_en_pausa(http, tok)  # el reembolso de la cafetera (120 EUR) espera a un encargado
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=encargado)
    assert r.status_code == 200 and r.json()["estado"] == "aplicada", r.text

    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": "cámbiala por una más barata"},
                  headers=cliente)
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "respondida"
    texto = r.json()["mensajes"][0]["texto"]
    assert "Cafetera de goteo Aroma 10 tazas" in texto and "CAF-001" not in texto  # el nombre, no el SKU
    assert "ya se reembolsó o se cambió" in texto and "una sola vez" in texto
    assert "¿Confirmas" not in texto
    assert http.get("/api/aprobaciones", headers=encargado).json() == []
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 1


def test_el_cambio_de_una_unidad_ya_reembolsada_lo_rechaza_la_herramienta_sin_pasar_por_nadie(servicio, bd_url):
    # Un modelo que pide el cambio directamente (sin mirar el libro antes).
    reembolso = llamada("reembolsar", pedido=PEDIDO_GRANDE, importe="120.00", motivo="gotea")
    cambio = llamada("sustituir", pedido=PEDIDO_GRANDE, sku_original="CAF-001", sku_nuevo="CAF-002")
    modelo = guion(AIMessage("", tool_calls=[reembolso]), "Reembolso hecho.",
                   AIMessage("", tool_calls=[cambio]), "No se ha podido hacer el cambio.")
    con_guion = crear_servicio(ajustes_prueba(bd_url), url=bd_url, modelo=modelo, pausa_reintentos=0.01)
    try:
        hilo, r = conversacion(con_guion, "C-0001", "Quiero devolver la cafetera")
        assert r.estado == "esperando_aprobacion"
        con_guion.decidir(hilo, "enc-talavera", [{"type": "approve"}])
        r = con_guion.conversar(hilo, "Cámbiala por la CAF-002", con_guion.contexto_de_cliente("C-0001"))
        assert r.estado == "respondida"  # sin pausa: no hay nada que aprobar
        assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
        veredicto = consultar(bd_url, "SELECT requiere_encargado, umbrales FROM evaluaciones_politica "
                                      "WHERE tool_call_id = %(id)s", {"id": cambio["id"]})[0]
        assert veredicto["requiere_encargado"] is False
        assert "ya se reembolsaron o se cambiaron" in veredicto["umbrales"]["imposible"]
        resultado = next(m for m in con_guion.agente.get_state({"configurable": {"thread_id": hilo}})
                         .values["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == cambio["id"])
        assert resultado.status == "error" and "cada unidad se compensa una sola vez" in resultado.content
        assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
        assert con_guion.auditoria()["sin_firma"] == []
    finally:
        con_guion.cerrar()


def test_el_reembolso_de_un_pedido_cancelado_se_rechaza_sin_preguntar_a_nadie(servicio, pasarela, bd_url):
    hilo, r = conversacion(servicio, "C-0010", f"Quiero devolver el exprimidor del pedido {CANCELADO}")
    assert r.estado == "respondida", r.mensaje_cliente
    assert "está cancelado" in r.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    assert pasarela.llamadas == []


def test_lo_que_era_imposible_al_evaluarlo_no_sale_sin_firma_si_despues_es_posible(servicio, pasarela, bd_url):
    from operaciones.reembolso.herramienta import reembolsar
    from politicas import PoliticaAprobacion

    ctx = servicio.contexto_de_cliente("C-0010")
    args = {"pedido": CANCELADO, "importe": "10.00", "motivo": "x"}
    veredicto = PoliticaAprobacion(pool=servicio.pool, reglas={"reembolsar": "reembolso"}).evaluar(
        thread_id="h-x", tool_call_id="call-x", herramienta="reembolsar", args=args, contexto=ctx)
    assert veredicto.requiere_encargado is False  # cancelado: no hay nada que firmar
    # Entre la evaluación y la ejecución el pedido pasa a entregado (o la llamada esperó la
    # firma de otra del mismo lote): la herramienta no lo ejecuta sin firma.
    _sql(bd_url, "UPDATE pedidos SET estado = 'entregado', entregado_en = now() - interval '1 day' WHERE id = %s",
         CANCELADO)
    with pytest.raises(ErrorDominio, match="no pasó por un encargado"):
        reembolsar(servicio.pool, contexto=ctx, thread_id="h-x", tool_call_id="call-x", pasarela=pasarela, **args)
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    assert pasarela.llamadas == []


def test_un_cambio_aprobado_que_falla_por_falta_de_stock_consta_como_fallido(http, tok, bd_url):
    from agente.servicio.auditoria.informe import hallazgos
    from agente.servicio.auditoria.informe import informe as informe_auditoria

    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 1)], dias_entrega=45)  # fuera de plazo: firma
    cliente, encargado = cab(tok("C-0001")), cab(tok("enc-talavera"))
    hilo = conversacion_en_pausa(http, tok, texto=f"Quiero cambiar la cafetera del pedido {pedido} por la CAF-002")
    _sql(bd_url, "UPDATE stock SET unidades = 0 WHERE sku = 'CAF-002'")  # se agota mientras espera

    r = http.post(f"/api/aprobaciones/{hilo}/decision", json={"decisiones": [{"type": "approve"}]},
                  headers=encargado)
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "fallida"
    assert "ya no queda stock de CAF-002" in r.json()["fallo"]
    assert "no he podido" in r.json()["mensaje_cliente"]
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 0
    fila = consultar(bd_url, "SELECT resultado, fallo, aplicada FROM decisiones_encargado")[0]
    assert fila["resultado"] == "fallida" and fila["aplicada"] is not None

    (decision,) = http.get("/api/decisiones", headers=encargado).json()["decisiones"]
    assert (decision["tipo"], decision["estado"]) == ("approve", "fallida")
    assert "ya no queda stock" in decision["fallo"]
    filas = list(csv.DictReader(io.StringIO(http.get("/api/decisiones.csv?formato=maquina", headers=encargado).text)))
    assert [(f["decision"], f["estado"], f["importe_final"]) for f in filas] == [("approve", "fallida", "")]
    assert decision["acciones"][0]["importe_final"] is None  # aprobada, pero no se hizo: nada pagado
    assert "ya no queda stock" in filas[0]["fallo"]

    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        informe = informe_auditoria(c)
    assert [f["thread_id"] for f in informe["fallidas"]] == [hilo]
    assert hallazgos(informe) == 0  # nada salió sin firma
    conversacion_cliente = http.get(f"/api/conversaciones/{hilo}", headers=cliente).json()
    assert "no he podido" in conversacion_cliente["mensajes"][-1]["texto"]
