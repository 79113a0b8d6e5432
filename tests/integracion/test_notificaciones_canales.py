"""Canales reales: SMTP (aiosmtpd), webhook firmado y tipo Slack (receptor HTTP local), Apprise;
y una caída entre enviar y marcar (proceso matado) que no deja avisos duplicados."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
import textwrap

import pytest

from agente.notificaciones import (
    ErrorCanal,
    avisar_aprobacion,
    entregar_pendientes,
    verificar_firma,
)
from agente.notificaciones.canales import (
    CABECERA_AVISO,
    CABECERA_FECHA,
    CABECERA_FIRMA,
    CanalApprise,
    CanalCorreo,
    CanalWebhook,
    Entrega,
)
from tests.apoyo.fabricas_avisos import (
    MIERCOLES_10,
    PEDIDO_350,
    PEDIDO_650,
    despues,
    pausar,
    salida,
    solo_contacto,
)
from tests.apoyo.rutas import RAIZ

BASE = "https://atencion.tienda.example"
REMITENTE = "Avisos Tienda <avisos@tienda.example>"


def _correo(smtp_url):
    return CanalCorreo(smtp_url=smtp_url, remitente=REMITENTE, timeout=5)


def _secreto(conexion, tienda="talavera"):
    return conexion.execute(
        "SELECT secreto_webhook FROM avisos_tienda WHERE tienda = %s", (tienda,)
    ).fetchone()["secreto_webhook"]


# --- Correo --------------------------------------------------------------------------

def test_un_correo_por_firmante_con_asunto_en_espanol_y_la_clave_del_aviso(conexion, pool, smtp):
    aviso = pausar(conexion, PEDIDO_650)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    pasada = entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE, ahora=MIERCOLES_10)
    assert pasada.enviados == 3
    assert sorted(c.para[0] for c in smtp.correos) == [
        "enc-talavera-2@tienda.example", "enc-talavera@tienda.example", "ger-talavera@tienda.example",
    ]
    claves = {f["direccion"]: f["clave"] for f in salida(conexion, aviso.thread_id)}
    for correo in smtp.correos:
        assert correo.aviso_id == claves[correo.para[0]]
        assert correo.asunto == (
            f"[Talavera de la Reina] Reembolso de 650,00 EUR del pedido {PEDIDO_650} espera tu firma"
        )
        assert f"{BASE}/encargado#{aviso.thread_id}" in correo.texto
        assert "avisos@tienda.example" in correo.mensaje["From"]
    assert {f["estado"] for f in salida(conexion, aviso.thread_id)} == {"enviado"}
    # Otra pasada no envía nada más.
    assert entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE,
                               ahora=despues(MIERCOLES_10, hours=1)).total == 0
    assert len(smtp.correos) == 3


def test_un_servidor_smtp_caido_es_un_error_del_canal():
    canal = CanalCorreo(smtp_url="smtp://127.0.0.1:1", remitente=REMITENTE, timeout=2)
    entrega = Entrega(clave="av-x", canal="email", direccion="a@tienda.example", asunto="a", texto="b")
    with pytest.raises(ErrorCanal, match="(?i)connection|conex"):
        canal.enviar(entrega)


def test_una_url_smtp_no_valida_se_rechaza_al_configurar():
    with pytest.raises(ValueError, match="AGENTE_SMTP_URL"):
        CanalCorreo(smtp_url="http://correo", remitente=REMITENTE)


_MATAR_TRAS_ENVIAR = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import datetime
    from agente.bd.pool import abrir_pool
    from agente.notificaciones import entregar_pendientes
    from agente.notificaciones.canales import CanalCorreo

    url, smtp_url, ahora = sys.argv[1:4]
    real = CanalCorreo(smtp_url=smtp_url, remitente="avisos@tienda.example", timeout=5)

    class MatarTrasEnviar:
        def enviar(self, entrega):
            real.enviar(entrega)
            os.kill(os.getpid(), signal.SIGKILL)  # muere antes de marcar el aviso como enviado

    pool = abrir_pool(url, max_size=2)
    entregar_pendientes(pool, {"email": MatarTrasEnviar()}, base_url="https://t.example",
                        ahora=datetime.fromisoformat(ahora), limite=1)
    """
)


@pytest.mark.lento
def test_una_caida_entre_enviar_y_marcar_no_deja_duplicados_para_quien_deduplica(
    bd_url, conexion, pool, smtp
):
    aviso = pausar(conexion, PEDIDO_650)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    proceso = subprocess.run(
        [sys.executable, "-c", _MATAR_TRAS_ENVIAR, bd_url, smtp.url, MIERCOLES_10.isoformat()],
        cwd=RAIZ, capture_output=True, text=True, timeout=60,
    )
    assert proceso.returncode == -9, proceso.stderr
    assert len(smtp.correos) == 1
    reclamada = [f for f in salida(conexion, aviso.thread_id) if f["intentos"] == 1]
    assert len(reclamada) == 1 and reclamada[0]["estado"] == "pendiente"
    # Mientras dura el alquiler del aviso reclamado, nadie lo repite.
    entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE, ahora=MIERCOLES_10)
    assert len(smtp.correos) == 3
    # Vencido el alquiler, sale otra vez: con la misma clave.
    entregar_pendientes(pool, {"email": _correo(smtp.url)}, base_url=BASE,
                        ahora=despues(MIERCOLES_10, minutes=5))
    assert len(smtp.correos) == 4
    por_clave = {}
    for correo in smtp.correos:
        por_clave.setdefault(correo.aviso_id, set()).add(correo.para[0])
    assert len(por_clave) == 3 and all(len(p) == 1 for p in por_clave.values())
    assert {f["estado"] for f in salida(conexion, aviso.thread_id)} == {"enviado"}
    assert len(salida(conexion, aviso.thread_id)) == 3


# --- Webhooks ------------------------------------------------------------------------

def test_el_webhook_va_firmado_con_el_secreto_de_la_tienda(conexion, pool, receptor_webhook):
    solo_contacto(conexion, "ger-talavera", "webhook", receptor_webhook.url)
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    pasada = entregar_pendientes(pool, {"webhook": CanalWebhook(timeout=5)}, base_url=BASE,
                                 ahora=MIERCOLES_10)
    assert pasada.enviados == 1 and len(receptor_webhook.recibidos) == 1
    recibido = receptor_webhook.recibidos[0]
    fecha, firma = recibido.cabeceras[CABECERA_FECHA], recibido.cabeceras[CABECERA_FIRMA]
    # La firma es la del contrato, calculada aquí sin el código del producto.
    esperada = hmac.new(_secreto(conexion).encode(), f"{fecha}.".encode() + recibido.cuerpo, hashlib.sha256)
    assert firma == f"sha256={esperada.hexdigest()}"
    assert verificar_firma(_secreto(conexion), fecha, recibido.cuerpo, firma)
    assert not verificar_firma(_secreto(conexion, "madrid-centro"), fecha, recibido.cuerpo, firma)
    assert not verificar_firma(_secreto(conexion), fecha, recibido.cuerpo.replace(b"350", b"999"), firma)
    assert not verificar_firma(_secreto(conexion), str(int(fecha) - 3600), recibido.cuerpo, firma)
    cuerpo = recibido.json
    assert cuerpo["id"] == recibido.cabeceras[CABECERA_AVISO] == salida(conexion, aviso.thread_id)[0]["clave"]
    assert (cuerpo["tipo"], cuerpo["importe"], cuerpo["importe_texto"]) == (
        "aprobacion_pendiente", "350.00", "350,00 EUR",
    )
    assert (cuerpo["firmas_necesarias"], cuerpo["rol_minimo"], cuerpo["cliente_id"]) == (1, "gerente", "C-0009")
    assert cuerpo["enlace"] == f"{BASE}/encargado#{aviso.thread_id}"


def test_el_formato_slack_lleva_texto_y_boton_a_la_tarjeta(conexion, pool, receptor_webhook):
    solo_contacto(conexion, "ger-talavera", "slack", receptor_webhook.url)
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    entregar_pendientes(pool, {"slack": CanalWebhook(formato="slack", timeout=5)}, base_url=BASE,
                        ahora=MIERCOLES_10)
    recibido = receptor_webhook.recibidos[0]
    cuerpo = recibido.json
    assert cuerpo["text"].startswith("[Talavera de la Reina] Reembolso de 350,00 EUR")
    boton = cuerpo["blocks"][1]["elements"][0]
    assert boton["url"] == f"{BASE}/encargado#{aviso.thread_id}"
    assert "Una firma de gerente o superior." in cuerpo["blocks"][0]["text"]["text"]
    assert verificar_firma(_secreto(conexion), recibido.cabeceras[CABECERA_FECHA], recibido.cuerpo,
                           recibido.cabeceras[CABECERA_FIRMA])


def test_un_webhook_que_falla_se_reintenta_mas_tarde_y_luego_sale(conexion, pool, receptor_webhook):
    solo_contacto(conexion, "ger-talavera", "webhook", receptor_webhook.url)
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    canales = {"webhook": CanalWebhook(timeout=5)}
    receptor_webhook.estado = 500
    pasada = entregar_pendientes(pool, canales, base_url=BASE, ahora=MIERCOLES_10, espera_base=30)
    fila = salida(conexion, aviso.thread_id)[0]
    assert (pasada.reintentos, fila["estado"], fila["ultimo_error"]) == (1, "pendiente", "el webhook respondió HTTP 500")
    assert fila["proximo_intento"] == despues(MIERCOLES_10, seconds=30)
    receptor_webhook.estado = 200
    assert entregar_pendientes(pool, canales, base_url=BASE, ahora=despues(MIERCOLES_10, seconds=10)).total == 0
    assert entregar_pendientes(pool, canales, base_url=BASE, ahora=despues(MIERCOLES_10, seconds=31)).enviados == 1
    claves = {r.cabeceras[CABECERA_AVISO] for r in receptor_webhook.recibidos}
    assert len(receptor_webhook.recibidos) == 2 and len(claves) == 1  # mismo aviso, misma clave


def test_una_url_de_apprise_sirve_de_canal(conexion, pool, receptor_webhook):
    url_apprise = receptor_webhook.url.replace("http://", "json://")
    solo_contacto(conexion, "ger-talavera", "apprise", url_apprise)
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    pasada = entregar_pendientes(pool, {"apprise": CanalApprise()}, base_url=BASE, ahora=MIERCOLES_10)
    assert pasada.enviados == 1
    cuerpo = receptor_webhook.recibidos[0].json
    assert cuerpo["title"].startswith("[Talavera de la Reina] Reembolso de 350,00 EUR")
    assert f"{BASE}/encargado#{aviso.thread_id}" in cuerpo["message"]


def test_sin_smtp_configurado_los_correos_esperan_a_otro_proceso(conexion, pool):
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    from agente.notificaciones import canales_desde_ajustes
    from tests.apoyo.fabricas import ajustes_prueba

    canales = canales_desde_ajustes(ajustes_prueba("postgresql://x/y"))
    assert "email" not in canales
    assert entregar_pendientes(pool, canales, base_url=BASE, ahora=MIERCOLES_10).total == 0
    assert salida(conexion, aviso.thread_id)[0]["estado"] == "pendiente"
    con_smtp = canales_desde_ajustes(ajustes_prueba("postgresql://x/y", smtp_url="smtp://127.0.0.1:2525"))
    assert isinstance(con_smtp["email"], CanalCorreo)


def test_el_trabajador_toma_smtp_base_y_reintentos_de_los_ajustes(conexion, pool, smtp):
    from datetime import UTC, datetime

    from agente.notificaciones import entregar_segun_ajustes
    from tests.apoyo.fabricas import ajustes_prueba

    ahora = datetime.now(UTC)
    conexion.execute("UPDATE avisos_tienda SET urgente_desde = 1")  # sale ya, sea la hora que sea
    aviso = pausar(conexion, PEDIDO_350, creada=ahora)
    avisar_aprobacion(conexion, aviso, ahora=ahora)
    ajustes = ajustes_prueba("postgresql://x/y", smtp_url=smtp.url, avisos_base_url="https://t.example",
                             avisos_remitente="firmas@t.example")
    assert entregar_segun_ajustes(pool, ajustes, ahora=ahora).enviados == 1
    assert "https://t.example/encargado#" in smtp.correos[0].texto
    assert "firmas@t.example" in smtp.correos[0].mensaje["From"]
