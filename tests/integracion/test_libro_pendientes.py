"""La cola de movimientos: lo pendiente lo completa el sistema, con reintentos y marca para una persona.

El texto que recibe el modelo cuando la pasarela falla es verdad («queda pendiente; le
avisaremos por aquí»); la bandeja reintenta con espera exponencial, marca para una
persona tras N fallos, y cuando completa deja un aviso para el chat del cliente.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest

from agente.servicio.auditoria.auditoria_libro import auditar_libro, total_hallazgos
from caja.movimientos import completar_pendientes
from caja.pasarela import PasarelaSimulada
from herramientas.avisos import avisos_pendientes, marcar_avisado
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorPasarela
from operaciones.reembolso.herramienta import reembolsar
from tests.apoyo.fabricas import PasarelaAveriable, consultar, uno

D = Decimal
ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
CAFETERA = "P-20260917-0041"


@pytest.fixture
def averiable(pool):
    return PasarelaAveriable(PasarelaSimulada(pool=pool))


def devolver(pool, pasarela, *, llamada="r1", importe="120.00"):
    return reembolsar(pool, contexto=ANA, thread_id="hilo-ana", tool_call_id=llamada,
                      pedido=CAFETERA, importe=importe, motivo="no funciona", pasarela=pasarela)


def fila(bd_url):
    return consultar(bd_url, """SELECT *, extract(epoch FROM proximo_intento - now()) AS falta
                                FROM reembolsos WHERE numero = 'RE-000001'""")[0]


def vencer(conexion):
    """El tiempo pasa: todo lo pendiente vence ya."""
    conexion.execute("UPDATE reembolsos SET proximo_intento = now() WHERE estado = 'pendiente'")
    conexion.execute("UPDATE cobros SET proximo_intento = now() WHERE estado = 'pendiente'")


def test_pasarela_caida_el_modelo_oye_la_verdad_y_nada_se_emite(pool, bd_url, averiable):
    averiable.caida = True
    with pytest.raises(ErrorPasarela) as error:
        devolver(pool, averiable)
    texto = error.value.mensaje
    assert "no ha confirmado todavía el reembolso RE-000001 de 120,00 EUR" in texto
    assert "queda pendiente" in texto and "le avisaremos por aquí" in texto
    assert "emitido" not in texto
    assert error.value.datos == {"reembolso": "RE-000001", "estado": "pendiente"}
    f = fila(bd_url)
    assert (f["estado"], f["intentos"], f["requiere_persona"]) == ("pendiente", 1, False)
    assert "no está disponible" in f["ultimo_error"]
    assert 20 < f["falta"] <= 30  # primer reintento a los 30 s


def test_la_bandeja_respeta_la_espera_y_la_duplica_en_cada_fallo(pool, bd_url, averiable, conexion):
    averiable.caida = True
    with pytest.raises(ErrorPasarela):
        devolver(pool, averiable)
    # Aún no vence: la pasada no lo toca.
    resultado = completar_pendientes(pool, averiable)
    assert (resultado.completados, resultado.fallidos) == ([], [])
    assert fila(bd_url)["intentos"] == 1
    vencer(conexion)
    resultado = completar_pendientes(pool, averiable)
    assert [f.movimiento.referencia for f in resultado.fallidos] == ["RE-000001"]
    f = fila(bd_url)
    assert f["intentos"] == 2 and 50 < f["falta"] <= 60  # 30 s * 2
    vencer(conexion)
    completar_pendientes(pool, averiable)
    assert 110 < fila(bd_url)["falta"] <= 120  # 30 s * 4


def test_tras_n_fallos_queda_marcado_para_una_persona_y_la_auditoria_lo_ve(
        pool, bd_url, averiable, conexion):
    averiable.caida = True
    with pytest.raises(ErrorPasarela):
        devolver(pool, averiable)
    marcados = []
    for _ in range(3):
        vencer(conexion)
        marcados += completar_pendientes(pool, averiable, max_intentos=3).marcados
    assert [m.movimiento.referencia for m in marcados] == ["RE-000001"]  # se marca una vez
    f = fila(bd_url)
    assert (f["intentos"], f["requiere_persona"], f["marcado_en"] is not None) == (4, True, True)
    informe = auditar_libro(conexion)
    assert [h["referencia"] for h in informe["marcados"]] == ["RE-000001"]
    assert "4 intentos" in informe["marcados"][0]["detalle"]
    # Sigue reintentándose: cuando la pasarela vuelve, se completa y deja de ser un hallazgo.
    averiable.caida = False
    vencer(conexion)
    assert [c.movimiento.referencia for c in completar_pendientes(pool, averiable).completados] == ["RE-000001"]
    assert total_hallazgos(auditar_libro(conexion, pendientes_mas_de_segundos=0)) == 0


def test_lo_que_completa_el_sistema_deja_un_aviso_para_el_chat_del_cliente(pool, bd_url, averiable):
    averiable.caida = True
    with pytest.raises(ErrorPasarela):
        devolver(pool, averiable)
    assert avisos_pendientes(pool) == []  # nada completado aún
    averiable.caida = False
    completar_pendientes(pool, averiable, solo_vencidos=False)
    [aviso] = avisos_pendientes(pool)
    assert (aviso.thread_id, aviso.referencia) == ("hilo-ana", "RE-000001")
    assert aviso.texto == ("Ya está hecho el reembolso RE-000001 de 120,00 EUR del pedido "
                           "P-20260917-0041: lo verás en tu medio de pago original en unos días.")
    marcar_avisado(pool, aviso)
    assert avisos_pendientes(pool) == []
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1


def test_lo_que_completa_la_herramienta_en_el_turno_no_necesita_aviso(pool, averiable):
    devolver(pool, averiable)
    assert avisos_pendientes(pool) == []


def test_recien_apuntado_no_vence_hasta_acabar_la_reserva(pool, bd_url, conexion):
    # Caída entre el paso 1 (pendiente confirmado) y la pasarela: la fila espera su reserva,
    # porque la llamada que la apuntó puede estar aún en la pasarela.
    conexion.execute("""
        INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                                tienda, importe, proximo_intento)
        VALUES ('h:c', 'h', 'c', 'P-20260919-0055', 'C-0001', 'talavera', 14.90,
                now() + interval '120 seconds')""")
    conexion.execute("""INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, importe)
                        SELECT 'P-20260919-0055', 1, 1, id, 14.90 FROM reembolsos""")
    pasarela = PasarelaSimulada(pool=pool)
    assert completar_pendientes(pool, pasarela).completados == []
    vencer(conexion)
    assert len(completar_pendientes(pool, pasarela).completados) == 1
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"


def test_caida_tras_la_pasarela_y_antes_de_marcar_no_paga_dos_veces(pool, bd_url, conexion):
    class MuereTrasPagar(BaseException):
        """Como un SIGKILL: no la captura nadie en el código de la herramienta."""

    class PasarelaQueMuere(PasarelaSimulada):
        def emitir_reembolso(self, referencia, importe):
            super().emitir_reembolso(referencia, importe)
            raise MuereTrasPagar

    with pytest.raises(MuereTrasPagar):
        devolver(pool, PasarelaQueMuere(pool=pool))
    assert (uno(bd_url, "SELECT estado FROM reembolsos"),
            uno(bd_url, "SELECT count(*) FROM pasarela_movimientos")) == ("pendiente", 1)
    # La auditoría no lo da por roto: es un pendiente con movimiento, no un descuadre.
    informe = auditar_libro(conexion, pendientes_mas_de_segundos=0)
    assert [k for k, v in informe.items() if v] == ["pendientes"]
    completar_pendientes(pool, PasarelaSimulada(pool=pool), solo_vencidos=False)
    assert (uno(bd_url, "SELECT estado FROM reembolsos"),
            uno(bd_url, "SELECT count(*) FROM pasarela_movimientos")) == ("emitido", 1)
    assert total_hallazgos(auditar_libro(conexion, pendientes_mas_de_segundos=0)) == 0


def test_dos_pasadas_a_la_vez_completan_cada_movimiento_una_vez(pool, bd_url, averiable):
    averiable.caida = True
    for n in range(4):
        with pytest.raises(ErrorPasarela):
            reembolsar(pool, contexto=ANA, thread_id=f"h{n}", tool_call_id="r",
                       pedido=["P-20260917-0041", "P-20260919-0055", "P-20260925-0036",
                               "P-20260925-0036"][n],
                       importe=["120.00", "14.90", "12.00", "12.00"][n], motivo="x", pasarela=averiable)
    averiable.caida = False
    resultados = []
    cita = threading.Barrier(2, timeout=30)

    def pasada():
        cita.wait()
        resultados.append(completar_pendientes(pool, averiable, solo_vencidos=False))

    hilos = [threading.Thread(target=pasada) for _ in range(2)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=60)
    completados = [c.movimiento.referencia for r in resultados for c in r.completados]
    assert sorted(completados) == ["RE-000001", "RE-000002", "RE-000003", "RE-000004"]
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 4
    assert uno(bd_url, "SELECT count(*) FROM reembolsos WHERE estado = 'emitido'") == 4
