"""Avisos a quien firma: a quién, cuándo, escalado, horario, baja, reintentos y concurrencia."""

from __future__ import annotations

import contextlib
import threading
import time as reloj
from datetime import UTC, datetime, time, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agente.notificaciones import (
    avisar_aprobacion,
    avisos_de_escalado,
    clave_aviso,
    encolar_aviso,
    entregar_pendientes,
    escalar_pendientes,
)
from agente.notificaciones.horario import (
    Horario,
    en_horario,
    minutos_en_horario,
    siguiente_apertura,
)
from agente.notificaciones.plantillas import pintar
from agente.servicio.politica.gestion_autoridad import darse_de_baja
from nucleo.esperas import espera_tras
from politicas.matriz_autoridad import Requisito
from tests.apoyo.fabricas_avisos import (
    MADRID,
    MIERCOLES_3,
    MIERCOLES_10,
    PEDIDO_120,
    PEDIDO_350,
    PEDIDO_650,
    CanalContado,
    despues,
    pausar,
    salida,
)

BASE = "https://atencion.tienda.example"


def _destinatarios(conexion, thread_id, tipo=None):
    return sorted(f["encargado_id"] for f in salida(conexion, thread_id) if tipo in (None, f["tipo"]))


def _entregar(pool, canal, ahora, **extra):
    return entregar_pendientes(pool, {"email": canal}, base_url=BASE, ahora=ahora, **extra)


def _escalado_minutos(conexion, minutos, tienda="talavera"):
    conexion.execute("UPDATE avisos_tienda SET escalado_minutos = %s WHERE tienda = %s", (minutos, tienda))


# --- A quién se avisa al pausar ------------------------------------------------------

def test_la_pausa_de_650_avisa_una_vez_a_cada_persona_que_puede_firmar(conexion):
    aviso = pausar(conexion, PEDIDO_650)
    assert avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10) == 3
    # Dos firmas, una de gerente o más: el gerente y los encargados activos (pueden ser la
    # otra firma). Ni la encargada de baja, ni otra tienda, ni la regional todavía.
    assert _destinatarios(conexion, aviso.thread_id) == ["enc-talavera", "enc-talavera-2", "ger-talavera"]
    # Encolar otra vez (un reintento del servicio) no duplica nada.
    assert avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10) == 0
    assert len(salida(conexion, aviso.thread_id)) == 3
    fila = salida(conexion, aviso.thread_id)[0]
    assert fila["datos"]["firmas"] == 2 and fila["datos"]["rol_minimo"] == "gerente"
    assert fila["datos"]["importe"] == "650.00" and fila["direccion"] == "enc-talavera@tienda.example"


def test_la_pausa_de_350_avisa_al_gerente_y_al_escalar_a_la_regional(conexion):
    _escalado_minutos(conexion, 5)
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    assert _destinatarios(conexion, aviso.thread_id) == ["ger-talavera"]
    assert avisos_de_escalado(conexion, despues(MIERCOLES_10, minutes=4)) == []
    assert escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=4)) == 0
    vencidas = avisos_de_escalado(conexion, despues(MIERCOLES_10, minutes=6))
    assert [(v.thread_id, v.paso, v.espera_minutos) for v in vencidas] == [(aviso.thread_id, 1, 6)]
    assert escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=6)) == 1
    assert _destinatarios(conexion, aviso.thread_id, "escalado") == ["reg-centro"]
    escalado = [f for f in salida(conexion, aviso.thread_id) if f["tipo"] == "escalado"][0]
    assert escalado["paso"] == 1 and escalado["datos"]["espera_minutos"] == 6
    # Otra pasada (u otro servidor a la vez) no repite; no queda nivel por encima.
    assert escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=7)) == 0
    assert escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, hours=3)) == 0
    assert len(salida(conexion, aviso.thread_id)) == 2


def test_un_reembolso_de_encargado_escala_nivel_a_nivel(conexion):
    _escalado_minutos(conexion, 10)
    aviso = pausar(conexion, PEDIDO_120)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    assert _destinatarios(conexion, aviso.thread_id) == ["enc-talavera", "enc-talavera-2"]
    escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=11))
    assert _destinatarios(conexion, aviso.thread_id, "escalado") == ["ger-talavera"]
    # El segundo escalado toca a los 2 x 10 minutos, no antes.
    assert escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=15)) == 0
    escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, minutes=21))
    assert _destinatarios(conexion, aviso.thread_id, "escalado") == ["ger-talavera", "reg-centro"]


def test_el_escalado_cuenta_solo_minutos_de_horario(conexion):
    antes_de_cerrar = datetime(2026, 10, 7, 20, 50, tzinfo=MADRID)  # cierra a las 21:00
    aviso = pausar(conexion, PEDIDO_350, creada=antes_de_cerrar)
    avisar_aprobacion(conexion, aviso, ahora=antes_de_cerrar)
    assert avisos_de_escalado(conexion, datetime(2026, 10, 8, 3, 0, tzinfo=MADRID)) == []
    assert avisos_de_escalado(conexion, datetime(2026, 10, 8, 9, 15, tzinfo=MADRID)) == []
    vencidas = avisos_de_escalado(conexion, datetime(2026, 10, 8, 9, 21, tzinfo=MADRID))
    assert [v.espera_minutos for v in vencidas] == [31]


def test_si_nadie_del_nivel_tiene_contacto_se_avisa_al_siguiente(conexion):
    assert darse_de_baja(conexion, "ger-talavera") == 1
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    assert _destinatarios(conexion, aviso.thread_id) == ["reg-centro"]


def test_un_aviso_encolado_no_sale_si_la_persona_se_da_de_baja_despues(conexion, pool):
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    darse_de_baja(conexion, "ger-talavera", "email")
    canal = CanalContado()
    assert _entregar(pool, canal, MIERCOLES_10).descartados == 1
    assert canal.entregas == [] and salida(conexion, aviso.thread_id)[0]["estado"] == "descartado"


def test_una_pausa_ya_decidida_no_se_avisa(conexion, pool):
    aviso = pausar(conexion, PEDIDO_650)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    conexion.execute("DELETE FROM aprobaciones_pendientes WHERE thread_id = %s", (aviso.thread_id,))
    canal = CanalContado()
    pasada = _entregar(pool, canal, MIERCOLES_10)
    assert (pasada.enviados, pasada.descartados, canal.entregas) == (0, 3, [])
    assert avisos_de_escalado(conexion, despues(MIERCOLES_10, hours=5)) == []
    escalar_pendientes(conexion, ahora=despues(MIERCOLES_10, hours=5))
    assert conexion.execute("SELECT agotado FROM avisos_aprobacion WHERE thread_id = %s",
                            (aviso.thread_id,)).fetchone()["agotado"] is True


def test_una_zona_horaria_desconocida_no_se_puede_guardar(conexion):
    import psycopg

    with pytest.raises(psycopg.errors.InvalidParameterValue):
        conexion.execute("UPDATE avisos_tienda SET zona_horaria = 'Marte/Olympus'")


def test_encolar_el_mismo_aviso_dos_veces_deja_uno(conexion):
    aviso = pausar(conexion, PEDIDO_350)
    datos = {"thread_id": aviso.thread_id, "tienda": "talavera"}
    argumentos = dict(tienda="talavera", encargado_id="ger-talavera", canal="email",
                      direccion="ger-talavera@tienda.example", thread_id=aviso.thread_id,
                      interrupt_id=aviso.interrupt_id, datos=datos, no_antes_de=MIERCOLES_10)
    assert encolar_aviso(conexion, **argumentos) is True
    assert encolar_aviso(conexion, **argumentos) is False
    assert encolar_aviso(conexion, **{**argumentos, "tipo": "escalado", "paso": 1}) is True
    assert len(salida(conexion, aviso.thread_id)) == 2
    clave = {k: argumentos[k] for k in ("thread_id", "interrupt_id", "encargado_id", "canal", "direccion")}
    assert clave_aviso(**clave, tipo="pendiente", paso=0) == salida(conexion, aviso.thread_id)[0]["clave"]
    assert clave_aviso(**clave, tipo="pendiente", paso=0) != clave_aviso(**{**clave, "encargado_id": "x"},
                                                                       tipo="pendiente", paso=0)


# --- Horario y urgencia --------------------------------------------------------------

def test_fuera_de_horario_el_aviso_espera_a_la_apertura(conexion, pool):
    aviso = pausar(conexion, PEDIDO_350, creada=MIERCOLES_3)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_3)
    fila = salida(conexion, aviso.thread_id)[0]
    assert fila["proximo_intento"] == datetime(2026, 10, 7, 9, 0, tzinfo=MADRID)
    canal = CanalContado()
    assert _entregar(pool, canal, MIERCOLES_3).total == 0
    assert _entregar(pool, canal, datetime(2026, 10, 7, 9, 0, tzinfo=MADRID)).enviados == 1


def test_un_aviso_urgente_sale_de_madrugada(conexion, pool):
    conexion.execute("UPDATE avisos_tienda SET urgente_desde = 300 WHERE tienda = 'talavera'")
    aviso = pausar(conexion, PEDIDO_350, creada=MIERCOLES_3)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_3)
    canal = CanalContado()
    assert _entregar(pool, canal, MIERCOLES_3).enviados == 1
    assert "350,00 EUR" in canal.entregas[0].asunto


# --- Nunca rompe la pausa; reintentos; concurrencia ----------------------------------

@pytest.mark.parametrize("en_pipeline", [False, True], ids=["normal", "pipeline"])
def test_un_fallo_al_encolar_avisos_no_rompe_la_pausa(conexion, en_pipeline):
    # Con o sin modo pipeline (el servicio hoy no lo usa; quien llame puede): el error
    # tiene que salir dentro del savepoint de los avisos.
    with conexion.pipeline() if en_pipeline else contextlib.nullcontext(), conexion.transaction():
        aviso = pausar(conexion, PEDIDO_350)
        roto = Requisito(importe=None, firmas=1, rol_minimo="rol-inexistente")  # viola una FK
        from dataclasses import replace

        assert avisar_aprobacion(conexion, replace(aviso, requisito=roto), ahora=MIERCOLES_10) == 0
        conexion.execute("UPDATE consultas_asistente SET actualizada = now() WHERE thread_id = %s",
                         (aviso.thread_id,))
    assert conexion.execute("SELECT count(*) AS n FROM aprobaciones_pendientes WHERE thread_id = %s",
                            (aviso.thread_id,)).fetchone()["n"] == 1
    assert salida(conexion, aviso.thread_id) == []


def test_un_canal_caido_reintenta_con_espera_creciente_y_acaba_en_fallido(conexion, pool):
    aviso = pausar(conexion, PEDIDO_350)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    canal = CanalContado(fallar=True)
    ahora, esperas = MIERCOLES_10, []
    for _ in range(3):
        pasada = _entregar(pool, canal, ahora, intentos_max=3, espera_base=30)
        fila = salida(conexion, aviso.thread_id)[0]
        esperas.append((fila["proximo_intento"] - ahora).total_seconds())
        # Antes de que venza la espera no se vuelve a intentar.
        assert _entregar(pool, canal, despues(ahora, seconds=1), intentos_max=3).total == 0
        ahora = fila["proximo_intento"]
    assert esperas[:2] == [30.0, 60.0]
    assert (pasada.fallidos, fila["estado"], fila["intentos"]) == (1, "fallido", 3)
    assert fila["ultimo_error"] == "canal caído (prueba)"
    # La aprobación sigue esperando su firma.
    assert conexion.execute("SELECT count(*) AS n FROM aprobaciones_pendientes").fetchone()["n"] == 1


class CanalConFallo(CanalContado):
    def enviar(self, entrega):
        raise RuntimeError("error inesperado del canal")


def test_un_error_inesperado_de_un_canal_no_para_la_pasada(conexion, pool):
    aviso = pausar(conexion, PEDIDO_650)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    pasada = _entregar(pool, CanalConFallo(), MIERCOLES_10)
    assert (pasada.reintentos, pasada.enviados) == (3, 0)
    assert {f["ultimo_error"] for f in salida(conexion, aviso.thread_id)} == {"error inesperado del canal"}


def test_la_espera_se_dobla_hasta_el_maximo():
    assert [espera_tras(n, base=30, maximo=200) for n in (1, 2, 3, 4, 5)] == [30, 60, 120, 200, 200]


class CanalLento(CanalContado):
    def enviar(self, entrega):
        reloj.sleep(0.05)
        super().enviar(entrega)


def test_varios_trabajadores_a_la_vez_no_envian_dos_veces_lo_mismo(conexion, pool):
    avisos = [pausar(conexion, PEDIDO_650) for _ in range(4)]
    for aviso in avisos:
        avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    canal = CanalLento()
    hilos = [
        threading.Thread(target=_entregar, args=(pool, canal, MIERCOLES_10), kwargs={"limite": 3})
        for _ in range(4)
    ]
    for hilo in hilos:
        hilo.start()
    for hilo in hilos:
        hilo.join()
    _entregar(pool, canal, MIERCOLES_10)  # lo que quedara
    claves = [e.clave for e in canal.entregas]
    assert len(claves) == 12 and len(set(claves)) == 12


# --- Plantillas ----------------------------------------------------------------------

def test_el_aviso_en_espanol_lleva_importe_motivo_cliente_y_enlace_sin_datos_personales(conexion):
    aviso = pausar(conexion, PEDIDO_650)
    avisar_aprobacion(conexion, aviso, ahora=MIERCOLES_10)
    datos = next(f["datos"] for f in salida(conexion, aviso.thread_id) if f["encargado_id"] == "ger-talavera")
    mensaje = pintar(datos, BASE + "/")
    assert mensaje.asunto == f"[Talavera de la Reina] Reembolso de 650,00 EUR del pedido {PEDIDO_650} espera tu firma"
    assert mensaje.texto.startswith("Hola, Marta Jiménez:")
    assert "(cliente C-0006)" in mensaje.texto
    assert "- importe 650,00 EUR supera el límite de 60,00 EUR de la tienda" in mensaje.texto
    assert "Firma necesaria: 2 firmas de personas distintas; al menos una de gerente o superior." in mensaje.texto
    assert f"Abrir la tarjeta: {BASE}/encargado#{aviso.thread_id}" in mensaje.texto
    assert "Fernando" not in mensaje.texto and "@example.com" not in mensaje.texto


# --- Horario (propiedades) -----------------------------------------------------------

HORARIO = Horario()
instantes = st.datetimes(
    min_value=datetime(2026, 1, 1), max_value=datetime(2027, 12, 31), timezones=st.just(UTC)
)


def test_el_horario_por_defecto_abre_de_lunes_a_sabado_de_9_a_21():
    assert en_horario(HORARIO, MIERCOLES_10) and not en_horario(HORARIO, MIERCOLES_3)
    assert not en_horario(HORARIO, datetime(2026, 10, 4, 12, 0, tzinfo=MADRID))  # domingo
    assert siguiente_apertura(HORARIO, datetime(2026, 10, 10, 22, 0, tzinfo=MADRID)) == datetime(
        2026, 10, 12, 9, 0, tzinfo=MADRID
    )  # sábado por la noche -> lunes a las 9
    assert minutos_en_horario(HORARIO, datetime(2026, 10, 7, 20, 0, tzinfo=MADRID),
                              datetime(2026, 10, 8, 10, 0, tzinfo=MADRID)) == 120


@settings(max_examples=150, deadline=None)
@given(a=instantes, b=instantes, c=instantes)
def test_los_minutos_de_horario_se_suman_por_tramos_y_no_superan_el_reloj(a, b, c):
    desde, medio, hasta = sorted((a, b, c))
    total = minutos_en_horario(HORARIO, desde, hasta)
    partes = minutos_en_horario(HORARIO, desde, medio) + minutos_en_horario(HORARIO, medio, hasta)
    assert abs(total - partes) < 1e-6
    assert 0 <= total <= (hasta - desde).total_seconds() / 60 + 1e-6


@settings(max_examples=150, deadline=None)
@given(instante=instantes)
def test_la_siguiente_apertura_esta_en_horario_y_nunca_antes(instante):
    apertura = siguiente_apertura(HORARIO, instante)
    assert apertura >= instante and en_horario(HORARIO, apertura)
    assert apertura - instante < timedelta(days=2)
    horario_nocturno = Horario(abre=time(0, 0), cierra=time(23, 59), dias=frozenset(range(1, 8)))
    assert siguiente_apertura(horario_nocturno, instante) - instante <= timedelta(minutes=1)
