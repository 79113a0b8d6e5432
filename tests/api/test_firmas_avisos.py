"""Avisos por el camino real de la pausa (API HTTP, modelo offline): un mensaje por firmante
posible y aprobación, por SMTP (aiosmtpd) y webhook firmado; un fallo nunca pierde la pausa."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from agente.bd.pool import KWARGS_CONEXION
from agente.notificaciones import entregar_pendientes, verificar_firma
from agente.notificaciones.canales import CABECERA_FECHA, CABECERA_FIRMA, CanalCorreo, CanalWebhook
from agente.servicio.periodicas import una_pasada
from tests.apoyo.fabricas_avisos import solo_contacto
from tests.apoyo.firmas import PEDIDO_350, PEDIDO_650, decidir_como, pausa_de_pedido

BASE = "https://atencion.tienda.example"
# Pasado cualquier horario de apertura: los avisos no urgentes esperan a que abra la tienda.
DESPUES = datetime.now(UTC) + timedelta(days=3)


def _correo(url):
    return CanalCorreo(smtp_url=url, remitente="Avisos <avisos@tienda.example>", timeout=5)


def test_una_pausa_de_650_avisa_por_correo_una_vez_a_cada_firmante_posible(http, como, smtp):
    hilo = pausa_de_pedido(http, como, "C-0006", PEDIDO_650)
    pool = http.app.state.servicio.pool
    pasada = entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE, ahora=DESPUES)
    assert pasada.enviados == 3
    assert sorted(c.para[0] for c in smtp.correos) == [
        "enc-talavera-2@tienda.example", "enc-talavera@tienda.example", "ger-talavera@tienda.example"]
    assert all(f"{BASE}/encargado#{hilo}" in c.texto and "650,00 EUR" in c.asunto for c in smtp.correos)
    # Otra pasada (o un reintento) no repite ninguno.
    assert entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE, ahora=DESPUES).total == 0
    assert len(smtp.correos) == 3


def test_una_pausa_de_350_avisa_al_gerente_por_webhook_firmado(http, como, receptor_webhook, ajustes):
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        solo_contacto(c, "ger-talavera", "webhook", receptor_webhook.url)
        secreto = c.execute("SELECT secreto_webhook FROM avisos_tienda WHERE tienda = 'talavera'").fetchone()
    hilo = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    pasada = entregar_pendientes(http.app.state.servicio.pool, {"webhook": CanalWebhook(timeout=5)},
                                 base_url=BASE, ahora=DESPUES)
    assert pasada.enviados == 1 and len(receptor_webhook.recibidos) == 1
    recibido = receptor_webhook.recibidos[0]
    assert verificar_firma(secreto["secreto_webhook"], recibido.cabeceras[CABECERA_FECHA], recibido.cuerpo,
                           recibido.cabeceras[CABECERA_FIRMA])
    assert (recibido.json["rol_minimo"], recibido.json["importe"]) == ("gerente", "350.00")
    assert recibido.json["enlace"].endswith(f"#{hilo}")


def test_la_pasada_periodica_escala_y_entrega_con_los_ajustes(http, como, smtp, ajustes):
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE avisos_tienda SET urgente_desde = 100")  # urgente: sin esperar al horario
    pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    informe = una_pasada(http.app.state.servicio, ajustes=ajustes.model_copy(update={"smtp_url": smtp.url}))
    assert informe["avisos"]["entregados"] == 1
    assert [c.para[0] for c in smtp.correos] == ["ger-talavera@tienda.example"]
    # Pasado el escalado (la prueba lo acorta a 1 minuto), la pasada avisa al siguiente nivel.
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE avisos_tienda SET escalado_minutos = 1")
        c.execute("UPDATE aprobaciones_pendientes SET creada = creada - interval '2 minutes'")
    informe = una_pasada(http.app.state.servicio, ajustes=ajustes.model_copy(update={"smtp_url": smtp.url}))
    assert (informe["avisos"]["escalados"], informe["avisos"]["entregados"]) == (1, 1)
    assert [c.para[0] for c in smtp.correos] == ["ger-talavera@tienda.example", "reg-centro@tienda.example"]


def test_un_fallo_al_encolar_avisos_no_bloquea_ni_pierde_la_aprobacion(http, como, ajustes, monkeypatch):
    from agente.notificaciones import destinatarios

    def roto(*args, **kwargs):
        raise RuntimeError("avisos caídos (prueba)")

    monkeypatch.setattr(destinatarios, "_avisar", roto)
    hilo = pausa_de_pedido(http, como, "C-0009", PEDIDO_350)
    assert http.get(f"/api/aprobaciones/{hilo}", headers=como("ger-talavera")).status_code == 200
    with psycopg.connect(ajustes.database_url, **KWARGS_CONEXION) as c:
        assert c.execute("SELECT count(*) AS n FROM avisos_salida").fetchone()["n"] == 0
    assert decidir_como(http, como, hilo, "ger-talavera").json()["estado"] == "aplicada"
