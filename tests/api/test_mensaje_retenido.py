"""La historia del mensaje retenido: lo que el cliente escribe mientras decide el encargado se
contesta después en el contexto del desenlace (el reembolso tramitado, el rechazo), nunca con
la presentación de serie del modelo."""

from __future__ import annotations

from tests.apoyo.web_util import EDITAR_A_90, cab, conversacion_en_pausa

PRESENTACION = "modo sin conexión"


def _escribir_mientras_espera(http, tok, texto: str) -> str:
    hilo = conversacion_en_pausa(http, tok)
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok("C-0001")))
    assert r.status_code == 409
    return hilo


def _despues_del_retenido(http, tok, hilo: str, texto: str) -> list[str]:
    mensajes = http.get(f"/api/conversaciones/{hilo}", headers=cab(tok("C-0001"))).json()["mensajes"]
    posicion = max(i for i, m in enumerate(mensajes) if m["rol"] == "cliente" and m["texto"] == texto)
    return [m["texto"] for m in mensajes if m["rol"] == "agente" and mensajes.index(m) > posicion]


def test_el_segundo_mensaje_del_cliente_recibe_el_desenlace_y_no_la_presentacion(http, tok):
    hilo = _escribir_mientras_espera(http, tok, "¿Hay novedades?")
    r = http.post(f"/api/aprobaciones/{hilo}/decision", json=EDITAR_A_90, headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    desenlace, respuesta = _despues_del_retenido(http, tok, hilo, "¿Hay novedades?")[-2:]
    assert "90,00 EUR" in desenlace
    assert respuesta.startswith("Sigo aquí:")
    assert "90,00 EUR" in respuesta and "reembolso" in respuesta
    assert PRESENTACION not in respuesta and not respuesta.startswith("Hola")


def test_tras_un_rechazo_el_mensaje_retenido_recuerda_el_motivo(http, tok):
    hilo = _escribir_mientras_espera(http, tok, "¿Me vais a contestar?")
    r = http.post(f"/api/aprobaciones/{hilo}/decision",
                  json={"decisiones": [{"type": "reject", "message": "la garantía no cubre golpes"}]},
                  headers=cab(tok("enc-talavera")))
    assert r.status_code == 200, r.text
    respuesta = _despues_del_retenido(http, tok, hilo, "¿Me vais a contestar?")[-1]
    assert respuesta.startswith("Sigo aquí:") and "la garantía no cubre golpes" in respuesta
    assert PRESENTACION not in respuesta
