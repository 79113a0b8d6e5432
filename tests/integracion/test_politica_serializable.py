"""Política serializable (issue 38): varias conversaciones del mismo cliente a la vez obtienen
exactamente lo que obtendría una sola.

Cada historia abre conversaciones de verdad (servicio completo, modelo offline) que compiten:
``en_carrera`` retiene el pedido (o el candado del cliente) hasta que todas esperan ante él,
así que todas decidieron su ``when`` con los mismos hechos antes de que ningún efecto se
confirmara. Lo que se comprueba es la base: cuántos efectos salieron sin firma, qué espera a
un encargado y con qué motivo, y que la pausa que sale del efecto se decide como cualquier otra.
"""

from __future__ import annotations

import threading

from herramientas import REGISTRO
from nucleo.contexto import ContextoCliente
from politicas import PoliticaAprobacion
from tests.apoyo.fabricas import (
    PEDIDO_GRANDE,
    PEDIDO_PEQUENO,
    capturar,
    consultar,
    conversacion,
    crear_pedido,
    en_carrera,
    uno,
)

VALE_PEDIDO = "P-20261012-0099"  # C-0003, Madrid-Centro, una línea de 99,00 EUR entregada
ARANAZO = f"El pedido {VALE_PEDIDO} llegó con un arañazo, no quiero devolverlo"
LAMPARA = "P-20261010-0300"  # C-0012, Madrid-Centro, enviado hace 6 días: una lámpara de 40 EUR
NO_LLEGO = f"No me ha llegado el pedido {LAMPARA}"
BLOQUEAR_PEDIDO = "SELECT 1 FROM pedidos WHERE id = %s FOR UPDATE"


def _a_la_vez(servicio, pool, bd_url, candado: str, clave: str, cliente: str, textos: list[str]) -> dict:
    """Cada texto en su conversación, todas en carrera ante ``candado``; nombre -> (hilo, respuesta)."""
    ctx = servicio.contexto_de_cliente(cliente)
    hilos = {f"c{n}": servicio.iniciar_conversacion(ctx) for n in range(len(textos))}
    tareas = {nombre: (lambda h=hilo, t=texto: (h, servicio.conversar(h, t, ctx)))
              for (nombre, hilo), texto in zip(hilos.items(), textos, strict=True)}
    resultados = en_carrera(pool, bd_url, candado, (clave,), tareas)
    fallos = {n: r for n, r in resultados.items() if isinstance(r, Exception)}
    assert not fallos, fallos
    return resultados


def _a_la_vez_sin_candado(servicio, cliente: str, textos: list[str]) -> dict:
    """Cada texto en su conversación, soltadas a la vez con una barrera (carrera natural: sin
    retener nada que el código de antes no tomara)."""
    ctx = servicio.contexto_de_cliente(cliente)
    hilos = [servicio.iniciar_conversacion(ctx) for _ in textos]
    barrera = threading.Barrier(len(textos))
    resultados: dict = {}

    def hablar(n: int, hilo: str, texto: str) -> None:
        barrera.wait()
        resultados[f"c{n}"] = capturar(lambda: (hilo, servicio.conversar(hilo, texto, ctx)))

    trabajos = [threading.Thread(target=hablar, args=(n, h, t)) for n, (h, t) in enumerate(zip(hilos, textos, strict=True))]
    for t in trabajos:
        t.start()
    for t in trabajos:
        t.join(timeout=120)
    fallos = {n: r for n, r in resultados.items() if isinstance(r, Exception)}
    assert not fallos and len(resultados) == len(textos), (fallos, resultados)
    return resultados


def _pendientes(bd_url: str, cliente: str) -> list[dict]:
    """Las tarjetas del cliente con los motivos de la política de su acción."""
    return consultar(bd_url, """
        SELECT a.thread_id, e.motivos, e.revalidada IS NOT NULL AS revalidada, e.herramienta
        FROM aprobaciones_pendientes a
        JOIN evaluaciones_politica e ON e.thread_id = a.thread_id
         AND e.tool_call_id = a.peticion -> 'tool_call_ids' ->> 0
        WHERE a.cliente_id = %(cliente)s ORDER BY a.creada""", {"cliente": cliente})


def _revisadas_o_en_revision(resultados: dict, pendientes: list[dict], motivo: str) -> None:
    """Cada conversación sin efecto automático espera a un encargado con ``motivo`` o leyó que
    su petición ya se revisa en otra; nunca un error ni un texto interno."""
    con_tarjeta = {p["thread_id"] for p in pendientes}
    for hilo, respuesta in resultados.values():
        if hilo in con_tarjeta:
            assert respuesta.estado == "esperando_aprobacion", respuesta
            (tarjeta,) = [p for p in pendientes if p["thread_id"] == hilo]
            assert any(motivo in m for m in tarjeta["motivos"]), tarjeta
        else:
            assert "revis" in respuesta.mensaje_cliente.lower(), respuesta.mensaje_cliente
        assert "problema interno" not in respuesta.mensaje_cliente and "Error" not in respuesta.mensaje_cliente


def test_cuatro_vales_a_la_vez_por_una_linea_dan_uno_sin_firma_y_los_demas_a_revision(servicio, pool, bd_url):
    resultados = _a_la_vez(servicio, pool, bd_url, BLOQUEAR_PEDIDO, VALE_PEDIDO, "C-0003", [ARANAZO] * 4)
    vales = consultar(bd_url, "SELECT thread_id, aprobado_por FROM vales")
    assert len(vales) == 1 and vales[0]["aprobado_por"] is None
    ganador = vales[0]["thread_id"]
    assert resultados[next(n for n, (h, _) in resultados.items() if h == ganador)][1].estado == "respondida"
    pendientes = _pendientes(bd_url, "C-0003")
    assert pendientes, "al menos una de las perdedoras espera a un encargado"
    assert all(p["revalidada"] for p in pendientes)  # la pausa salió del efecto, no del when
    perdedoras = {n: r for n, r in resultados.items() if r[0] != ganador}
    _revisadas_o_en_revision(perdedoras, pendientes, "el cliente ya recibió 1 vale")


def test_la_pausa_que_sale_del_efecto_se_aprueba_y_se_rechaza_como_cualquier_otra(servicio, pool, bd_url):
    resultados = _a_la_vez(servicio, pool, bd_url, BLOQUEAR_PEDIDO, VALE_PEDIDO, "C-0003", [ARANAZO] * 2)
    (pendiente,) = _pendientes(bd_url, "C-0003")
    respuesta = servicio.decidir(pendiente["thread_id"], "enc-madrid-centro", [{"type": "approve"}])
    assert respuesta.estado == "respondida"
    vales = consultar(bd_url, "SELECT thread_id, aprobado_por FROM vales ORDER BY id")
    assert [v["aprobado_por"] for v in vales] == [None, "enc-madrid-centro"]
    assert vales[1]["thread_id"] == pendiente["thread_id"]
    assert {h for h, _ in resultados.values()} == {v["thread_id"] for v in vales}
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
    # Y otra pausa del efecto, rechazada: ni vale ni dinero.
    hilo, respuesta = conversacion(servicio, "C-0003", ARANAZO)
    assert respuesta.estado == "esperando_aprobacion"  # tercer vale en 90 días: ya en el when
    servicio.decidir(hilo, "enc-madrid-centro", [{"type": "reject", "message": "ya tiene dos vales"}])
    assert uno(bd_url, "SELECT count(*) FROM vales") == 2


def test_tres_reenvios_a_la_vez_de_una_lampara_sacan_una_sola_sin_firma(servicio, pool, bd_url):
    stock = uno(bd_url, "SELECT s.unidades FROM stock s JOIN lineas_pedido l ON l.sku = s.sku "
                        "WHERE l.pedido_id = %(p)s AND s.tienda = 'madrid-centro'", {"p": LAMPARA})
    resultados = _a_la_vez(servicio, pool, bd_url, BLOQUEAR_PEDIDO, LAMPARA, "C-0012", [NO_LLEGO] * 3)
    reenvios = consultar(bd_url, "SELECT thread_id, aprobado_por FROM reenvios")
    assert [r["aprobado_por"] for r in reenvios] == [None]
    assert uno(bd_url, "SELECT s.unidades FROM stock s JOIN lineas_pedido l ON l.sku = s.sku "
                       "WHERE l.pedido_id = %(p)s AND s.tienda = 'madrid-centro'", {"p": LAMPARA}) == stock - 1
    perdedoras = {n: r for n, r in resultados.items() if r[0] != reenvios[0]["thread_id"]}
    _revisadas_o_en_revision(perdedoras, _pendientes(bd_url, "C-0012"), "esta línea ya se reenvió")


def test_cuatro_devoluciones_a_la_vez_con_un_maximo_de_dos_dan_dos_sin_firma(servicio, bd_url):
    pedidos = [crear_pedido(bd_url, "C-0002", [("TEX-001", 1)], dias_entrega=3) for _ in range(4)]
    textos = [f"Quiero devolver el pedido {p}, no me gusta" for p in pedidos]
    resultados = _a_la_vez_sin_candado(servicio, "C-0002", textos)
    sin_firma = consultar(bd_url, "SELECT pedido_id FROM reembolsos WHERE aprobado_por IS NULL "
                                  "AND pedido_id = ANY(%(p)s)", {"p": pedidos})
    # La demo ya da a C-0002 devoluciones en la ventana: lo que quede hasta 2, ni una más.
    previas = uno(bd_url, "SELECT count(*) FROM devoluciones WHERE cliente_id = 'C-0002' "
                          "AND creada > now() - interval '30 days' AND NOT (pedido_id = ANY(%(p)s))", {"p": pedidos})
    assert len(sin_firma) == max(0, 2 - previas)
    pendientes = _pendientes(bd_url, "C-0002")
    assert len(pendientes) == 4 - len(sin_firma)
    con_firma = {n: r for n, r in resultados.items() if r[1].estado == "esperando_aprobacion"}
    _revisadas_o_en_revision(con_firma, pendientes, "devoluciones en los últimos")


def test_reembolso_y_vale_a_la_vez_sobre_la_misma_unidad_no_salen_los_dos_sin_firma(servicio, pool, bd_url):
    textos = [f"Quiero devolver el pedido {PEDIDO_PEQUENO}, no me gusta",
              f"El pedido {PEDIDO_PEQUENO} llegó con un arañazo, no quiero devolverlo"]
    _a_la_vez(servicio, pool, bd_url, BLOQUEAR_PEDIDO, PEDIDO_PEQUENO, "C-0002", textos)
    reembolsos = uno(bd_url, "SELECT count(*) FROM reembolsos WHERE pedido_id = %(p)s "
                             "AND aprobado_por IS NULL", {"p": PEDIDO_PEQUENO})
    vales = uno(bd_url, "SELECT count(*) FROM vales WHERE pedido_id = %(p)s", {"p": PEDIDO_PEQUENO})
    assert reembolsos + vales == 1
    assert len(_pendientes(bd_url, "C-0002")) == 1
    pagado = uno(bd_url, "SELECT importe FROM pedidos WHERE id = %(p)s", {"p": PEDIDO_PEQUENO})
    compensado = uno(bd_url, "SELECT coalesce((SELECT sum(importe) FROM reembolsos WHERE pedido_id = %(p)s), 0)"
                             " + coalesce((SELECT sum(importe) FROM vales WHERE pedido_id = %(p)s), 0)",
                     {"p": PEDIDO_PEQUENO})
    assert compensado <= pagado


def test_vale_y_despues_reenvio_de_la_misma_unidad_el_reenvio_espera_firma(servicio, bd_url):
    pedido = crear_pedido(bd_url, "C-0012", [("ILU-001", 1)], dias_entrega=1)
    _, respuesta = conversacion(servicio, "C-0012", f"El pedido {pedido} llegó con un arañazo, no quiero devolverlo")
    assert respuesta.estado == "respondida" and uno(bd_url, "SELECT count(*) FROM vales") == 1
    _, respuesta = conversacion(servicio, "C-0012", f"La lámpara del pedido {pedido} llegó rota, mandadme otra")
    assert respuesta.estado == "esperando_aprobacion", respuesta.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM reenvios WHERE pedido_id = %(p)s", {"p": pedido}) == 0
    (pendiente,) = _pendientes(bd_url, "C-0012")
    assert "esta línea ya tuvo un vale de compensación" in pendiente["motivos"]


def test_una_segunda_peticion_por_unidades_que_ya_esperan_firma_no_abre_otra_tarjeta(servicio, bd_url):
    devolver = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
    _, primera = conversacion(servicio, "C-0001", devolver)
    assert primera.estado == "esperando_aprobacion"
    _, segunda = conversacion(servicio, "C-0001", devolver)
    assert segunda.estado == "respondida"
    assert "revis" in segunda.mensaje_cliente.lower() and "Error" not in segunda.mensaje_cliente
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes WHERE cliente_id = 'C-0001'") == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos WHERE pedido_id = %(p)s", {"p": PEDIDO_GRANDE}) == 0


def _cambio_a_caf_005(pool, hilo: str, tool_call_id: str):
    """El veredicto de cambiar la cafetera de 120,00 por la CAF-005 (69,00): devuelve 51,00 EUR,
    por debajo del límite de 60,00 EUR de la tienda."""
    politica = PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())
    return politica.evaluar(
        thread_id=hilo, tool_call_id=tool_call_id, herramienta="sustituir",
        args={"pedido": PEDIDO_GRANDE, "sku_original": "CAF-001", "sku_nuevo": "CAF-005"},
        contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
    )


def test_un_cambio_mas_barato_tras_un_reembolso_rechazado_espera_firma(servicio, pool, bd_url):
    antes = _cambio_a_caf_005(pool, "otro-hilo", "antes")
    assert antes.requiere_encargado is False, antes.motivos  # sin el rechazo, sale sin firma
    devolver = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
    hilo, respuesta = conversacion(servicio, "C-0001", devolver)
    assert respuesta.estado == "esperando_aprobacion"
    servicio.decidir(hilo, "ger-talavera", [{"type": "reject", "message": "no procede"}])
    despues = _cambio_a_caf_005(pool, hilo, "despues")
    assert despues.requiere_encargado is True
    assert any("un encargado rechazó 1 operación de este pedido" in m for m in despues.motivos)


def test_lo_que_devuelve_un_cambio_cuenta_contra_el_limite_de_reembolso(pool):
    politica = PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())
    veredicto = politica.evaluar(
        thread_id="h", tool_call_id="c", herramienta="sustituir",
        args={"pedido": PEDIDO_GRANDE, "sku_original": "CAF-001", "sku_nuevo": "CAF-002"},
        contexto=ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
    )
    assert veredicto.requiere_encargado is True
    assert veredicto.motivos == ("el cambio devuelve 90,10 EUR y supera el límite de 60,00 EUR de la "
                                 "tienda para devolver dinero",)


def test_dos_peticiones_a_la_vez_por_las_mismas_unidades_abren_una_sola_tarjeta(servicio, bd_url):
    devolver = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"
    resultados = _a_la_vez_sin_candado(servicio, "C-0001", [devolver, devolver])
    estados = sorted(r.estado for _, r in resultados.values())
    assert estados == ["esperando_aprobacion", "respondida"], resultados
    (contestada,) = [r for _, r in resultados.values() if r.estado == "respondida"]
    assert "revis" in contestada.mensaje_cliente.lower()
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes WHERE cliente_id = 'C-0001'") == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
