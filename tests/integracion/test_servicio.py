"""El servicio de aprobaciones: cola, decisiones, candado por hilo, caducidad, conciliador, auditoría."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from nucleo.claves_candado import ESPACIO_HILOS
from nucleo.errores import (
    AprobacionPendiente,
    DecisionesDescuadradas,
    DecisionNoAplicable,
    DecisionNoValida,
    HiloNoEncontrado,
    NadaPendiente,
    Prohibido,
    YaDecidida,
)
from tests.apoyo.fabricas import (
    PEDIDO_GRANDE,
    consultar,
    conversacion,
    crear_pedido,
    uno,
)
from tests.apoyo.procesos import CliConServidor
from tests.apoyo.rutas import RAIZ

DEVOLVER_CAFETERA = f"Quiero devolver la cafetera del pedido {PEDIDO_GRANDE} porque gotea"


def _cli(bd_url, *args, **entorno):
    env = {**os.environ, "DATABASE_URL": bd_url, **entorno}
    return subprocess.Popen(
        [sys.executable, "-m", "agente.cli", *args], cwd=RAIZ, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


@contextmanager
def _decidir_en_otro_proceso(bd_url, config, hilo, **entorno):
    """``agente serve`` (con ``entorno``) y, en otro proceso, ``agente decidir HILO aprobar``
    como enc-talavera: cede (servidor, proceso de la CLI)."""
    with CliConServidor(bd_url, config, **entorno) as cli:
        cli.entrar("enc-talavera")
        env = {**os.environ, "DATABASE_URL": bd_url, "AGENTE_URL": cli.base, "XDG_CONFIG_HOME": str(config)}
        proceso = subprocess.Popen([sys.executable, "-m", "agente.cli", "decidir", hilo, "aprobar"], cwd=RAIZ,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            yield cli.servidor, proceso
        finally:
            if proceso.poll() is None:
                proceso.kill()
            proceso.communicate(timeout=30)


def _mensajes_agente(bd_url, hilo):
    return [f["texto"] for f in consultar(
        bd_url, "SELECT texto FROM mensajes_conversacion WHERE thread_id = %(h)s AND rol = 'agente' ORDER BY id",
        {"h": hilo})]


@pytest.mark.temporal
def test_pausa_en_un_proceso_y_decision_en_otro_llega_al_cliente(servicio, bd_url, tmp_path):
    hilo, respuesta = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    assert respuesta.estado == "esperando_aprobacion"
    with CliConServidor(bd_url, tmp_path / "config") as cli:
        cli.entrar("enc-talavera")
        r = cli("decidir", hilo, "aprobar")
    salida = r.stdout
    assert r.returncode == 0, r.stderr
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert numero in salida
    assert numero in _mensajes_agente(bd_url, hilo)[-1]
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 0
    historial = servicio.historial(hilo, servicio.contexto_de_cliente("C-0001"))
    assert historial["mensajes"][-1]["texto"].count(numero) == 1


def test_mensaje_nuevo_con_aprobacion_pendiente_se_guarda_y_no_borra_la_pausa(servicio, bd_url):
    ctx = servicio.contexto_de_cliente("C-0001")
    hilo = servicio.iniciar_conversacion(ctx)
    servicio.conversar(hilo, DEVOLVER_CAFETERA, ctx)
    antes = servicio.aprobacion(hilo)
    with pytest.raises(AprobacionPendiente, match="pendiente de revisión"):
        servicio.conversar(hilo, "¿Cuánto falta? Mi email es ana@example.com", ctx)
    despues = servicio.aprobacion(hilo)
    assert despues["interrupt_id"] == antes["interrupt_id"]
    estado = servicio.agente.get_state({"configurable": {"thread_id": hilo}})
    assert [i.id for t in estado.tasks for i in t.interrupts] == [antes["interrupt_id"]]
    assert [r["texto"] for r in despues["retenidos"]] == ["¿Cuánto falta? Mi email es ana@example.com"]
    # Y la decisión posterior sigue funcionando.
    final = servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert final.estado == "respondida"


@pytest.mark.temporal
def test_dos_decisiones_a_la_vez_una_reanuda_y_la_otra_ya_decidida(servicio, pasarela, bd_url):
    from tests.apoyo.fabricas import PasarelaRetenida

    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    # La que gana se queda en la pasarela hasta que la otra haya vuelto: así la otra la ve
    # «decidiéndose» (409) y no ya terminada (404), tarde lo que tarde en arrancar su hilo.
    retenida = PasarelaRetenida(pasarela.interna)
    pasarela.interna = retenida
    resultados, errores = [], []
    barrera = threading.Barrier(2)

    def decidir():
        barrera.wait()
        try:
            resultados.append(servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}]))
        except YaDecidida as exc:
            errores.append(exc)

    hilos = [threading.Thread(target=decidir) for _ in range(2)]
    for h in hilos:
        h.start()
    try:
        assert retenida.dentro.wait(60)
        assert _esperar(lambda: errores, 60)
    finally:
        retenida.soltar.set()
    for h in hilos:
        h.join(timeout=120)
    assert len(resultados) == 1 and len(errores) == 1
    assert "ya está decidida" in errores[0].mensaje
    assert len(pasarela.llamadas) == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 1


@pytest.mark.parametrize(
    ("encargado", "decisiones", "error", "texto"),
    [
        ("enc-talavera", [], DecisionesDescuadradas, "1 operación y se han enviado 0 decisiones"),
        ("enc-talavera", [{"type": "approve"}, {"type": "approve"}], DecisionesDescuadradas, "2 decisiones"),
        ("enc-talavera", [{"type": "respond", "message": "hola"}], DecisionNoAplicable, "no está permitida"),
        ("enc-talavera", [{"type": "edit", "edited_action": {"name": "sustituir", "args": {}}}],
         DecisionNoAplicable, "herramienta"),
        ("enc-talavera", [{"type": "edit", "edited_action": {"name": "reembolsar",
          "args": {"pedido": "P-20260920-0102", "importe": "10"}}}], DecisionNoAplicable, "pedido"),
        ("enc-talavera", [{"type": "edit", "edited_action": {"name": "reembolsar",
          "args": {"pedido": PEDIDO_GRANDE, "importe": "150"}}}], DecisionNoAplicable, "supera lo que pidió"),
        ("enc-talavera", [{"type": "edit", "edited_action": {"name": "reembolsar",
          "args": {"pedido": PEDIDO_GRANDE, "importe": "0"}}}], DecisionNoValida, "mayor que cero"),
        ("enc-talavera", [{"type": "reject", "message": "  "}], DecisionNoValida, "motivo"),
        ("enc-madrid-centro", [{"type": "approve"}], Prohibido, "otra tienda"),
        ("enc-talavera-baja", [{"type": "approve"}], Prohibido, "de baja"),
        ("enc-nadie", [{"type": "approve"}], Prohibido, "desconocido"),
    ],
)
def test_decision_no_valida_da_su_error_y_la_aprobacion_sigue_pendiente(
    servicio, pasarela, bd_url, encargado, decisiones, error, texto
):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    antes = servicio.aprobacion(hilo)
    with pytest.raises(error, match=texto):
        servicio.decidir(hilo, encargado, decisiones)
    despues = servicio.aprobacion(hilo)
    assert (despues["estado"], despues["interrupt_id"]) == ("pendiente", antes["interrupt_id"])
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
    assert pasarela.llamadas == []


def test_decidir_hilo_desconocido_o_sin_pausa(servicio):
    with pytest.raises(HiloNoEncontrado):
        servicio.decidir("h-no-existe", "enc-talavera", [{"type": "approve"}])
    hilo, _ = conversacion(servicio, "C-0004", "¿Dónde está mi pedido P-20260925-0150?")
    with pytest.raises(NadaPendiente):
        servicio.decidir(hilo, "enc-madrid-centro", [{"type": "approve"}])


def _esperar(condicion, segundos=60.0):
    limite = time.monotonic() + segundos
    while time.monotonic() < limite:
        if condicion():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.temporal
def test_decision_muerta_tras_registrarse_la_termina_el_conciliador(servicio, bd_url, tmp_path):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    # Retenemos el candado del hilo: el servidor registra la decisión y se queda esperando.
    retenedor = psycopg.connect(bd_url, autocommit=True)
    retenedor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
    with _decidir_en_otro_proceso(bd_url, tmp_path / "config", hilo) as (servidor, _proceso):
        assert _esperar(lambda: uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 1)
        servidor.proceso.send_signal(signal.SIGKILL)  # muere quien aplica la decisión
        servidor.proceso.wait(timeout=30)
    retenedor.close()
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    arreglos = servicio.reconciliar()
    assert {"thread_id": hilo, "accion": "decision_aplicada"} in arreglos
    _comprobar_una_sola_vez(servicio, bd_url, hilo)


@pytest.mark.temporal
def test_decision_muerta_durante_el_reembolso_la_termina_el_conciliador(servicio, bd_url, tmp_path):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with _decidir_en_otro_proceso(bd_url, tmp_path / "config", hilo, AGENTE_PASARELA_RETARDO="60") as (servidor, _p):
        assert _esperar(lambda: uno(bd_url, "SELECT count(*) FROM reembolsos WHERE estado = 'pendiente'") == 1)
        servidor.proceso.send_signal(signal.SIGKILL)
        servidor.proceso.wait(timeout=30)
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 0
    arreglos = servicio.reconciliar()
    assert {"thread_id": hilo, "accion": "ejecucion_completada"} in arreglos
    _comprobar_una_sola_vez(servicio, bd_url, hilo)


def _comprobar_una_sola_vez(servicio, bd_url, hilo):
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
    assert uno(bd_url, "SELECT estado FROM reembolsos") == "emitido"
    assert uno(bd_url, "SELECT count(*) FROM pasarela_movimientos") == 1
    assert servicio.auditoria()["sin_firma"] == []
    numero = uno(bd_url, "SELECT numero FROM reembolsos")
    assert numero in _mensajes_agente(bd_url, hilo)[-1]
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado WHERE aplicada IS NULL") == 0
    assert servicio.reconciliar() == []


def test_conciliador_reencola_hilo_pausado_sin_fila_y_borra_fila_obsoleta(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    interrupt_id = servicio.aprobacion(hilo)["interrupt_id"]
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("DELETE FROM aprobaciones_pendientes")
    assert servicio.reconciliar() == [{"thread_id": hilo, "accion": "reencolada"}]
    assert servicio.aprobacion(hilo)["interrupt_id"] == interrupt_id

    otro, _ = conversacion(servicio, "C-0004", "¿Dónde está mi pedido P-20260925-0150?")
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(
            """INSERT INTO aprobaciones_pendientes (thread_id, tienda, cliente_id, interrupt_id, peticion, contexto, caduca)
               VALUES (%s, 'madrid-centro', 'C-0004', 'viejo', '{"action_requests": []}', '{}', now() + interval '1 day')""",
            (otro,),
        )
    assert servicio.reconciliar() == [{"thread_id": otro, "accion": "fila_obsoleta_borrada"}]
    with pytest.raises(NadaPendiente):
        servicio.aprobacion(otro)


def test_aprobacion_caducada_se_rechaza_y_se_informa(servicio, pasarela, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET creada = creada - interval '73 hours', caduca = caduca - interval '73 hours'")
    assert servicio.caducar() == [hilo]
    assert pasarela.llamadas == []
    decision = consultar(bd_url, "SELECT encargado_id, decisiones FROM decisiones_encargado")[0]
    assert decision["encargado_id"] == "sistema"
    assert decision["decisiones"] == [{"type": "reject", "message": "caducada sin revisión"}]
    assert "caducada sin revisión" in _mensajes_agente(bd_url, hilo)[-1]
    assert servicio.caducar() == []


def test_auditoria_cero_en_una_mezcla_y_uno_con_reembolso_por_fuera(servicio, bd_url):
    # (cliente, líneas del pedido nuevo, días desde la entrega, texto, decisión del encargado)
    casos = [
        ("C-0002", [("MEN-001", 1)], 3, "Quiero devolver la sartén del pedido {p} porque se pega", None),
        ("C-0001", [("CAF-001", 1)], 4, "Quiero devolver la cafetera del pedido {p} porque gotea", {"type": "approve"}),
        ("C-0001", [("CAF-001", 1)], 4, "Quiero devolver la cafetera del pedido {p} porque gotea", "editar"),
        ("C-0001", [("CAF-001", 1)], 4, "Quiero devolver la cafetera del pedido {p} porque gotea",
         {"type": "reject", "message": "Producto usado"}),
        ("C-0001", [("CAF-001", 1)], 4, "Quiero cambiar la cafetera del pedido {p} por una más barata", None),
        ("C-0001", [("CAF-002", 1)], 4, "Quiero cambiar la cafetera del pedido {p} por la CAF-005",
         {"type": "approve"}),
        ("C-0001", [("CAF-001", 1)], 4, "Pregunta al encargado si tenéis la jarra de repuesto del pedido {p}",
         {"type": "respond", "message": "Sí"}),
        ("C-0005", [("ELE-001", 1)], 5, "Quiero devolver la batidora del pedido {p} porque no funciona",
         {"type": "approve"}),
        ("C-0004", [("ILU-001", 1)], None, "¿Dónde está mi pedido {p}?", None),
        ("C-0003", [("TEX-002", 1)], 45, "Quiero devolver las sábanas del pedido {p} porque no me gustan",
         {"type": "reject", "message": "Fuera de plazo"}),
    ]
    encargado = {"C-0003": "enc-madrid-centro", "C-0004": "enc-madrid-centro"}
    hechas = 0
    for n in range(50):
        cliente, lineas, dias, texto, decision = casos[n % len(casos)]
        if n % len(casos) == 0:
            # Clientes distintos: cada devolución cuenta para la regla de 2 en 30 días.
            cliente = ["C-0002", "C-0006", "C-0009", "C-0011", "C-0007"][n // len(casos)]
        pedido = crear_pedido(bd_url, cliente, lineas, dias_entrega=dias)
        hilo, respuesta = conversacion(servicio, cliente, texto.format(p=pedido))
        if respuesta.estado == "esperando_aprobacion":
            assert decision is not None, respuesta.mensaje_cliente
            pendiente = servicio.aprobacion(hilo)
            if decision == "editar":
                args = pendiente["peticion"]["action_requests"][0]["args"]
                decision = {"type": "edit", "edited_action": {"name": "reembolsar",
                            "args": {**args, "importe": "10"}}}
            servicio.decidir(hilo, encargado.get(cliente, "enc-talavera"),
                             [decision] * len(pendiente["peticion"]["action_requests"]))
            hechas += 1
        else:
            assert decision is None, respuesta.mensaje_cliente
    assert hechas == 35
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") > 0
    assert servicio.auditoria()["sin_firma"] == []
    r = _cli(bd_url, "auditoria")
    salida, error = r.communicate(timeout=120)
    assert r.returncode == 0, error
    assert "Efectos sin la firma requerida: 0" in salida

    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(
            """INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id, cliente_id,
                                       tienda, importe, estado)
               VALUES ('manual:1', 'manual', '1', 'P-20260909-0000', 'C-0008', 'madrid-centro', 5, 'emitido')"""
            .replace("P-20260909-0000", "P-20260915-0026")
        )
    assert len(servicio.auditoria()["sin_firma"]) == 1
    r = _cli(bd_url, "auditoria")
    salida, _ = r.communicate(timeout=120)
    assert r.returncode == 1
    assert "Efectos sin la firma requerida: 1" in salida


@pytest.mark.temporal
def test_tarea_periodica_solo_la_hace_un_servidor_a_la_vez(servicio, bd_url):
    from agente.servicio.periodicas import una_pasada
    from nucleo.claves_candado import ESPACIO_TAREAS

    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET creada = creada - interval '80 hours', caduca = caduca - interval '80 hours'")
    otro_servidor = psycopg.connect(bd_url, autocommit=True)
    candado = (ESPACIO_TAREAS, "caducadas")
    otro_servidor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", candado)
    informe = una_pasada(servicio)
    # El otro tiene el turno de la caducidad: no se toca; las demás tareas sí se hacen.
    assert "caducadas" not in informe and "arreglos" in informe
    assert servicio.aprobacion(hilo)["estado"] == "pendiente"
    # Soltar antes de cerrar: al cerrar, el servidor tarda un instante en liberar el candado.
    otro_servidor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", candado)
    otro_servidor.close()
    informe = una_pasada(servicio)
    assert informe["caducadas"] == [hilo]


def test_una_tarea_periodica_lenta_no_retrasa_a_las_demas(servicio):
    import threading

    from agente.servicio.periodicas import Tarea, arrancar

    soltar, vueltas_rapida = threading.Event(), threading.Semaphore(0)
    lenta = Tarea(nombre="lenta", hacer=lambda: soltar.wait(30), cada=0.05)
    rapida = Tarea(nombre="rapida", hacer=vueltas_rapida.release, cada=0.05)
    hilos, parar = arrancar(servicio, cada=0.05, al_arrancar=True, lista=[lenta, rapida])
    try:
        # La lenta sigue en su primera vuelta mientras la rápida da cinco.
        for _ in range(5):
            assert vueltas_rapida.acquire(timeout=10)
        assert not soltar.is_set()
    finally:
        parar.set()
        soltar.set()
        for hilo in hilos:
            hilo.join(timeout=10)
    assert not any(h.is_alive() for h in hilos)


def test_las_tareas_periodicas_no_retienen_conexiones_del_pool_mientras_trabajan(servicio):
    import threading

    from agente.servicio.periodicas import Tarea, arrancar

    # Tantas tareas bloqueadas a la vez como conexiones tiene el pool: si cada una retuviera
    # la de su candado, el pool quedaría vacío y las peticiones darían 503.
    soltar, dentro = threading.Event(), threading.Semaphore(0)

    def bloqueada():
        dentro.release()
        soltar.wait(30)

    tamano = servicio.pool.max_size
    lista = [Tarea(nombre=f"bloqueada_{i}", hacer=bloqueada, cada=60) for i in range(tamano)]
    hilos, parar = arrancar(servicio, cada=60, al_arrancar=True, lista=lista)
    try:
        for _ in range(tamano):
            assert dentro.acquire(timeout=10)
        conexiones = [servicio.pool.getconn(timeout=2) for _ in range(tamano)]
        for conexion in conexiones:
            servicio.pool.putconn(conexion)
    finally:
        parar.set()
        soltar.set()
        for hilo in hilos:
            hilo.join(timeout=10)


def test_mensaje_nuevo_con_la_fila_de_la_cola_perdida_no_borra_la_pausa(servicio, bd_url):
    ctx = servicio.contexto_de_cliente("C-0001")
    hilo = servicio.iniciar_conversacion(ctx)
    servicio.conversar(hilo, DEVOLVER_CAFETERA, ctx)
    interrupt_id = servicio.aprobacion(hilo)["interrupt_id"]
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("DELETE FROM aprobaciones_pendientes")  # p. ej. una caída justo tras la pausa
    with pytest.raises(AprobacionPendiente):
        servicio.conversar(hilo, "¿Hay novedades?", ctx)
    assert servicio.aprobacion(hilo)["interrupt_id"] == interrupt_id
    estado = servicio.agente.get_state({"configurable": {"thread_id": hilo}})
    assert [i.id for t in estado.tasks for i in t.interrupts] == [interrupt_id]
    # Tras decidir, el hilo vuelve a aceptar mensajes normales.
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    assert servicio.conversar(hilo, "¿Dónde está mi pedido P-20260917-0041?", ctx).estado == "respondida"


@pytest.mark.temporal
def test_varios_turnos_a_la_vez_en_un_proceso_con_el_saver_sin_candado(servicio, bd_url):
    from agente.bd.checkpointer import SaverDePool

    assert isinstance(servicio.agente.checkpointer, SaverDePool)
    resultados, errores = [], []

    def turno(cliente, texto):
        try:
            resultados.append(conversacion(servicio, cliente, texto)[1].estado)
        except Exception as exc:  # noqa: BLE001 - se comprueba abajo
            errores.append(exc)

    casos = [("C-0004", "¿Dónde está mi pedido P-20260925-0150?"), ("C-0001", DEVOLVER_CAFETERA),
             ("C-0002", "Quiero devolver la sartén del pedido P-20260920-0102 porque se pega")] * 2
    hilos = [threading.Thread(target=turno, args=caso) for caso in casos]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=120)
    assert errores == []
    # Los dos 120 EUR de C-0001: una tarjeta; la otra petición lee que ya se está revisando.
    assert sorted(resultados).count("esperando_aprobacion") == 1
    assert uno(bd_url, "SELECT count(*) FROM aprobaciones_pendientes") == 1
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1  # el segundo: nada que reembolsar


def test_saver_sin_candado_exige_un_pool(bd_url):
    from agente.bd.checkpointer import SaverDePool

    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c, pytest.raises(TypeError):
        SaverDePool(c)


# -- hilo ocupado, importes editados, caducidad por defecto, cierre de una decisión -----------


@pytest.fixture
def servicio_impaciente(bd_url, pasarela):
    """El servicio, pero esperando poco al candado del hilo (para provocar HiloOcupado)."""
    from agente.servicio.fabrica import crear_servicio
    from tests.apoyo.fabricas import ajustes_prueba

    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=pasarela,
                       pausa_reintentos=0.01, espera_candado=0.3)
    yield s
    s.cerrar()


@contextmanager
def _candado_retenido(bd_url, hilo):
    """Otro proceso retiene el candado del hilo; al salir lo suelta (antes de cerrar)."""
    with psycopg.connect(bd_url, autocommit=True) as retenedor:
        retenedor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))
        try:
            yield
        finally:
            retenedor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (ESPACIO_HILOS, hilo))


@pytest.mark.temporal
def test_turno_con_el_hilo_ocupado_da_hilo_ocupado_y_no_guarda_el_mensaje(servicio_impaciente, bd_url):
    from nucleo.errores import HiloOcupado

    servicio = servicio_impaciente
    ctx = servicio.contexto_de_cliente("C-0004")
    hilo = servicio.iniciar_conversacion(ctx)
    with _candado_retenido(bd_url, hilo), pytest.raises(HiloOcupado, match="ocupada") as error:
        servicio.conversar(hilo, "¿Dónde está mi pedido P-20260925-0150?", ctx)
    assert not isinstance(error.value, AprobacionPendiente)
    assert error.value.estado_http == 409
    assert error.value.datos["reintentar_en"] >= 1
    assert uno(bd_url, "SELECT count(*) FROM mensajes_conversacion") == 0
    # Suelto el candado, el mismo mensaje pasa.
    assert servicio.conversar(hilo, "¿Dónde está mi pedido P-20260925-0150?", ctx).estado == "respondida"


@pytest.mark.temporal
def test_decision_con_el_hilo_ocupado_queda_registrada_y_la_aplica_el_conciliador(
    servicio_impaciente, pasarela, bd_url
):
    from nucleo.errores import HiloOcupado

    servicio = servicio_impaciente
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with _candado_retenido(bd_url, hilo):
        with pytest.raises(HiloOcupado, match="registrada") as error:
            servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
        assert error.value.datos["registrada"] is True
        # Registrada = la fila de la cola pasó a «decidiendo» (con quien decidió) en la misma
        # sentencia que la decisión: otra decisión ya no entra.
        fila = servicio.aprobacion(hilo)
        assert (fila["estado"], fila["asignada_a"]) == ("decidiendo", "enc-talavera")
        with pytest.raises(YaDecidida):
            servicio.decidir(hilo, "enc-talavera", [{"type": "reject", "message": "tarde"}])
        assert servicio.reconciliar() == []  # el hilo sigue ocupado: no se toca
    assert pasarela.llamadas == []
    assert servicio.reconciliar() == [{"thread_id": hilo, "accion": "decision_aplicada"}]
    _comprobar_una_sola_vez(servicio, bd_url, hilo)


@pytest.mark.parametrize("importe", ["10.009", "90.001", 10.009, "1e400", "NaN", "noventa"])
def test_edicion_con_importe_no_valido_da_422_sin_redondear_y_sigue_pendiente(
    servicio, pasarela, bd_url, importe
):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    antes = servicio.aprobacion(hilo)
    edicion = {"type": "edit", "edited_action": {
        "name": "reembolsar", "args": {"pedido": PEDIDO_GRANDE, "importe": importe}}}
    with pytest.raises(DecisionNoValida) as error:
        servicio.decidir(hilo, "enc-talavera", [edicion])
    assert error.value.estado_http == 422
    assert "10,01" not in error.value.mensaje and "90,00" not in error.value.mensaje
    despues = servicio.aprobacion(hilo)
    assert (despues["estado"], despues["interrupt_id"]) == ("pendiente", antes["interrupt_id"])
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
    assert pasarela.llamadas == []


def test_edicion_de_un_campo_no_editable_se_rechaza(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    args = dict(servicio.aprobacion(hilo)["peticion"]["action_requests"][0]["args"])
    edicion = {"type": "edit", "edited_action": {
        "name": "reembolsar", "args": {**args, "motivo": "otro motivo"}}}
    with pytest.raises(DecisionNoAplicable, match="solo se puede editar importe .se cambió motivo"):
        servicio.decidir(hilo, "enc-talavera", [edicion])
    assert servicio.aprobacion(hilo)["estado"] == "pendiente"


def test_edicion_por_encima_de_lo_que_queda_por_reembolsar_se_rechaza(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:  # otro reembolso de 50 ocupa la única unidad
        rid = c.execute(
            """INSERT INTO reembolsos (clave_idempotencia, thread_id, tool_call_id, pedido_id,
                                       cliente_id, tienda, importe, estado)
               VALUES ('manual:2', 'manual', '2', %(p)s, 'C-0001', 'talavera', 50, 'emitido')
               RETURNING id""",
            {"p": PEDIDO_GRANDE},
        ).fetchone()["id"]
        c.execute("INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, importe) "
                  "VALUES (%(p)s, 1, 1, %(r)s, 50)", {"p": PEDIDO_GRANDE, "r": rid})
    edicion = {"type": "edit", "edited_action": {
        "name": "reembolsar", "args": {"pedido": PEDIDO_GRANDE, "importe": "90"}}}
    # Lo reembolsable es el valor de las unidades libres del libro: ninguna.
    with pytest.raises(DecisionNoAplicable, match=r"supera lo que queda por reembolsar \(0,00 EUR\)"):
        servicio.decidir(hilo, "enc-talavera", [edicion])
    assert servicio.aprobacion(hilo)["estado"] == "pendiente"


def test_sin_fila_de_politica_el_plazo_se_fija_con_las_horas_por_defecto(servicio, bd_url):
    from politicas import DEFECTOS

    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("DELETE FROM politicas_tienda WHERE tienda = 'talavera'")
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    horas = uno(bd_url, "SELECT extract(epoch FROM caduca - creada) / 3600 FROM aprobaciones_pendientes")
    assert round(horas) == DEFECTOS["horas_caducidad"]


def test_la_caducidad_decide_las_vencidas_por_su_plazo_y_deja_las_demas(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET caduca = now() + interval '1 minute'")
    assert servicio.caducar() == []
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET caduca = now() - interval '1 second'")
    assert servicio.caducar() == [hilo]
    assert "caducada sin revisión" in _mensajes_agente(bd_url, hilo)[-1]


def test_una_aprobacion_vencida_no_se_puede_aprobar_aunque_no_haya_pasado_la_caducidad(servicio, pasarela, bd_url):
    from nucleo.errores import PlazoVencido

    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute("UPDATE aprobaciones_pendientes SET caduca = now() - interval '1 hour'")
    with pytest.raises(PlazoVencido, match="caducó el .* ya no se puede decidir"):
        servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    # Nada cambió: sigue en la cola, sin decisión registrada ni dinero movido.
    assert uno(bd_url, "SELECT estado FROM aprobaciones_pendientes") == "pendiente"
    assert uno(bd_url, "SELECT count(*) FROM decisiones_encargado") == 0
    assert pasarela.llamadas == []
    assert servicio.caducar() == [hilo]
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
    assert uno(bd_url, "SELECT encargado_id FROM decisiones_encargado") == "sistema"


def test_decision_ejecutada_pero_sin_cerrar_la_cierra_el_conciliador(servicio, bd_url):
    hilo, _ = conversacion(servicio, "C-0001", DEVOLVER_CAFETERA)
    servicio.decidir(hilo, "enc-talavera", [{"type": "approve"}])
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:  # caída justo antes de marcarla aplicada
        c.execute("UPDATE decisiones_encargado SET aplicada = NULL, resultado = NULL")
    assert servicio.reconciliar() == [{"thread_id": hilo, "accion": "decision_cerrada"}]
    assert uno(bd_url, "SELECT resultado FROM decisiones_encargado") == "respondida"
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1
    assert servicio.reconciliar() == []
