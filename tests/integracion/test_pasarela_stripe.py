"""La pasarela Stripe contra el protocolo: el SDK oficial habla con un servidor local de Stripe.

El servidor (``tests/apoyo/servidor_stripe.py``) es el contrato: cuerpos form-encoded,
``Idempotency-Key``, errores con la forma de Stripe y webhooks firmados. Aquí, el libro
y el chat del cliente ante cada respuesta del proveedor.
"""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest
import stripe

from agente.servicio.fabrica import crear_servicio
from caja.movimientos import completar_pendientes
from caja.pasarela_stripe import PasarelaStripe
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorPasarela, EventoNoValido
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.fabricas import ajustes_prueba, consultar, conversacion, uno
from tests.apoyo.servidor_stripe import CLAVE, SECRETO_WEBHOOK, servidor_stripe

SARTEN = "P-20260920-0102"  # C-0002, MEN-001 24,90 EUR, entregado hace 3 días
PAGO_SARTEN = "pi_demo_p_20260920_0102"
ANA = ContextoCliente(cliente_id="C-0002", tienda="talavera", nombre="Ana")


@pytest.fixture
def stripe_local():
    with servidor_stripe() as servidor:
        servidor.pagos[PAGO_SARTEN] = 2490
        yield servidor


@pytest.fixture
def pasarela(pool, stripe_local):
    return PasarelaStripe(pool=pool, clave=CLAVE, secreto_webhook=SECRETO_WEBHOOK,
                          api_base=stripe_local.base, reintentos=2, tiempo_maximo=5)


@pytest.fixture
def servicio(bd_url, pasarela):
    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=pasarela, pausa_reintentos=0.01)
    yield s
    s.cerrar()


def _reembolso(pool, pasarela, importe="24.90", llamada="call-1"):
    return reembolsar(pool, contexto=ANA, thread_id="hilo-s", tool_call_id=llamada, pedido=SARTEN,
                      importe=Decimal(importe), motivo="se pega", pasarela=pasarela)


def _ultimo_mensaje(bd_url, hilo):
    return consultar(bd_url, "SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(h)s "
                             "ORDER BY id DESC LIMIT 1", {"h": hilo})[0]


def _hallazgos_libro(servicio):
    return {k: v for k, v in servicio.auditoria(pendientes_mas_de_segundos=3600)["libro"].items() if v}


def test_reembolso_automatico_por_el_chat_es_un_reembolso_en_stripe_con_su_clave(
    servicio, stripe_local, bd_url
):
    hilo, r = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert r.estado == "respondida" and numero in r.mensaje_cliente
    creados = stripe_local.creaciones("/v1/refunds")
    assert len(creados) == 1 and len(stripe_local.reembolsos) == 1
    assert creados[0]["clave"] == f"agente:reembolso:{numero}"
    assert creados[0]["datos"] == {"payment_intent": PAGO_SARTEN, "amount": "2490",
                                   "metadata": {"referencia": numero, "origen": "agente"}}
    fila = consultar(bd_url, "SELECT estado, id_proveedor FROM reembolsos")[0]
    assert fila == {"estado": "emitido", "id_proveedor": next(iter(stripe_local.reembolsos))}
    assert _hallazgos_libro(servicio) == {}


def test_reembolso_parcial_va_por_el_importe_del_libro_y_repetir_no_crea_otro(pool, pasarela, stripe_local):
    primero = _reembolso(pool, pasarela, "10.00")
    assert primero["estado"] == "emitido"
    repetido = _reembolso(pool, pasarela, "10.00")
    assert repetido["repetido"] is True
    # Otra pasada de la bandeja tampoco: lo encuentra por su referencia en el pago.
    pasarela.emitir_reembolso(primero["reembolso"], Decimal("10.00"))
    assert [r["amount"] for r in stripe_local.reembolsos.values()] == [1000]


def test_respuesta_perdida_por_la_red_se_reintenta_con_la_misma_clave_y_es_un_reembolso(
    pool, pasarela, stripe_local, bd_url
):
    stripe_local.perder_respuestas(1)  # Stripe lo hizo y la respuesta no llegó
    resultado = _reembolso(pool, pasarela)
    assert resultado["estado"] == "emitido"
    creados = stripe_local.creaciones("/v1/refunds")
    assert len(creados) == 2 and creados[0]["clave"] == creados[1]["clave"]
    assert len(stripe_local.reembolsos) == 1
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"


def test_limite_de_ritmo_se_reintenta_si_stripe_lo_dice_y_si_no_queda_pendiente(
    pool, pasarela, stripe_local, bd_url
):
    stripe_local.fallar(1, estado=429, tipo="rate_limit_error", codigo="lock_timeout", reintentar="true")
    assert _reembolso(pool, pasarela)["estado"] == "emitido"

    stripe_local.pagos["pi_otro"] = 100
    with pool.connection() as c:
        c.execute("UPDATE pedidos SET referencia_pago = 'pi_otro' WHERE id = 'P-20261003-0045'")
    stripe_local.fallar(3, estado=429, tipo="rate_limit_error", codigo="rate_limit")
    with pytest.raises(ErrorPasarela, match="pendiente"):
        reembolsar(pool, contexto=ContextoCliente(cliente_id="C-0010", tienda="talavera", nombre="X"),
                   thread_id="hilo-r", tool_call_id="call-r", pedido="P-20261003-0045",
                   importe=Decimal("1.00"), motivo="x", pasarela=pasarela)
    fila = consultar(bd_url, "SELECT estado, intentos, requiere_persona, ultimo_error FROM reembolsos "
                             "WHERE pedido_id = 'P-20261003-0045'")[0]
    assert fila["estado"] == "pendiente" and fila["intentos"] == 1 and not fila["requiere_persona"]
    assert "ritmo" in fila["ultimo_error"]


def test_tarjeta_rechazada_deja_el_reembolso_pendiente_y_marcado_para_una_persona(
    pool, pasarela, stripe_local, bd_url, servicio
):
    stripe_local.fallar(1, estado=402, tipo="card_error", codigo="card_declined")
    with pytest.raises(ErrorPasarela, match="rechazado") as info:
        _reembolso(pool, pasarela)
    assert info.value.datos["marcado"] is True
    fila = consultar(bd_url, "SELECT estado, requiere_persona FROM reembolsos")[0]
    assert fila == {"estado": "pendiente", "requiere_persona": True}
    assert [h["hallazgo"] for h in _hallazgos_libro(servicio)["marcados"]] == ["marcado_para_una_persona"]


def test_la_misma_clave_con_otro_cuerpo_es_idempotency_error(stripe_local):
    cabeceras = {"Authorization": f"Bearer {CLAVE}", "Idempotency-Key": "k-1"}
    url = f"{stripe_local.base}/v1/refunds"
    uno_ = httpx.post(url, data={"payment_intent": PAGO_SARTEN, "amount": "100"}, headers=cabeceras)
    dos = httpx.post(url, data={"payment_intent": PAGO_SARTEN, "amount": "100"}, headers=cabeceras)
    otro = httpx.post(url, data={"payment_intent": PAGO_SARTEN, "amount": "200"}, headers=cabeceras)
    assert uno_.status_code == dos.status_code == 200 and uno_.json() == dos.json()
    assert dos.headers["Idempotent-Replayed"] == "true"
    assert otro.status_code == 400 and otro.json()["error"]["type"] == "idempotency_error"
    assert len(stripe_local.reembolsos) == 1


def test_reembolso_pending_se_completa_por_webhook_y_el_chat_del_cliente_lo_sabe(
    servicio, stripe_local, bd_url
):
    stripe_local.estado_reembolsos = "pending"
    hilo, r = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    assert "pendiente" in r.mensaje_cliente and "emitido" not in r.mensaje_cliente
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "pendiente"
    assert _hallazgos_libro(servicio) == {}  # en curso en el proveedor: no es un descuadre

    (cuerpo, firma), (cuerpo2, firma2) = stripe_local.terminar_reembolso(next(iter(stripe_local.reembolsos)))
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "aplicado"
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"
    ultimo = _ultimo_mensaje(bd_url, hilo)
    assert ultimo["rol"] == "agente" and numero in ultimo["texto"] and "Ya está hecho" in ultimo["texto"]
    mensajes = uno(bd_url, "SELECT count(*) FROM mensajes_conversacion")
    # El otro evento del mismo cambio y el mismo evento repetido no cambian nada.
    assert servicio.recibir_evento_pasarela(cuerpo2, firma2)["resultado"] == "ya_estaba"
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "repetido"
    assert uno(bd_url, "SELECT count(*) FROM mensajes_conversacion") == mensajes
    assert len(stripe_local.reembolsos) == 1 and _hallazgos_libro(servicio) == {}


def test_reembolso_fallido_por_webhook_se_marca_la_auditoria_lo_reporta_y_el_cliente_sabe_la_verdad(
    servicio, stripe_local, bd_url
):
    stripe_local.estado_reembolsos = "pending"
    hilo, _ = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    (cuerpo, firma), _ = stripe_local.terminar_reembolso(next(iter(stripe_local.reembolsos)), "failed")
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "fallido"
    fila = consultar(bd_url, "SELECT estado, requiere_persona, ultimo_error FROM reembolsos")[0]
    assert fila["estado"] == "pendiente" and fila["requiere_persona"]
    assert "expired_or_canceled_card" in fila["ultimo_error"]
    ultimo = _ultimo_mensaje(bd_url, hilo)
    assert "no se ha podido completar" in ultimo["texto"] and "todavía no te hemos devuelto" in ultimo["texto"]
    hallazgos = _hallazgos_libro(servicio)
    assert [h["hallazgo"] for h in hallazgos["marcados"]] == ["marcado_para_una_persona"]
    # Sin dinero movido en el proveedor, el libro y la pasarela cuadran.
    assert "pasarela" not in hallazgos


def test_webhook_falsificado_o_viejo_no_cambia_nada(servicio, stripe_local, bd_url):
    stripe_local.estado_reembolsos = "pending"
    conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    id_ = next(iter(stripe_local.reembolsos))
    (cuerpo, firma), _ = stripe_local.terminar_reembolso(id_)
    falsos = [
        (cuerpo, firma.replace("v1=", "v1=0")),  # firma alterada
        (cuerpo.replace(b'"succeeded"', b'"failed"'), firma),  # cuerpo alterado
        (cuerpo, None),  # sin firma
    ]
    stripe_local.secreto_webhook = "whsec_de_otro"
    falsos.append(stripe_local.terminar_reembolso(id_)[0])  # firmado con otro secreto
    stripe_local.secreto_webhook = SECRETO_WEBHOOK
    falsos.append(stripe_local.evento("refund.updated", stripe_local.reembolsos[id_],
                                      marca=int(time.time()) - 3600))  # viejo
    for cuerpo_falso, firma_falsa in falsos:
        with pytest.raises(EventoNoValido):
            servicio.recibir_evento_pasarela(cuerpo_falso, firma_falsa)
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "pendiente"
    assert uno(bd_url, "SELECT count(*) FROM pasarela_eventos") == 0


def test_cambio_mas_caro_manda_un_enlace_de_pago_al_chat_y_se_completa_solo_con_el_webhook_de_pagado(
    servicio, stripe_local, bd_url
):
    stock = "SELECT unidades FROM stock WHERE tienda = 'talavera' AND sku = 'MEN-004'"
    antes = uno(bd_url, stock)
    hilo, r = conversacion(servicio, "C-0002", f"Quiero cambiar la sartén del pedido {SARTEN} por la MEN-004")
    if r.estado == "esperando_aprobacion":  # +10,00 EUR: lo firma un encargado
        r = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    sesion = next(iter(stripe_local.sesiones.values()))
    assert sesion["amount_total"] == 1000 and sesion["metadata"]["referencia"] == "CO-000001"
    assert sesion["url"] in r.mensaje_cliente and "en cuanto se confirme el pago" in r.mensaje_cliente
    assert _ultimo_mensaje(bd_url, hilo)["texto"] == r.mensaje_cliente
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "pendiente_cobro"
    assert uno(bd_url, stock) == antes
    assert _hallazgos_libro(servicio) == {}
    # Un evento de la sesión aún sin pagar no completa nada.
    cuerpo, firma = stripe_local.evento("checkout.session.completed", {**sesion, "payment_status": "unpaid"})
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "en_curso"
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "pendiente_cobro"

    cuerpo, firma = stripe_local.pagar_sesion(sesion["id"])
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "aplicado"
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "hecha"
    assert uno(bd_url, "SELECT estado FROM cobros") == "confirmado"
    assert uno(bd_url, stock) == antes - 1
    assert "Ya está hecho el cambio" in _ultimo_mensaje(bd_url, hilo)["texto"]
    assert _hallazgos_libro(servicio) == {}


def test_stripe_lento_agota_la_espera_y_la_bandeja_lo_completa_sin_un_segundo_reembolso(
    pool, pasarela, stripe_local, bd_url
):
    stripe_local.retraso = 1.0  # más que la espera del cliente: cada intento se corta
    pasarela.cliente = stripe.StripeClient(
        CLAVE, base_addresses={"api": stripe_local.base}, max_network_retries=1,
        http_client=stripe.RequestsClient(timeout=0.3))
    with pytest.raises(ErrorPasarela, match="pendiente"):
        _reembolso(pool, pasarela)
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "pendiente"
    time.sleep(2.5)  # Stripe termina lo que recibió, con la misma clave
    creados = stripe_local.creaciones("/v1/refunds")
    assert len(creados) == 2 and creados[0]["clave"] == creados[1]["clave"]
    assert len(stripe_local.reembolsos) == 1
    stripe_local.retraso = 0
    hecho = completar_pendientes(pool, pasarela, solo_vencidos=False)
    assert len(hecho.completados) == 1
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"
    assert len(stripe_local.reembolsos) == 1


def test_enlace_sin_pagar_caduca_y_el_cambio_se_anula_con_su_unidad_libre(
    servicio, pool, pasarela, stripe_local, bd_url
):
    hilo, _ = conversacion(servicio, "C-0002", "Hola")
    sustituir(pool, contexto=ANA, thread_id=hilo, tool_call_id="call-c", pedido=SARTEN,
              sku_original="MEN-001", sku_nuevo="MEN-004", pasarela=pasarela)
    cuerpo, firma = stripe_local.caducar_sesion(next(iter(stripe_local.sesiones)))
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "caducado"
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "anulada"
    assert uno(bd_url, "SELECT estado FROM cobros") == "caducado"
    assert uno(bd_url, "SELECT count(*) FROM compensaciones_unidad") == 0
    assert "ha caducado sin pagarse" in _ultimo_mensaje(bd_url, hilo)["texto"]
    assert _hallazgos_libro(servicio) == {}
    # Un pago que llegara después no resucita el cambio.
    cuerpo, firma = stripe_local.pagar_sesion(next(iter(stripe_local.sesiones)))
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "ya_estaba"
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "anulada"


def test_la_auditoria_pasarela_libro_lee_los_registros_de_stripe(servicio, pool, pasarela, stripe_local):
    _reembolso(pool, pasarela, "10.00")
    assert _hallazgos_libro(servicio) == {}
    numero = next(iter(stripe_local.reembolsos.values()))["metadata"]["referencia"]
    # Dinero movido en el proveedor que el libro no tiene, y un segundo reembolso del mismo asiento.
    stripe_local.pagos["pi_x"] = 5000
    for referencia in ("RE-999999", numero):
        httpx.post(f"{stripe_local.base}/v1/refunds", headers={"Authorization": f"Bearer {CLAVE}"},
                   data={"payment_intent": "pi_x", "amount": "1000", "metadata[referencia]": referencia,
                         "metadata[origen]": "agente"})
    # Otro entorno (otro prefijo) en la misma cuenta no cuenta.
    httpx.post(f"{stripe_local.base}/v1/refunds", headers={"Authorization": f"Bearer {CLAVE}"},
               data={"payment_intent": "pi_x", "amount": "100", "metadata[referencia]": "RE-000001",
                     "metadata[origen]": "pruebas"})
    hallazgos = sorted((h["hallazgo"], h["referencia"]) for h in _hallazgos_libro(servicio)["pasarela"])
    assert hallazgos == [("movimiento_sin_asiento", "RE-999999"),
                         ("referencia_repetida_en_el_proveedor", numero)]


def test_un_cobro_confirmado_que_el_banco_rechaza_despues_se_marca_se_avisa_y_se_audita(
    servicio, stripe_local, bd_url
):
    """issue 39, punto 2: ``async_payment_failed`` tras el pago confirmado no es «ya_estaba»."""
    hilo, r = conversacion(servicio, "C-0002", f"Quiero cambiar la sartén del pedido {SARTEN} por la MEN-004")
    if r.estado == "esperando_aprobacion":
        servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    sesion = next(iter(stripe_local.sesiones.values()))
    cuerpo, firma = stripe_local.pagar_sesion(sesion["id"])
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "aplicado"
    assert uno(bd_url, "SELECT estado FROM cobros") == "confirmado"

    cuerpo, firma = stripe_local.evento("checkout.session.async_payment_failed",
                                        {**stripe_local.sesiones[sesion["id"]], "payment_status": "unpaid"})
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "fallo_tardio"
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "repetido"
    (cobro,) = consultar(bd_url, "SELECT numero, estado, requiere_persona, fallo_tardio_en FROM cobros")
    assert (cobro["estado"], cobro["requiere_persona"]) == ("pendiente", True) and cobro["fallo_tardio_en"]
    texto = _ultimo_mensaje(bd_url, hilo)["texto"]
    assert cobro["numero"] in texto and "tu banco ha rechazado después ese pago" in texto
    hallazgos = _hallazgos_libro(servicio)
    assert [h["hallazgo"] for h in hallazgos.pop("fallos_tardios")] == ["fallo_tardio_en_el_proveedor"]
    # El cambio ya se hizo (el stock se movió): la auditoría dice también que falta su cobro.
    assert [h["hallazgo"] for h in hallazgos.pop("diferencias")] == ["cambio_hecho_sin_cobro_confirmado"]
    assert hallazgos == {}


def _correos_de_pagos(bd_url, hilo) -> list:
    from agente.notificaciones.plantillas_cliente import pintar_cliente

    filas = consultar(bd_url, "SELECT datos FROM avisos_salida WHERE thread_id = %(h)s AND tipo = 'cliente' "
                              "AND datos->>'suceso' NOT IN ('decision', 'respuesta') ORDER BY id", {"h": hilo})
    return [pintar_cliente(f["datos"], enlace="https://x/", enlace_baja="https://x/baja", horas_enlace=24)
            for f in filas]


def test_el_correo_de_un_reembolso_que_stripe_rechaza_no_dice_que_esta_hecho(servicio, stripe_local, bd_url):
    stripe_local.estado_reembolsos = "pending"
    hilo, _ = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    (cuerpo, firma), _ = stripe_local.terminar_reembolso(next(iter(stripe_local.reembolsos)), "failed")
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "fallido"
    (correo,) = _correos_de_pagos(bd_url, hilo)
    assert "hecho" not in correo.asunto and "Ya está hecho" not in correo.texto
    assert "no se ha podido completar" in correo.asunto
    assert "todavía no te hemos devuelto ese dinero" in correo.texto


def test_el_correo_de_un_enlace_de_pago_caducado_no_dice_que_se_ha_cobrado(
    servicio, pool, pasarela, stripe_local, bd_url
):
    hilo, _ = conversacion(servicio, "C-0002", "Hola")
    sustituir(pool, contexto=ANA, thread_id=hilo, tool_call_id="call-c", pedido=SARTEN,
              sku_original="MEN-001", sku_nuevo="MEN-004", pasarela=pasarela)
    cuerpo, firma = stripe_local.caducar_sesion(next(iter(stripe_local.sesiones)))
    assert servicio.recibir_evento_pasarela(cuerpo, firma)["resultado"] == "caducado"
    (correo,) = _correos_de_pagos(bd_url, hilo)
    assert "cobrado la diferencia" not in correo.asunto and "Hemos cobrado" not in correo.texto
    assert "ha caducado" in correo.asunto and "no se te ha cobrado nada" in correo.texto
