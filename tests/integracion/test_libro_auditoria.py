"""La auditoría del libro: limpia tras una mezcla de operaciones, y cada manipulación la delata.

Cada prueba toca las tablas por fuera de las herramientas (como una base restaurada de
otro sitio o un arreglo a mano) y comprueba que su comprobación lo ve. Donde una
restricción de la base impide la manipulación, la prueba enseña primero la restricción
rechazándola y después la salta dentro de su transacción (quitando la restricción o el
disparador, como dueño de la tabla y sin superusuario) para ver que la auditoría sigue mirando.
"""

from __future__ import annotations

from decimal import Decimal

import psycopg
import pytest

from agente.servicio.auditoria.auditoria_libro import COMPROBACIONES, auditar_libro, total_hallazgos
from caja.pasarela import PasarelaSimulada
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorPasarela
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.fabricas import PasarelaAveriable, crear_pedido

D = Decimal
ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
FERNANDO = ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando")


@pytest.fixture
def mezcla(pool, bd_url):
    """Reembolsos (completo, parcial por unidades), cambios más barato, igual y más caro."""
    pasarela = PasarelaSimulada(pool=pool)
    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 3), ("MEN-001", 2)])

    def devolver(llamada, importe, lineas=None, contexto=ANA, pedido_=pedido):
        return reembolsar(pool, contexto=contexto, thread_id="h", tool_call_id=llamada,
                          pedido=pedido_, importe=importe, motivo="x", lineas=lineas,
                          pasarela=pasarela)

    def cambiar(llamada, nuevo):
        return sustituir(pool, contexto=ANA, thread_id="h", tool_call_id=llamada, pedido=pedido,
                         sku_original="CAF-001", sku_nuevo=nuevo, pasarela=pasarela)

    hechos = {
        "barato": cambiar("s-barato", "CAF-002"),
        "caro": cambiar("s-caro", "CAF-004"),
        "igual": cambiar("s-igual", "CAF-003"),
        "parcial": devolver("r-parcial", "10.00", [{"linea": 2, "unidades": 1}]),
        "completo": devolver("r-completo", "120.00", contexto=ANA, pedido_="P-20260917-0041"),
        "dos_lineas": devolver("r-fernando", "31.90", contexto=FERNANDO, pedido_="P-20260911-0022"),
    }
    return {"pedido": pedido, **hechos}


def hallazgos(conexion, comprobacion, **kwargs):
    return [(h["hallazgo"], h["referencia"]) for h in auditar_libro(conexion, **kwargs)[comprobacion]]


def test_una_mezcla_de_operaciones_no_da_ningun_hallazgo(mezcla, conexion):
    informe = auditar_libro(conexion, pendientes_mas_de_segundos=0)
    assert set(informe) == set(COMPROBACIONES)
    assert total_hallazgos(informe) == 0, informe
    # Y hay algo que auditar: un cobro, tres devoluciones y un reembolso de diferencia.
    filas = conexion.execute("SELECT tipo, concepto, count(*) AS n FROM libro_movimientos "
                             "GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    assert [(f["tipo"], f["concepto"], f["n"]) for f in filas] == [
        ("cobro", "diferencia", 1), ("reembolso", "devolucion", 3), ("reembolso", "diferencia", 1)]


# --- unidades ---------------------------------------------------------------------------


def test_una_unidad_compensada_dos_veces(mezcla, conexion):
    duplicar = """INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, importe)
                  SELECT pedido_id, linea, unidad, reembolso_id, 1.00 FROM compensaciones_unidad
                  WHERE reembolso_id = (SELECT id FROM reembolsos WHERE numero = %s)"""
    with pytest.raises(psycopg.errors.UniqueViolation):
        conexion.execute(duplicar, (mezcla["completo"]["reembolso"],))
    with conexion.transaction(force_rollback=True):
        conexion.execute("ALTER TABLE compensaciones_unidad DROP CONSTRAINT compensaciones_unidad_pkey")
        conexion.execute(duplicar, (mezcla["completo"]["reembolso"],))
        encontrados = hallazgos(conexion, "unidades")
    assert ("unidad_compensada_dos_veces", None) in encontrados
    assert ("linea_por_encima_de_lo_pagado", None) in encontrados


def test_una_compensacion_por_encima_del_precio_de_la_unidad(mezcla, conexion):
    subir = "UPDATE compensaciones_unidad SET importe = importe + 1 WHERE reembolso_id = " \
            "(SELECT id FROM reembolsos WHERE numero = %s)"
    with pytest.raises(psycopg.errors.CheckViolation, match="que costó 120.00"):
        conexion.execute(subir, (mezcla["completo"]["reembolso"],))
    with conexion.transaction(force_rollback=True):
        # Como dueño de la tabla (sin superusuario, como en producción): se quita el disparador.
        conexion.execute("ALTER TABLE compensaciones_unidad DISABLE TRIGGER compensaciones_unidad_comprobar")
        conexion.execute(subir, (mezcla["completo"]["reembolso"],))
        encontrados = hallazgos(conexion, "unidades")
    numero = mezcla["completo"]["reembolso"]
    assert ("unidad_por_encima_de_su_precio", numero) in encontrados
    assert ("reembolso_sin_sus_unidades", numero) in encontrados


def test_un_precio_de_linea_rebajado_deja_lo_compensado_por_encima_de_lo_pagado(mezcla, conexion):
    conexion.execute("UPDATE lineas_pedido SET precio_unitario = 50 WHERE pedido_id = 'P-20260917-0041'")
    encontrados = hallazgos(conexion, "unidades")
    assert ("unidad_por_encima_de_su_precio", mezcla["completo"]["reembolso"]) in encontrados
    assert ("linea_por_encima_de_lo_pagado", None) in encontrados


def test_un_reembolso_apuntado_por_fuera_sin_unidades(mezcla, conexion):
    conexion.execute("""
        INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                                tienda, importe, estado)
        VALUES ('manual:1', 'manual', '1', 'P-20260915-0026', 'C-0008', 'madrid-centro', 5, 'emitido')""")
    numero = conexion.execute("SELECT numero FROM reembolsos WHERE clave_idempotencia = 'manual:1'").fetchone()["numero"]
    assert ("reembolso_sin_sus_unidades", numero) in hallazgos(conexion, "unidades")
    assert ("asiento_completado_sin_movimiento", numero) in hallazgos(conexion, "pasarela")


def test_un_cambio_sin_su_unidad(mezcla, conexion):
    conexion.execute("DELETE FROM compensaciones_unidad WHERE sustitucion_id = "
                     "(SELECT id FROM sustituciones WHERE numero = %s)", (mezcla["igual"]["sustitucion"],))
    assert hallazgos(conexion, "unidades") == [("cambio_sin_su_unidad", mezcla["igual"]["sustitucion"])]


# --- pasarela ---------------------------------------------------------------------------


def test_un_movimiento_sin_asiento(mezcla, conexion):
    conexion.execute("INSERT INTO pasarela_movimientos (referencia, importe) VALUES ('RE-999999', 5)")
    assert hallazgos(conexion, "pasarela") == [("movimiento_sin_asiento", "RE-999999")]


def test_un_reembolso_emitido_sin_movimiento(mezcla, conexion):
    numero = mezcla["completo"]["reembolso"]
    conexion.execute("DELETE FROM pasarela_movimientos WHERE referencia = %s", (numero,))
    assert hallazgos(conexion, "pasarela") == [("asiento_completado_sin_movimiento", numero)]


def test_un_importe_o_un_tipo_cambiado_en_la_pasarela(mezcla, conexion):
    reembolso, cobro = mezcla["completo"]["reembolso"], mezcla["caro"]["liquidacion"]["numero"]
    conexion.execute("UPDATE pasarela_movimientos SET importe = importe + 0.01 WHERE referencia = %s", (reembolso,))
    conexion.execute("UPDATE pasarela_movimientos SET tipo = 'reembolso' WHERE referencia = %s", (cobro,))
    assert sorted(hallazgos(conexion, "pasarela")) == sorted(
        [("importe_distinto", reembolso), ("tipo_distinto", cobro)])


def test_un_importe_cambiado_en_el_libro(mezcla, conexion):
    numero = mezcla["dos_lineas"]["reembolso"]
    with conexion.transaction(force_rollback=True):
        conexion.execute("UPDATE reembolsos SET importe = 30.00 WHERE numero = %s", (numero,))
        assert ("importe_distinto", numero) in hallazgos(conexion, "pasarela")
        assert ("reembolso_sin_sus_unidades", numero) in hallazgos(conexion, "unidades")


# --- pendientes y marcados --------------------------------------------------------------


def test_pendiente_mas_tiempo_del_umbral_y_marcado_para_una_persona(pool, bd_url, conexion):
    averiable = PasarelaAveriable(PasarelaSimulada(pool=pool))
    averiable.caida = True
    with pytest.raises(ErrorPasarela):
        reembolsar(pool, contexto=ANA, thread_id="h", tool_call_id="r", pedido="P-20260917-0041",
                   importe="120.00", motivo="x", pasarela=averiable)
    assert hallazgos(conexion, "pendientes") == []  # recién apuntado: dentro del umbral
    conexion.execute("UPDATE reembolsos SET creado = now() - interval '2 hours'")
    assert hallazgos(conexion, "pendientes") == [("pendiente_demasiado_tiempo", "RE-000001")]
    assert hallazgos(conexion, "pendientes", pendientes_mas_de_segundos=3 * 3600) == []
    assert hallazgos(conexion, "marcados") == []
    conexion.execute("UPDATE reembolsos SET requiere_persona = true, marcado_en = now()")
    assert hallazgos(conexion, "marcados") == [("marcado_para_una_persona", "RE-000001")]


# --- diferencias ------------------------------------------------------------------------


def test_cambio_mas_barato_sin_su_reembolso(mezcla, conexion):
    cambio = mezcla["barato"]
    numero = cambio["liquidacion"]["numero"]
    with conexion.transaction(force_rollback=True):
        conexion.execute("DELETE FROM reembolsos WHERE numero = %s", (numero,))
        assert hallazgos(conexion, "diferencias") == [
            ("diferencia_a_favor_sin_reembolso", cambio["sustitucion"])]
        assert hallazgos(conexion, "pasarela") == [("movimiento_sin_asiento", numero)]


def test_reembolso_de_la_diferencia_con_otro_importe(mezcla, conexion):
    cambio = mezcla["barato"]
    conexion.execute("UPDATE reembolsos SET importe = 50 WHERE numero = %s", (cambio["liquidacion"]["numero"],))
    assert hallazgos(conexion, "diferencias") == [
        ("reembolso_de_la_diferencia_con_otro_importe", cambio["sustitucion"])]


def test_cambio_mas_caro_hecho_sin_cobro_confirmado(mezcla, conexion):
    cambio = mezcla["caro"]
    conexion.execute("UPDATE cobros SET estado = 'pendiente', confirmado_en = NULL")
    assert hallazgos(conexion, "diferencias") == [
        ("cambio_hecho_sin_cobro_confirmado", cambio["sustitucion"])]


def test_cambio_con_diferencia_marcado_como_sin_liquidacion(mezcla, conexion):
    cambio = mezcla["barato"]
    conexion.execute("UPDATE sustituciones SET liquidacion = 'ninguna' WHERE numero = %s", (cambio["sustitucion"],))
    assert hallazgos(conexion, "diferencias") == [("diferencia_sin_liquidar", cambio["sustitucion"])]


def test_cambio_anulado_sin_devolver_el_cobro(mezcla, conexion):
    cambio = mezcla["caro"]
    conexion.execute("UPDATE sustituciones SET estado = 'anulada' WHERE numero = %s", (cambio["sustitucion"],))
    assert ("cambio_anulado_sin_devolver_el_cobro", cambio["sustitucion"]) in hallazgos(conexion, "diferencias")
