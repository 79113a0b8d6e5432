"""La política serializable, probada como se prueba una base de datos (issue 38, parte 6).

Por cada semilla, dos clientes nuevos y dos docenas de operaciones al azar (vales,
reenvíos, devoluciones, cambios, cancelaciones, la API de la tienda cambiando estados y
conversaciones enteras con el agente) salen a la vez en rondas de seis hilos: todas deciden su ``when`` con los mismos hechos y después todas
escriben. El comprobador (``tests/apoyo/historias_concurrentes.py``) repite en el orden en que
la base confirmó los efectos sin firma contra un modelo puro de las reglas de recuento: cada
uno tiene que estar permitido dados exactamente los anteriores; y mira los invariantes (nada
cancelado y enviado, nada reembolsado vuelto atrás, ninguna firma pedida al escribir que
dejara efecto) y que ``agente auditoria`` da cero. La última prueba rompe la revalidación a
propósito: el comprobador tiene que verlo.

Más semillas y más operaciones: ``python -m bench --solo serializable``.
"""

from __future__ import annotations

import threading

import psycopg
import pytest

from herramientas import REGISTRO
from nucleo.claves_candado import CANDADO_CLIENTE_SQL
from nucleo.contexto import ContextoCliente
from operaciones.reenvio.herramienta import reenviar
from politicas import PoliticaAprobacion
from tests.apoyo.fabricas import capturar, crear_pedido, esperar_bloqueadas, uno
from tests.apoyo.historias_concurrentes import comprobar, ejecutar, escenario_fijo, preparar

SEMILLAS = tuple(range(1, 9))


@pytest.mark.parametrize("semilla", SEMILLAS)
def test_lo_que_sale_sin_firma_de_muchas_conversaciones_a_la_vez_lo_permitiria_una_ejecucion_en_serie(
    semilla, pool, bd_url, servicio
):
    escenario = ejecutar(pool, bd_url, preparar(bd_url, semilla, clientes=2, operaciones=24, hilos=6, chat=True),
                         servicio)
    assert comprobar(bd_url, escenario) == [], f"semilla {semilla}: " + "; ".join(
        f"{r.operacion.n} {r.operacion.tipo} {r.operacion.pedido}: {r.desenlace}" for r in escenario.resultados)
    desenlaces = {r.desenlace for r in escenario.resultados}
    assert "efecto" in desenlaces  # la historia no es trivial: algo salió sin firma


def test_cuatro_compensaciones_del_mismo_cliente_a_la_vez_acaban_una_sin_firma_y_las_demas_a_firma(pool, bd_url):
    # Dos vales (uno por pedido) y dos reenvíos de la línea del primero: en cualquier orden en
    # serie, solo la primera en confirmarse sale sin firma (un vale por cliente; ni vale de una
    # línea reenviada ni reenvío de una línea con vale o ya reenviada).
    escenario = ejecutar(pool, bd_url, escenario_fijo(bd_url, 90, [("vale", 0), ("vale", 1), ("reenvio", 0),
                                                                   ("reenvio", 0)]))
    assert comprobar(bd_url, escenario) == []
    # Todas vieron al cliente limpio en el when: lo que no salió, lo paró la revalidación.
    desenlaces = sorted(r.desenlace for r in escenario.resultados)
    assert desenlaces.count("efecto") in (1, 2), desenlaces  # 2: el vale del otro pedido y un reenvío
    # Lo demás espera firma; o, si otra de la ronda ya espera firma por la misma línea, se
    # rechaza sin tarjeta: «ya se está revisando».
    en_revision = [r for r in escenario.resultados if r.desenlace == "rechazada"]
    assert all("esperando la revisión de un encargado" in r.detalle for r in en_revision), en_revision
    assert desenlaces.count("firma_al_escribir") >= 1, desenlaces
    assert desenlaces.count("firma_al_escribir") + len(en_revision) == 4 - desenlaces.count("efecto"), desenlaces


def test_con_la_revalidacion_rota_el_comprobador_encuentra_lo_que_ninguna_serie_permitiria(
    pool, bd_url, monkeypatch
):
    # Sin revalidar al escribir, los cuatro veredictos «sin firma» del when salen tal cual.
    monkeypatch.setattr("politicas.aprobacion.revalidar_llamada", lambda *a, **k: None)
    escenario = ejecutar(pool, bd_url, escenario_fijo(bd_url, 91, [("vale", 0), ("vale", 1), ("reenvio", 0),
                                                                   ("reenvio", 0)]))
    assert [r.desenlace for r in escenario.resultados] == ["efecto"] * 4
    violaciones = comprobar(bd_url, escenario)
    assert any("el cliente ya tenía 1 vale(s) en la ventana" in v for v in violaciones), violaciones
    assert any("la línea ya se había reenviado 1 vez/veces" in v for v in violaciones), violaciones
    assert any(v.startswith("la auditoría encuentra") and "serie.vales_en_la_ventana: 1" in v
               for v in violaciones), violaciones


# --- lo que encontraron las historias ---------------------------------------------------------

RETOCAR_STOCK_SQL = "UPDATE stock SET unidades = unidades + 1 WHERE tienda = 'talavera' AND sku = 'MEN-001'"


def test_un_reenvio_que_espera_el_candado_del_cliente_no_retiene_el_stock_de_la_tienda(pool, bd_url):
    """Encontrado por la semilla 35 del bench: el reenvío bloqueaba la fila de stock antes del
    candado del cliente, y otra operación del mismo cliente, ya con el candado, esperaba esa
    fila para mover stock (otro reenvío, una cancelación): ``DeadlockDetected`` y la operación
    del cliente fallaba con un error interno. El orden de candados es pedido, cliente, lo demás."""
    pedido = crear_pedido(bd_url, "C-0006", [("MEN-001", 1)], dias_entrega=2)
    contexto = ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando")
    politica = PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())
    args = {"pedido": pedido, "linea": 1, "motivo": "llego_roto"}
    veredicto = politica.evaluar(thread_id="h", tool_call_id="r", herramienta="reenviar", args=args,
                                 contexto=contexto)
    assert veredicto.requiere_encargado is False, veredicto.motivos
    resultado: dict = {}
    with psycopg.connect(bd_url, autocommit=True) as otra:
        # Otra operación del mismo cliente, ya dentro: tiene el candado del cliente.
        otra.execute("BEGIN")
        otra.execute(CANDADO_CLIENTE_SQL, {"cliente_id": "C-0006"})
        hilo = threading.Thread(target=lambda: resultado.__setitem__("r", capturar(lambda: reenviar(
            pool, contexto=contexto, thread_id="h", tool_call_id="r", revalidador=politica, **args))))
        hilo.start()
        esperar_bloqueadas(pool, 1)
        # ... y ahora mueve el stock de la tienda (lo que hace un reenvío o una cancelación).
        otra.execute("SET LOCAL lock_timeout = '10s'")
        otra.execute(RETOCAR_STOCK_SQL)
        otra.execute("COMMIT")
        hilo.join(30)
    assert isinstance(resultado["r"], dict), resultado["r"]
    assert uno(bd_url, "SELECT count(*) FROM reenvios WHERE pedido_id = %(p)s", {"p": pedido}) == 1
