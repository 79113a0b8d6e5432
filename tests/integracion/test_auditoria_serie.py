"""La auditoría en serie: lo que varias conversaciones a la vez dejaron salir sin firma.

Cada prueba reproduce por fuera del agente lo que dejó la carrera: veredictos «sin firma»
guardados antes de que existiera ninguno de los efectos (cada conversación vio al
cliente limpio) y las herramientas ejecutando uno tras otro; o la API de la tienda pisando
el estado de un pedido. Se comprueba que la comprobación lo ve, que es lo único que la
auditoría ve (sin firma, libro y política siguen a cero) y que la CLI y ``/metrics`` lo
cuentan. La demo y un flujo normal, con la firma donde la pide la política, dan cero.
"""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg.types.json import Jsonb

from agente.servicio.auditoria.auditoria_serie import COMPROBACIONES, auditar_serie
from agente.servicio.auditoria.informe import hallazgos, informe
from caja.pasarela import PasarelaSimulada
from nucleo.contexto import ContextoCliente
from operaciones.cancelacion.herramienta import cancelar_pedido
from operaciones.reembolso.herramienta import reembolsar
from operaciones.reenvio.herramienta import reenviar
from operaciones.sustitucion.herramienta import sustituir
from operaciones.vale.herramienta import compensar_con_vale
from tests.apoyo.fabricas import conversacion, crear_pedido, uno
from tests.apoyo.rutas import RAIZ

D = Decimal
BRUNO = ContextoCliente(cliente_id="C-0002", tienda="talavera", nombre="Bruno Díaz Martín")
FERNANDO = ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando Torres Vidal")
LAURA = ContextoCliente(cliente_id="C-0011", tienda="talavera", nombre="Laura Ibáñez Pascual")
SARTEN = "P-20260920-0102"  # C-0002, una sartén MEN-001 de 24,90 EUR, entregada hace 3 días
ARANAZO = "El pedido P-20261012-0099 llegó con un arañazo, no quiero devolverlo"

INSERT_VEREDICTO_SIN_FIRMA_SQL = """
INSERT INTO evaluaciones_politica (thread_id, tool_call_id, herramienta, args, tienda, cliente_id,
                                   requiere_encargado, valores)
VALUES (%(hilo)s, %(llamada)s, %(herramienta)s, '{}', %(tienda)s, %(cliente)s, false, %(valores)s)
"""


def _sin_firma(conexion, contexto, herramienta, *llamadas, valores=None):
    """Los veredictos de conversaciones a la vez: todos «sin firma», antes de ningún efecto."""
    for llamada in llamadas:
        conexion.execute(INSERT_VEREDICTO_SIN_FIRMA_SQL, {
            "hilo": f"h-{llamada}", "llamada": llamada, "herramienta": herramienta,
            "tienda": contexto.tienda, "cliente": contexto.cliente_id,
            "valores": Jsonb(valores) if valores is not None else None})


def _encontrados(conexion, comprobacion):
    return [(h["hallazgo"], h["referencia"]) for h in auditar_serie(conexion)[comprobacion]]


def _solo(conexion, comprobaciones):
    """Nada más que ``comprobaciones`` tiene hallazgos, en toda la auditoría."""
    completo = informe(conexion, pendientes_mas_de_segundos=3600)
    otros = {**completo["libro"], **completo["politica"]}
    otros.update({c: f for c, f in completo["serie"].items() if c not in comprobaciones})
    assert completo["sin_firma"] == [] and completo["firmas"] == [], completo
    assert {c: f for c, f in otros.items() if f} == {}
    return completo


@pytest.fixture
def pasarela_simulada(pool):
    return PasarelaSimulada(pool=pool)


def test_la_demo_no_da_ningun_hallazgo_en_serie(conexion):
    encontrados = auditar_serie(conexion)
    assert set(encontrados) == set(COMPROBACIONES)
    assert encontrados == {c: [] for c in COMPROBACIONES}


def test_un_flujo_normal_con_la_firma_donde_la_pide_la_politica_da_cero(servicio, bd_url, conexion):
    _, primera = conversacion(servicio, "C-0003", ARANAZO)
    assert primera.estado == "respondida"
    # Otro vale en la ventana: el agente espera a la firma, y firmado no es hallazgo.
    hilo, segunda = conversacion(servicio, "C-0003", ARANAZO)
    assert segunda.estado == "esperando_aprobacion", segunda.mensaje_cliente
    servicio.decidir(hilo, "enc-madrid-centro", [{"type": "approve"}])
    _, devolucion = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN} porque se pega")
    assert devolucion.estado == "respondida"
    assert uno(bd_url, "SELECT count(*) FROM vales") == 2
    assert uno(bd_url, "SELECT count(*) FROM vales WHERE aprobado_por IS NULL") == 1
    completo = informe(conexion, pendientes_mas_de_segundos=3600)
    assert completo["serie"] == {c: [] for c in COMPROBACIONES}
    assert hallazgos(completo) == 0, completo


# --- 1. reglas de recuento --------------------------------------------------------------


def test_cuatro_vales_sin_firma_del_mismo_cliente_en_la_ventana_dan_tres_hallazgos(pool, bd_url, conexion):
    pedidos = [crear_pedido(bd_url, "C-0006", [("MEN-001", 1)]) for _ in range(4)]
    _sin_firma(conexion, FERNANDO, "compensar_con_vale", *[f"v{n}" for n in range(4)])
    vales = [compensar_con_vale(pool, contexto=FERNANDO, thread_id=f"h-v{n}", tool_call_id=f"v{n}", pedido=p,
                                linea=1, importe="2.49", motivo="arañazo")["vale"]
             for n, p in enumerate(pedidos)]
    assert _encontrados(conexion, "vales_en_la_ventana") == [
        ("vale_de_mas_en_la_ventana", v) for v in vales[1:]]
    assert hallazgos(_solo(conexion, {"vales_en_la_ventana"})) == 3
    # Fuera de la ventana de 90 días, el primero ya no cuenta para el segundo; uno anulado, tampoco.
    conexion.execute("UPDATE vales SET creado = now() - interval '100 days' WHERE numero = %s", (vales[0],))
    conexion.execute("UPDATE vales SET estado = 'anulado' WHERE numero = %s", (vales[3],))
    assert _encontrados(conexion, "vales_en_la_ventana") == [("vale_de_mas_en_la_ventana", vales[2])]


def test_reenvios_sin_firma_de_una_linea_ya_reenviada(pool, bd_url, conexion):
    # Tres unidades: tres reenvíos de una caben en lo pagado; solo la repetición es hallazgo.
    pedido = crear_pedido(bd_url, "C-0006", [("MEN-001", 3)])
    conexion.execute("UPDATE stock SET unidades = 10 WHERE tienda = 'talavera' AND sku = 'MEN-001'")
    _sin_firma(conexion, FERNANDO, "reenviar", "r1", "r2", "r3")
    numeros = [reenviar(pool, contexto=FERNANDO, thread_id=f"h-{ll}", tool_call_id=ll, pedido=pedido, linea=1,
                        motivo="llego_roto")["reenvio"] for ll in ("r1", "r2", "r3")]
    assert _encontrados(conexion, "reenvios_repetidos") == [
        ("reenvio_de_una_linea_ya_reenviada", n) for n in numeros[1:]]
    assert hallazgos(_solo(conexion, {"reenvios_repetidos"})) == 2


def _cuatro_devoluciones(pool, bd_url, conexion, pasarela, valores=None):
    pedidos = [crear_pedido(bd_url, "C-0006", [("MEN-001", 1)]) for _ in range(4)]
    _sin_firma(conexion, FERNANDO, "reembolsar", *[f"d{n}" for n in range(4)], valores=valores)
    return [reembolsar(pool, contexto=FERNANDO, thread_id=f"h-d{n}", tool_call_id=f"d{n}", pedido=p,
                       importe="24.90", motivo="no funciona", pasarela=pasarela)["reembolso"]
            for n, p in enumerate(pedidos)]


def test_cuatro_devoluciones_sin_firma_con_un_maximo_de_dos_dan_dos_hallazgos(
    pool, bd_url, conexion, pasarela_simulada
):
    numeros = _cuatro_devoluciones(pool, bd_url, conexion, pasarela_simulada)
    encontrados = auditar_serie(conexion)["devoluciones_de_mas"]
    assert [(h["hallazgo"], h["referencia"]) for h in encontrados] == [
        ("devoluciones_por_encima_del_maximo", n) for n in numeros[2:]]
    assert "ya tenía 2 devoluciones" in encontrados[0]["detalle"]
    assert "valores de hoy de la tienda" in encontrados[0]["detalle"]
    assert hallazgos(_solo(conexion, {"devoluciones_de_mas"})) == 2
    # Sin instantánea en el veredicto, manda el máximo de hoy de la tienda.
    conexion.execute("UPDATE politicas_tienda SET devoluciones_max_30d = 3 WHERE tienda = 'talavera'")
    assert _encontrados(conexion, "devoluciones_de_mas") == [("devoluciones_por_encima_del_maximo", numeros[3])]


def test_las_devoluciones_de_mas_se_miden_con_los_valores_de_su_veredicto(
    pool, bd_url, conexion, pasarela_simulada
):
    instantanea = {"devoluciones_max_30d": 2, "ventana_devoluciones_dias": 30}
    numeros = _cuatro_devoluciones(pool, bd_url, conexion, pasarela_simulada, valores=instantanea)
    # Subir hoy el máximo de la tienda no perdona lo que se decidió con el de entonces.
    conexion.execute("UPDATE politicas_tienda SET devoluciones_max_30d = 10 WHERE tienda = 'talavera'")
    encontrados = auditar_serie(conexion)["devoluciones_de_mas"]
    assert [h["referencia"] for h in encontrados] == numeros[2:]
    assert "valores de su veredicto" in encontrados[0]["detalle"]
    # Una devolución de hace 40 días queda fuera de la ventana de 30: no cuenta.
    conexion.execute("UPDATE devoluciones SET creada = creada - interval '40 days' "
                     "WHERE reembolso_id = (SELECT id FROM reembolsos WHERE numero = %s)", (numeros[0],))
    conexion.execute("UPDATE reembolsos SET creado = creado - interval '40 days' WHERE numero = %s", (numeros[0],))
    assert _encontrados(conexion, "devoluciones_de_mas") == [("devoluciones_por_encima_del_maximo", numeros[3])]


def test_reembolso_y_vale_sin_firma_de_la_misma_sarten(pool, conexion, pasarela_simulada):
    # 24,90 + 2,49 por una sartén de 24,90: el vale tras el reembolso pedía firma.
    _sin_firma(conexion, BRUNO, "reembolsar", "r")
    _sin_firma(conexion, BRUNO, "compensar_con_vale", "v")
    reembolso = reembolsar(pool, contexto=BRUNO, thread_id="h-r", tool_call_id="r", pedido=SARTEN,
                           importe="24.90", motivo="se pega", pasarela=pasarela_simulada)["reembolso"]
    vale = compensar_con_vale(pool, contexto=BRUNO, thread_id="h-v", tool_call_id="v", pedido=SARTEN, linea=1,
                              importe="2.49", motivo="arañazo")["vale"]
    assert _encontrados(conexion, "compensaciones_encadenadas") == [("vale_de_una_linea_ya_compensada", vale)]
    (linea,) = auditar_serie(conexion)["sobrecompensacion"]
    assert (linea["hallazgo"], linea["pedido_id"], linea["linea"]) == (
        "linea_compensada_sin_firma_por_encima_de_lo_pagado", SARTEN, 1)
    assert linea["referencia"] == ", ".join(sorted([reembolso, vale]))
    assert linea["detalle"] == "pagado 24.90, compensado sin firma 27.39"
    assert hallazgos(_solo(conexion, {"compensaciones_encadenadas", "sobrecompensacion"})) == 2


def test_vale_antes_y_reembolso_despues_sin_firma_tambien_se_ve(pool, conexion, pasarela_simulada):
    _sin_firma(conexion, BRUNO, "reembolsar", "r")
    _sin_firma(conexion, BRUNO, "compensar_con_vale", "v")
    vale = compensar_con_vale(pool, contexto=BRUNO, thread_id="h-v", tool_call_id="v", pedido=SARTEN, linea=1,
                              importe="2.49", motivo="arañazo")["vale"]
    reembolso = reembolsar(pool, contexto=BRUNO, thread_id="h-r", tool_call_id="r", pedido=SARTEN,
                           importe="24.90", motivo="se pega", pasarela=pasarela_simulada)["reembolso"]
    encontrados = auditar_serie(conexion)["compensaciones_encadenadas"]
    assert [(h["hallazgo"], h["referencia"], h["detalle"]) for h in encontrados] == [
        ("reembolso_tras_un_cambio_o_un_vale", reembolso, f"el pedido ya tenía {vale}")]
    assert len(auditar_serie(conexion)["sobrecompensacion"]) == 1


def test_cambio_y_vale_sin_firma_de_la_misma_unidad(pool, bd_url, conexion, pasarela_simulada):
    # El cambio cuenta lo pagado por la unidad (su diferencia devuelta sale de ahí).
    pedido = crear_pedido(bd_url, "C-0006", [("CAF-001", 1)])
    _sin_firma(conexion, FERNANDO, "sustituir", "s")
    _sin_firma(conexion, FERNANDO, "compensar_con_vale", "v")
    sustituir(pool, contexto=FERNANDO, thread_id="h-s", tool_call_id="s", pedido=pedido,
              sku_original="CAF-001", sku_nuevo="CAF-002", pasarela=pasarela_simulada)
    vale = compensar_con_vale(pool, contexto=FERNANDO, thread_id="h-v", tool_call_id="v", pedido=pedido, linea=1,
                              importe="5.00", motivo="arañazo")["vale"]
    assert _encontrados(conexion, "compensaciones_encadenadas") == [("vale_de_una_linea_ya_compensada", vale)]
    (linea,) = auditar_serie(conexion)["sobrecompensacion"]
    assert linea["detalle"] == "pagado 120.00, compensado sin firma 125.00"


# --- 2. una línea compensada por encima de lo pagado -------------------------------------


def test_un_vale_sin_firma_subido_por_encima_de_lo_pagado_por_su_linea(pool, conexion):
    _sin_firma(conexion, BRUNO, "compensar_con_vale", "v")
    vale = compensar_con_vale(pool, contexto=BRUNO, thread_id="h-v", tool_call_id="v", pedido=SARTEN, linea=1,
                              importe="2.49", motivo="arañazo")["vale"]
    assert auditar_serie(conexion)["sobrecompensacion"] == []
    conexion.execute("UPDATE vales SET importe = 30.00 WHERE numero = %s", (vale,))
    assert _encontrados(conexion, "sobrecompensacion") == [
        ("linea_compensada_sin_firma_por_encima_de_lo_pagado", vale)]
    assert hallazgos(_solo(conexion, {"sobrecompensacion"})) == 1


# --- 3 y 4. estados del pedido que la API de la tienda dejó imposibles --------------------


def _cancelar(pool, bd_url, conexion, pasarela):
    pedido = "P-20261009-0420"
    importe = uno(bd_url, "SELECT importe FROM pedidos WHERE id = %(p)s", {"p": pedido})
    _sin_firma(conexion, LAURA, "cancelar_pedido", "c")
    return pedido, cancelar_pedido(pool, contexto=LAURA, thread_id="h-c", tool_call_id="c", pedido=pedido,
                                   importe=importe, motivo="ya no lo quiero", pasarela=pasarela)["cancelacion"]


def test_un_pedido_cancelado_al_que_la_tienda_le_pone_fecha_de_envio(pool, bd_url, conexion, pasarela_simulada):
    pedido, cancelacion = _cancelar(pool, bd_url, conexion, pasarela_simulada)
    assert hallazgos(_solo(conexion, set())) == 0
    conexion.execute("UPDATE pedidos SET enviado_en = now() WHERE id = %s", (pedido,))
    assert _encontrados(conexion, "cancelado_y_enviado") == [("pedido_cancelado_y_enviado", cancelacion)]
    assert hallazgos(_solo(conexion, {"cancelado_y_enviado"})) == 1


def test_un_pedido_cancelado_que_la_tienda_pasa_a_enviado(pool, bd_url, conexion, pasarela_simulada):
    pedido, cancelacion = _cancelar(pool, bd_url, conexion, pasarela_simulada)
    conexion.execute("UPDATE pedidos SET estado = 'enviado' WHERE id = %s", (pedido,))
    assert _encontrados(conexion, "cancelado_y_enviado") == [("pedido_cancelado_y_enviado", cancelacion)]


def test_un_pedido_enviado_que_la_tienda_pasa_a_cancelado_sin_cancelacion(conexion):
    # P-20260925-0150 salió hace días (enviado_en de la demo); la tienda lo marca cancelado.
    conexion.execute("UPDATE pedidos SET estado = 'cancelado' WHERE id = 'P-20260925-0150'")
    (fila,) = auditar_serie(conexion)["cancelado_y_enviado"]
    assert (fila["hallazgo"], fila["referencia"], fila["pedido_id"]) == (
        "pedido_cancelado_y_enviado", None, "P-20260925-0150")
    assert "enviado el" in fila["detalle"]


@pytest.mark.parametrize("estado", ["enviado", "pendiente"])
def test_un_pedido_reembolsado_que_la_tienda_devuelve_a(estado, pool, conexion, pasarela_simulada):
    _sin_firma(conexion, BRUNO, "reembolsar", "r")
    reembolso = reembolsar(pool, contexto=BRUNO, thread_id="h-r", tool_call_id="r", pedido=SARTEN,
                           importe="24.90", motivo="se pega", pasarela=pasarela_simulada)["reembolso"]
    assert hallazgos(_solo(conexion, set())) == 0
    conexion.execute("UPDATE pedidos SET estado = %s, entregado_en = NULL WHERE id = %s", (estado, SARTEN))
    assert _encontrados(conexion, "reembolsado_y_reabierto") == [(f"pedido_reembolsado_vuelto_a_{estado}", reembolso)]
    assert hallazgos(_solo(conexion, {"reembolsado_y_reabierto"})) == 1


# --- la CLI y /metrics ------------------------------------------------------------------


def test_la_cli_sale_con_1_y_metrics_cuenta_cada_comprobacion_en_serie(pool, bd_url, conexion, servicio):
    from agente.web.infra.metricas import exponer

    def metricas() -> dict[str, float]:
        return {m.labels["comprobacion"]: m.value
                for familia in text_string_to_metric_families(exponer(servicio).decode())
                for m in familia.samples if m.name == "agente_auditoria_hallazgos"}

    assert all(metricas()[c] == 0 for c in COMPROBACIONES)
    pedidos = [crear_pedido(bd_url, "C-0006", [("MEN-001", 1)]) for _ in range(2)]
    _sin_firma(conexion, FERNANDO, "compensar_con_vale", "v0", "v1")
    for n, pedido in enumerate(pedidos):
        compensar_con_vale(pool, contexto=FERNANDO, thread_id=f"h-v{n}", tool_call_id=f"v{n}", pedido=pedido,
                           linea=1, importe="2.49", motivo="arañazo")
    conexion.execute("UPDATE pedidos SET estado = 'cancelado' WHERE id = 'P-20260925-0150'")
    valores = metricas()
    assert valores["vales_en_la_ventana"] == 1 and valores["cancelado_y_enviado"] == 1
    assert sum(valores[c] for c in COMPROBACIONES) == 2

    salida = subprocess.run([sys.executable, "-m", "agente.cli", "auditoria"], cwd=RAIZ,
                            env={**os.environ, "DATABASE_URL": bd_url}, capture_output=True, text=True, timeout=120)
    assert salida.returncode == 1, salida.stdout + salida.stderr
    assert "En serie, vales sin firma de un cliente que ya tenía otro en 90 días: 1" in salida.stdout
    assert "En serie, pedidos cancelados y a la vez enviados o entregados: 1" in salida.stdout
    assert "En serie, reenvíos sin firma de una línea ya reenviada: 0" in salida.stdout
