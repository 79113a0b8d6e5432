"""La diferencia de un cambio se liquida por la pasarela, exactamente una vez.

Más barato: un reembolso ligado al cambio (clave ``<clave del cambio>:diferencia``) y un
movimiento 'reembolso'. Más caro: un cobro y un movimiento 'cobro'; el cambio solo
queda hecho, y el stock movido, cuando la pasarela confirma el cobro. Mismo precio o
diferencia perdonada por la tienda: ningún movimiento.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from agente.servicio.auditoria.auditoria_libro import auditar_libro, total_hallazgos
from caja.movimientos import completar_pendientes
from caja.pasarela import PasarelaSimulada
from herramientas import REGISTRO, crear_herramientas
from herramientas.avisos import avisos_pendientes
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio, ErrorPasarela, ImporteNoValido
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.fabricas import PasarelaAveriable, consultar, uno

D = Decimal
ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
CAFETERA = "P-20260917-0041"  # una CAF-001 pagada a 120,00


@pytest.fixture
def averiable(pool):
    return PasarelaAveriable(PasarelaSimulada(pool=pool))


def cambiar(pool, pasarela, nuevo, *, llamada="s1", hilo="hilo-cambio"):
    return sustituir(pool, contexto=ANA, thread_id=hilo, tool_call_id=llamada, pedido=CAFETERA,
                     sku_original="CAF-001", sku_nuevo=nuevo, pasarela=pasarela)


def movimientos(bd_url):
    return [(f["referencia"], f["tipo"], f["importe"]) for f in
            consultar(bd_url, "SELECT * FROM pasarela_movimientos ORDER BY id")]


def stock(bd_url, sku):
    return uno(bd_url, "SELECT unidades FROM stock WHERE tienda = 'talavera' AND sku = %(s)s", {"s": sku})


def sin_hallazgos(conexion):
    informe = auditar_libro(conexion, pendientes_mas_de_segundos=0)
    assert total_hallazgos(informe) == 0, informe


def test_cambio_mas_barato_devuelve_la_diferencia_una_vez(pool, bd_url, averiable, conexion):
    resultado = cambiar(pool, averiable, "CAF-002")
    assert (resultado["diferencia"], resultado["estado"]) == ("-90.10", "hecha")
    assert resultado["liquidacion"] == {"tipo": "reembolso", "numero": "RE-000001",
                                        "importe": "90.10", "estado": "completado"}
    fila = consultar(bd_url, "SELECT * FROM reembolsos")[0]
    assert (fila["concepto"], fila["clave_idempotencia"], fila["estado"], fila["importe"]) == (
        "diferencia", "hilo-cambio:s1:diferencia", "emitido", D("90.10"))
    assert uno(bd_url, "SELECT count(*) FROM devoluciones") == 3  # solo las de la demo
    assert movimientos(bd_url) == [("RE-000001", "reembolso", D("90.10"))]
    assert (stock(bd_url, "CAF-001"), stock(bd_url, "CAF-002")) == (9, 7)
    # Repetir la llamada no mueve nada más.
    assert cambiar(pool, averiable, "CAF-002") == {**resultado, "repetido": True}
    assert len(movimientos(bd_url)) == 1 and stock(bd_url, "CAF-002") == 7
    sin_hallazgos(conexion)


def test_cambio_mas_caro_cobra_la_diferencia_y_solo_entonces_mueve_el_stock(pool, bd_url, averiable, conexion):
    resultado = cambiar(pool, averiable, "CAF-004")
    assert (resultado["diferencia"], resultado["estado"]) == ("129.00", "hecha")
    assert resultado["liquidacion"] == {"tipo": "cobro", "numero": "CO-000001",
                                        "importe": "129.00", "estado": "completado"}
    cobro = consultar(bd_url, "SELECT * FROM cobros")[0]
    assert (cobro["clave_idempotencia"], cobro["estado"]) == ("hilo-cambio:s1:diferencia", "confirmado")
    assert movimientos(bd_url) == [("CO-000001", "cobro", D("129.00"))]
    assert (stock(bd_url, "CAF-001"), stock(bd_url, "CAF-004")) == (9, 1)
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    sin_hallazgos(conexion)


def test_cobro_fallido_no_mueve_el_stock_lo_dice_y_el_sistema_lo_completa(pool, bd_url, averiable, conexion):
    averiable.caida = True
    with pytest.raises(ErrorPasarela) as error:
        cambiar(pool, averiable, "CAF-004")
    texto = error.value.mensaje
    assert "no ha podido cobrar todavía la diferencia de 129,00 EUR del cambio SU-000001" in texto
    assert "no se ha cambiado ningún producto" in texto and "le avisaremos por aquí" in texto
    assert error.value.datos["estado"] == "pendiente_cobro"
    assert (stock(bd_url, "CAF-001"), stock(bd_url, "CAF-004")) == (8, 2)
    assert uno(bd_url, "SELECT estado FROM sustituciones") == "pendiente_cobro"
    assert movimientos(bd_url) == []
    # La unidad ya está ocupada por el cambio pendiente: no se puede reembolsar a la vez.
    with pytest.raises(ImporteNoValido):
        reembolsar(pool, contexto=ANA, thread_id="otro", tool_call_id="r", pedido=CAFETERA,
                   importe="120.00", motivo="x", pasarela=averiable)
    informe = auditar_libro(conexion, pendientes_mas_de_segundos=0)
    assert [h["referencia"] for h in informe["pendientes"]] == ["CO-000001"]
    assert total_hallazgos(informe) == 1

    averiable.caida = False
    resultado = completar_pendientes(pool, averiable, solo_vencidos=False)
    assert [(c.movimiento.referencia, c.estado_sustitucion) for c in resultado.completados] == [
        ("CO-000001", "hecha")]
    assert (stock(bd_url, "CAF-001"), stock(bd_url, "CAF-004")) == (9, 1)
    assert movimientos(bd_url) == [("CO-000001", "cobro", D("129.00"))]
    [aviso] = avisos_pendientes(pool)
    assert aviso.thread_id == "hilo-cambio"
    assert aviso.texto == ("Ya está hecho el cambio SU-000001 del pedido P-20260917-0041: hemos "
                           "cobrado la diferencia de 129,00 EUR (cobro CO-000001).")
    # El reintento de la misma llamada ve el cambio hecho y no cobra otra vez.
    assert cambiar(pool, averiable, "CAF-004")["estado"] == "hecha"
    assert len(movimientos(bd_url)) == 1
    sin_hallazgos(conexion)


def test_sin_stock_al_confirmar_el_cobro_el_cambio_se_anula_y_el_cobro_se_devuelve(
        pool, bd_url, averiable, conexion):
    averiable.caida = True
    with pytest.raises(ErrorPasarela):
        cambiar(pool, averiable, "CAF-004")
    conexion.execute("UPDATE stock SET unidades = 0 WHERE tienda = 'talavera' AND sku = 'CAF-004'")
    averiable.caida = False
    resultado = completar_pendientes(pool, averiable, solo_vencidos=False)
    assert [(c.movimiento.referencia, c.estado_sustitucion) for c in resultado.completados] == [
        ("CO-000001", "anulada"), ("RE-000001", None)]
    assert movimientos(bd_url) == [("CO-000001", "cobro", D("129.00")),
                                   ("RE-000001", "reembolso", D("129.00"))]
    assert (stock(bd_url, "CAF-001"), stock(bd_url, "CAF-004")) == (8, 0)
    anulacion = consultar(bd_url, "SELECT * FROM reembolsos")[0]
    assert (anulacion["concepto"], anulacion["clave_idempotencia"]) == ("anulacion", "hilo-cambio:s1:anulacion")
    # La unidad vuelve a estar libre: se puede reembolsar.
    assert uno(bd_url, "SELECT count(*) FROM compensaciones_unidad") == 0
    textos = [a.texto for a in avisos_pendientes(pool)]
    assert textos[0].startswith("Hemos cobrado la diferencia de 129,00 EUR del cambio SU-000001")
    assert "te devolvemos ese importe (reembolso RE-000001)" in textos[0]
    assert textos[1].startswith("Ya te hemos devuelto los 129,00 EUR que te cobramos")
    repetido = cambiar(pool, averiable, "CAF-004")
    assert repetido["estado"] == "anulada" and "queda anulado" in repetido["aviso"]
    sin_hallazgos(conexion)


def test_devolucion_de_la_diferencia_pendiente_no_deshace_el_cambio_y_se_completa(
        pool, bd_url, averiable, conexion):
    averiable.caida = True
    resultado = cambiar(pool, averiable, "CAF-002")
    assert resultado["estado"] == "hecha" and resultado["liquidacion"]["estado"] == "pendiente"
    assert "queda pendiente" in resultado["aviso"] and "por aquí" in resultado["aviso"]
    assert stock(bd_url, "CAF-002") == 7 and movimientos(bd_url) == []
    averiable.caida = False
    completar_pendientes(pool, averiable, solo_vencidos=False)
    assert movimientos(bd_url) == [("RE-000001", "reembolso", D("90.10"))]
    [aviso] = avisos_pendientes(pool)
    assert aviso.texto.startswith("Ya te hemos devuelto la diferencia de 90,10 EUR del cambio SU-000001")
    sin_hallazgos(conexion)


def test_mismo_precio_sin_movimiento(pool, bd_url, averiable, conexion):
    resultado = cambiar(pool, averiable, "CAF-003")
    assert resultado["liquidacion"] == {"tipo": "ninguna"} and movimientos(bd_url) == []
    sin_hallazgos(conexion)


def test_la_tienda_perdona_diferencias_por_debajo_de_su_minimo(pool, bd_url, averiable, conexion):
    assert uno(bd_url, "SELECT diferencia_minima_liquidable FROM politicas_tienda "
                       "WHERE tienda = 'talavera'") == D("0.00")  # por defecto: siempre se liquida
    conexion.execute("UPDATE politicas_tienda SET diferencia_minima_liquidable = 100 WHERE tienda = 'talavera'")
    resultado = cambiar(pool, averiable, "CAF-002")  # 90,10 < 100: perdonada
    assert resultado["liquidacion"] == {"tipo": "renunciada"} and resultado["estado"] == "hecha"
    assert movimientos(bd_url) == []
    sin_hallazgos(conexion)


def test_la_diferencia_es_sobre_lo_pagado_no_sobre_el_pvp_de_hoy(pool, bd_url, averiable, conexion):
    # El pvp de la cafetera sube a 200 después de la compra: la diferencia con CAF-002 sigue
    # siendo 29,90 - 120,00 (lo pagado), y lo devuelto nunca supera lo pagado.
    conexion.execute("UPDATE precios_tienda SET pvp = 200 WHERE sku = 'CAF-001'")
    resultado = cambiar(pool, averiable, "CAF-002")
    assert resultado["diferencia"] == "-90.10"
    sin_hallazgos(conexion)


def test_la_pasarela_cobra_y_deduplica_por_referencia_y_tipo(pool):
    pasarela = PasarelaSimulada(pool=pool)
    primero = pasarela.cobrar("CO-000042", D("10.00"))
    segundo = pasarela.cobrar("CO-000042", D("10.00"))
    assert (primero.nuevo, segundo.nuevo, primero.tipo) == (True, False, "cobro")
    with pytest.raises(ErrorPasarela, match="otro importe o en otra operación"):
        pasarela.emitir_reembolso("CO-000042", D("10.00"))
    with pytest.raises(ErrorPasarela, match="otro importe"):
        pasarela.cobrar("CO-000042", D("11.00"))


def test_las_descripciones_que_lee_el_modelo_cuentan_la_liquidacion(pool):
    herramientas = {h.name: h for h in crear_herramientas(pool=pool, pasarela=PasarelaSimulada(pool=pool))}
    cambio = herramientas[REGISTRO["sustituir"].nombre].description
    assert "no cobra ni devuelve la diferencia" not in cambio
    for trozo in ("le devuelve la diferencia", "se la cobra", "aún no entregado", "pendiente",
                  "le avisaremos por aquí", "ya reembolsada o cambiada"):
        assert trozo in cambio, trozo
    reembolso = herramientas["reembolsar"].description
    for trozo in ("una sola vez", "queda pendiente", "le avisaremos por aquí", "nunca que ya está hecho"):
        assert trozo in reembolso, trozo
    esquema = herramientas["reembolsar"].tool_call_schema.model_json_schema()
    assert "unidades" in str(esquema) and "orden de línea y de unidad" in str(esquema)


def test_un_cambio_rechazado_por_la_unidad_no_deja_nada(pool, bd_url, averiable):
    cambiar(pool, averiable, "CAF-003")
    with pytest.raises(ErrorDominio, match="una sola vez"):
        cambiar(pool, averiable, "CAF-002", llamada="s2")
    assert uno(bd_url, "SELECT count(*) FROM sustituciones") == 1 and movimientos(bd_url) == []


def test_el_minimo_liquidable_por_defecto_es_el_mismo_en_la_base_la_politica_y_el_cambio(conexion):
    # herramientas/ no importa politicas/: tres copias del mismo defecto que no deben separarse.
    from herramientas.politica_fijada import MINIMO_POR_DEFECTO
    from politicas.defectos import DEFECTOS

    fila = conexion.execute(
        "SELECT column_default FROM information_schema.columns "
        "WHERE table_name = 'politicas_tienda' AND column_name = 'diferencia_minima_liquidable'"
    ).fetchone()
    en_base = Decimal(fila["column_default"].split("::")[0].strip("'"))
    assert en_base == MINIMO_POR_DEFECTO == Decimal(str(DEFECTOS["diferencia_minima_liquidable"]))
