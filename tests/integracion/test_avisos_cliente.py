"""Avisos al cliente que cerró el chat: un correo por suceso por la cola de avisos, con
un enlace a esa conversación; nada si el chat está conectado o si se dio de baja; un fallo
al encolar no pierde el mensaje del chat; lo no urgente espera a la apertura de la tienda.
Correo real: aiosmtpd."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time
from urllib.parse import unquote

import jwt
import psycopg

from agente.bd.pool import KWARGS_CONEXION
from agente.notificaciones import entregar_pendientes
from agente.notificaciones.avisos_cliente import AvisoCliente, avisar_cliente
from agente.notificaciones.canales import CanalApprise, CanalCorreo
from agente.notificaciones.entrega_cliente import RutasCliente
from nucleo.enlaces import leer_token_de_baja
from tests.apoyo.fabricas import PEDIDO_GRANDE, consultar, conversacion, uno
from tests.apoyo.fabricas_avisos import MADRID, MIERCOLES_3

DEVOLVER_CAFETERA = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
BASE = "https://atencion.tienda.example"
SECRETO = "s" * 64
ANA = "ana.garcia@example.com"


def _rutas(**por_tienda) -> RutasCliente:
    return RutasCliente(secreto=SECRETO, base_url=BASE, horas_enlace=24, por_tienda=por_tienda)


def _entregar(pool, smtp, rutas=None, **extra):
    canales = {"email": CanalCorreo(smtp_url=smtp.url, remitente="avisos@tienda.example", timeout=5),
               "apprise": CanalApprise()}
    return entregar_pendientes(pool, canales, base_url=BASE, clientes=rutas or _rutas(), **extra)


def _avisos_cliente(bd_url):
    return consultar(bd_url, "SELECT * FROM avisos_salida WHERE tipo = 'cliente' ORDER BY id")


def _token_del_enlace(texto: str) -> str:
    return unquote(re.search(r"/#token=(\S+)", texto).group(1))


def test_decision_con_el_chat_cerrado_un_correo_con_el_resultado_y_el_enlace_a_esa_conversacion(
    servicio, pool, smtp, bd_url
):
    hilo, respuesta = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    assert respuesta.estado == "esperando_aprobacion"
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}], nota="Gracias por avisarnos")

    assert len(_avisos_cliente(bd_url)) == 1
    pasada = _entregar(pool, smtp)
    assert pasada.enviados == 1
    assert _entregar(pool, smtp).total == 0  # nada sale dos veces
    [correo] = smtp.correos
    assert correo.para == [ANA]
    assert "aprobada" in correo.asunto
    texto = correo.texto
    assert "Hola, Ana:" in texto
    assert f"ha aprobado tu solicitud de reembolso del pedido {PEDIDO_GRANDE} por 120,00 EUR" in texto
    assert "Nota del encargado: Gracias por avisarnos" in texto
    # Ni el hilo, ni la decisión, ni un SKU: solo lo que el cliente conoce.
    assert hilo not in texto and "enc-talavera" not in texto and "SKU" not in texto.upper()
    datos = jwt.decode(_token_del_enlace(texto), SECRETO, algorithms=["HS256"])
    assert datos["rol"] == "cliente" and datos["cliente_id"] == "C-0001" and datos["hilo"] == hilo
    assert datos["exp"] - datos["iat"] == 24 * 3600
    baja = unquote(re.search(r"/avisos#baja=(\S+)", texto).group(1))
    assert leer_token_de_baja(SECRETO, baja) == "C-0001"
    assert correo.aviso_id == _avisos_cliente(bd_url)[0]["clave"]


def test_con_el_chat_conectado_no_se_encola_nada(servicio, smtp, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    ctx = servicio.contexto_de_cliente("C-0001")
    servicio.latido_chat("00000000-0000-0000-0000-000000000001", ctx, hilo)
    antes = uno(bd_url, "SELECT count(*) FROM mensajes_conversacion WHERE rol = 'agente'")
    servicio.decidir(hilo, "enc-talavera", [{"type": "reject", "message": "fuera de plazo"}])
    assert _avisos_cliente(bd_url) == []
    assert uno(bd_url, "SELECT count(*) FROM mensajes_conversacion WHERE rol = 'agente'") == antes + 1


def test_un_chat_que_vuelve_antes_del_envio_descarta_el_aviso(servicio, pool, smtp, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    servicio.latido_chat("00000000-0000-0000-0000-000000000002", servicio.contexto_de_cliente("C-0001"), hilo)
    _entregar(pool, smtp)
    assert [f["estado"] for f in _avisos_cliente(bd_url)] == ["descartado"]
    assert "ya está en el chat" in _avisos_cliente(bd_url)[0]["ultimo_error"]
    assert smtp.correos == []
    servicio.fin_chat("00000000-0000-0000-0000-000000000002")
    assert uno(bd_url, "SELECT count(*) FROM presencia_chat") == 0


def test_un_latido_viejo_no_cuenta_como_chat_conectado(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.latido_chat("00000000-0000-0000-0000-000000000003", servicio.contexto_de_cliente("C-0001"), hilo)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE presencia_chat SET latido = now() - interval '2 minutes'")  # proceso muerto
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert len(_avisos_cliente(bd_url)) == 1


def test_la_baja_detiene_lo_nuevo_y_lo_que_estaba_por_salir(servicio, pool, smtp, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert servicio.baja_avisos_cliente("C-0001") is True
    _entregar(pool, smtp)
    assert [f["estado"] for f in _avisos_cliente(bd_url)] == ["descartado"]
    otro, _ = conversacion(servicio, "C-0001", "Quiero devolver la sartén del pedido P-20260920-0102")
    # Con la baja, ni una respuesta posterior se encola.
    assert avisar_cliente_en(bd_url, otro, AvisoCliente(suceso="respuesta", clave="x", urgente=True)) is False
    assert smtp.correos == []
    assert servicio.baja_avisos_cliente("C-9999") is False


def avisar_cliente_en(bd_url, hilo, aviso, **extra):
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        return avisar_cliente(c, hilo, aviso, **extra)


def test_un_fallo_al_encolar_no_pierde_el_mensaje_del_chat(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("ALTER TABLE presencia_chat RENAME TO presencia_rota")  # la consulta del aviso falla
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    ultimo = consultar(bd_url, "SELECT texto FROM mensajes_conversacion WHERE thread_id = %(h)s "
                               "ORDER BY id DESC LIMIT 1", {"h": hilo})[0]["texto"]
    assert numero in ultimo
    assert _avisos_cliente(bd_url) == []
    assert uno(bd_url, "SELECT aplicada IS NOT NULL FROM decisiones_encargado") is True


def test_el_mismo_suceso_dos_veces_deja_un_aviso(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    aviso = AvisoCliente(suceso="pago", clave="pago:reembolso:1", datos={"importe": "24.90"})
    assert avisar_cliente_en(bd_url, hilo, aviso) is True
    assert avisar_cliente_en(bd_url, hilo, aviso) is False
    assert len(_avisos_cliente(bd_url)) == 1


def test_lo_no_urgente_espera_a_la_apertura_de_la_tienda_y_lo_urgente_no(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    avisar_cliente_en(bd_url, hilo, AvisoCliente(suceso="pago", clave="a"), ahora=MIERCOLES_3)
    avisar_cliente_en(bd_url, hilo, AvisoCliente(suceso="decision", clave="b", urgente=True), ahora=MIERCOLES_3)
    no_urgente, urgente = _avisos_cliente(bd_url)
    assert no_urgente["proximo_intento"].astimezone(MADRID).time() == time(9, 0)
    assert no_urgente["proximo_intento"].astimezone(MADRID).date() == MIERCOLES_3.date()
    assert urgente["proximo_intento"] == MIERCOLES_3.astimezone(UTC)


def test_una_respuesta_nueva_no_se_suma_a_un_aviso_que_aun_no_salio(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    assert avisar_cliente_en(bd_url, hilo, AvisoCliente(suceso="decision", clave="d", urgente=True))
    assert not avisar_cliente_en(bd_url, hilo, AvisoCliente(suceso="respuesta", clave="r", urgente=True))
    assert len(_avisos_cliente(bd_url)) == 1


def test_la_caducidad_avisa_sin_prisa_y_dice_que_caduco(servicio, pool, smtp, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET caduca = now() - interval '1 minute'")
    assert servicio.caducar() == [hilo]
    [fila] = _avisos_cliente(bd_url)
    assert fila["urgente"] is False
    _entregar(pool, smtp, ahora=max(fila["proximo_intento"], datetime.now(UTC)))
    [correo] = smtp.correos
    assert "caducado" in correo.asunto
    assert "ha caducado sin hacerse" in correo.texto


def test_la_ruta_de_la_tienda_decide_el_canal_ninguno_o_una_url_de_apprise(servicio, pool, smtp, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    _entregar(pool, smtp, _rutas(talavera="ninguno"))
    assert [f["estado"] for f in _avisos_cliente(bd_url)] == ["descartado"]
    assert smtp.correos == []

    otro, _ = conversacion(servicio, "C-0002", "Quiero devolver la sartén del pedido P-20260920-0102")
    assert avisar_cliente_en(bd_url, otro, AvisoCliente(suceso="respuesta", clave="r", urgente=True))
    host, puerto = smtp.url.removeprefix("smtp://").split(":")
    apprise = (f"mailto://{host}:{puerto}?mode=insecure&smtp={host}&from=otra%40tienda.example"
               "&to={email}&format=text")
    assert _entregar(pool, smtp, _rutas(**{"*": apprise})).enviados == 1
    [correo] = smtp.correos
    assert correo.para == ["bruno.diaz@example.com"]
    assert "respuesta nueva" in correo.asunto


def test_un_reembolso_atascado_y_luego_completado_avisa_en_el_chat_y_por_correo_una_vez_cada_uno(
    servicio, pool, smtp, bd_url
):
    from agente.servicio.pagos.pendientes import Pagos
    from caja.pasarela import PasarelaSimulada
    from operaciones.reembolso.herramienta import reembolsar
    from tests.apoyo.fabricas import PasarelaAveriable

    ctx = servicio.contexto_de_cliente("C-0001")
    hilo = servicio.iniciar_conversacion(ctx)
    averiable = PasarelaAveriable(PasarelaSimulada(pool=pool))
    averiable.caida = True
    try:
        reembolsar(pool, contexto=ctx, thread_id=hilo, tool_call_id="r1", pedido=PEDIDO_GRANDE,
                   importe="120.00", motivo="no funciona", pasarela=averiable)
    except Exception:
        pass  # queda pendiente en el libro
    pagos = Pagos(ejecutor=servicio.ejecutor, pasarela=averiable)
    for _ in range(6):  # hasta marcarlo para una persona (MAX_INTENTOS), y una pasada más
        pagos.completar(solo_vencidos=False)
    averiable.caida = False
    pagos.completar(solo_vencidos=False)
    pagos.completar(solo_vencidos=False)

    chat = [f["texto"] for f in consultar(
        bd_url, "SELECT texto FROM mensajes_conversacion WHERE thread_id = %(h)s AND rol = 'agente' ORDER BY id",
        {"h": hilo})]
    assert len(chat) == 2
    assert "está tardando más de lo normal" in chat[0] and "Ya está hecho el reembolso" in chat[1]
    sucesos = [f["datos"]["suceso"] for f in _avisos_cliente(bd_url)]
    assert sucesos == ["marcado", "pago"]
    _entregar(pool, smtp, ahora=max(f["proximo_intento"] for f in _avisos_cliente(bd_url)))
    asuntos = [c.asunto for c in smtp.correos]
    assert asuntos == ["Talavera de la Reina: tu pago está tardando más de lo normal",
                       "Talavera de la Reina: tu reembolso ya está hecho"]
    assert "RE-" not in smtp.correos[1].texto  # ni el número interno del asiento
    assert "120,00 EUR del pedido P-20260917-0041" in smtp.correos[1].texto
