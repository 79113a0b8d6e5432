"""La ingesta de la tienda y las operaciones del chat compiten por el mismo pedido (issue 38,
parte 3): hilos de verdad sobre PostgreSQL, arrancados a la vez con una barrera.

Cada carrera tiene dos finales buenos: gana el chat (la ingesta recibe su 409) o gana la
ingesta (el chat recibe su error). Nunca las dos cosas: un pedido cancelado o reembolsado
por el chat que además acaba ``enviado`` (o ``pendiente``) rompe los libros. En main, antes
del arreglo, pasaba en ~15 % de las carreras: la ingesta leía «¿tiene cancelaciones o
reembolsos?» en una subconsulta de su ``FOR UPDATE``, con la foto de antes de esperar al
candado (docs/trampas.md). Y dos altas a la vez del mismo pedido: la segunda no pisa lo que
el chat hizo entre medias.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.tienda.aplicar import aplicar_pedido
from agente.servicio.tienda.ingesta import IngestaTienda, crear_clave
from agente.servicio.tienda.registros import CambioEstado, DatosPedido
from caja.pasarela import PasarelaSimulada
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio, RegistroRechazado
from operaciones.cancelacion import herramienta as cancelaciones
from operaciones.cancelacion.herramienta import NoCancelable, cancelar_pedido
from operaciones.reembolso.herramienta import reembolsar
from tests.apoyo.fabricas import capturar, consultar

ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
CARRERAS_CANCELACION = 60
CARRERAS_REEMBOLSO = 40

# Pedidos de Ana con una sartén (24,90), pendientes o entregados hace dos días, con su pago.
PEDIDOS_SQL = """
WITH p AS (
    INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, enviado_en, entregado_en, importe,
                         referencia_pago)
    SELECT %(prefijo)s || lpad(n::text, 4, '0'), 'C-0001', 'talavera', now() - interval '5 days',
           %(estado)s,
           CASE WHEN %(estado)s = 'entregado' THEN now() - interval '4 days' END,
           CASE WHEN %(estado)s = 'entregado' THEN now() - interval '2 days' END,
           24.90, 'pi_carrera_' || %(prefijo)s || n
    FROM generate_series(1, %(n)s) AS n
    RETURNING id
)
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
SELECT id, 1, 'MEN-001', 1, 24.90 FROM p
RETURNING pedido_id
"""


def _pedidos(bd_url: str, prefijo: str, estado: str, n: int) -> list[str]:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        filas = c.execute(PEDIDOS_SQL, {"prefijo": prefijo, "estado": estado, "n": n}).fetchall()
    return sorted(f["pedido_id"] for f in filas)


@pytest.fixture
def ingesta(pool, bd_url):
    """La fachada que llama la ruta ``POST /api/tienda/v1/pedidos/{id}/estado`` y su clave."""
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        secreto = crear_clave(c, tienda="talavera", nombre="carreras", alcances=["estados"]).secreto
    api = IngestaTienda(pool)
    return api, api.autenticar(secreto, "estados")


def _a_la_vez(chat, tienda) -> tuple[object, object]:
    """Las dos llamadas en dos hilos que salen juntos de una barrera; sus resultados o excepciones."""
    barrera = threading.Barrier(2)
    resultados: dict[str, object] = {}

    def correr(nombre, funcion):
        barrera.wait(10)
        resultados[nombre] = capturar(funcion)

    hilos = [threading.Thread(target=correr, args=("chat", chat)),
             threading.Thread(target=correr, args=("tienda", tienda))]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(30)
    assert not any(h.is_alive() for h in hilos), "una de las dos se quedó colgada"
    return resultados["chat"], resultados["tienda"]


def test_cancelar_por_el_chat_y_marcar_enviado_a_la_vez_nunca_deja_un_pedido_cancelado_y_enviado(
        pool, bd_url, ingesta):
    api, clave = ingesta
    pasarela = PasarelaSimulada(pool=pool)
    finales = {"chat": 0, "tienda": 0}
    malas = []
    for n, pedido in enumerate(_pedidos(bd_url, "P-20261120-", "pendiente", CARRERAS_CANCELACION)):
        chat, tienda = _a_la_vez(
            lambda pedido=pedido, n=n: cancelar_pedido(
                pool, contexto=ANA, thread_id=f"carrera-{n}", tool_call_id="c", pedido=pedido,
                importe="24.90", motivo="ya no lo necesito", pasarela=pasarela),
            lambda pedido=pedido: api.estado(clave, pedido, CambioEstado(estado="enviado")))
        # Ganó el chat: la tienda recibe su 409 con el motivo, nunca un 200.
        if isinstance(chat, dict) and isinstance(tienda, RegistroRechazado) \
                and "canceló el pedido por el chat" in str(tienda):
            finales["chat"] += 1
        # Ganó la tienda: el chat dice que ya salió y qué puede hacer el cliente.
        elif isinstance(chat, NoCancelable) and "ya ha salido del almacén" in str(chat) \
                and getattr(tienda, "resultado", None) == "actualizado":
            finales["tienda"] += 1
        else:
            malas.append((pedido, chat, tienda))
    assert malas == [], f"{len(malas)} de {CARRERAS_CANCELACION} carreras con los dos ganando o un error impreciso"
    rotos = consultar(bd_url, """
        SELECT p.id FROM pedidos p
        WHERE p.id LIKE 'P-20261120-%%' AND p.estado <> 'cancelado'
          AND (EXISTS (SELECT 1 FROM cancelaciones c WHERE c.pedido_id = p.id)
               OR EXISTS (SELECT 1 FROM reembolsos r WHERE r.pedido_id = p.id))""")
    assert rotos == []
    estados = consultar(bd_url, "SELECT estado, count(*)::int AS n FROM pedidos WHERE id LIKE 'P-20261120-%%' "
                                "GROUP BY estado")
    assert {f["estado"]: f["n"] for f in estados} == {
        e: n for e, n in (("cancelado", finales["chat"]), ("enviado", finales["tienda"])) if n}


def test_reembolsar_por_el_chat_y_devolver_el_pedido_atras_a_la_vez_nunca_deja_un_reembolsado_sin_entregar(
        pool, bd_url, ingesta):
    api, clave = ingesta
    pasarela = PasarelaSimulada(pool=pool)
    finales = {"chat": 0, "tienda": 0}
    malas = []
    for n, pedido in enumerate(_pedidos(bd_url, "P-20261121-", "entregado", CARRERAS_REEMBOLSO)):
        vuelta = ("enviado", "pendiente")[n % 2]
        chat, tienda = _a_la_vez(
            lambda pedido=pedido, n=n: reembolsar(
                pool, contexto=ANA, thread_id=f"carrera-{n}", tool_call_id="r", pedido=pedido,
                importe="24.90", motivo="llegó rota", pasarela=pasarela),
            lambda pedido=pedido, vuelta=vuelta: api.estado(clave, pedido, CambioEstado(estado=vuelta)))
        # Ganó el chat: la tienda recibe su 409; ganó la tienda: el chat, que aún no se entregó.
        if isinstance(chat, dict) and isinstance(tienda, RegistroRechazado) \
                and f"ya tiene reembolsos o compensaciones: no puede volver a {vuelta}" in str(tienda):
            finales["chat"] += 1
        elif isinstance(chat, ErrorDominio) and "aún no se ha entregado" in str(chat) \
                and getattr(tienda, "resultado", None) == "actualizado":
            finales["tienda"] += 1
        else:
            malas.append((pedido, chat, tienda))
    assert malas == [], f"{len(malas)} de {CARRERAS_REEMBOLSO} carreras con los dos ganando o un error impreciso"
    rotos = consultar(bd_url, """
        SELECT p.id FROM pedidos p
        WHERE p.id LIKE 'P-20261121-%%' AND p.estado <> 'entregado'
          AND EXISTS (SELECT 1 FROM reembolsos r WHERE r.pedido_id = p.id)""")
    assert rotos == []
    assert finales["chat"] + finales["tienda"] == CARRERAS_REEMBOLSO


def _cuerpo(estado: str) -> DatosPedido:
    ahora = datetime.now(UTC).replace(microsecond=0)
    return DatosPedido.model_validate({
        "cliente_id": "C-0001", "fecha": ahora - timedelta(days=2), "estado": estado,
        "enviado_en": ahora - timedelta(days=1) if estado == "enviado" else None,
        "lineas": [{"linea": 1, "sku": "MEN-001", "unidades": 1, "precio_unitario": "24.90"}]})


def test_dos_altas_a_la_vez_del_mismo_pedido_no_pisan_lo_que_el_chat_hizo_entre_medias(bd_url):
    """La segunda alta no vio el pedido (aún no existía) y espera al INSERT de la primera; si
    entre medias el cliente lo canceló, no lo pisa: da el 409 de un pedido que ya existe."""
    pedido = "P-20261123-0001"
    resultado = {}
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as a, psycopg.connect(bd_url, **KWARGS_CONEXION) as b:
        with a.transaction(), a.cursor() as cur_a:
            assert aplicar_pedido(cur_a, "talavera", pedido, _cuerpo("pendiente")).resultado == "creado"

            def segunda():
                with b.transaction(), b.cursor() as cur_b:
                    resultado["b"] = capturar(lambda: aplicar_pedido(cur_b, "talavera", pedido, _cuerpo("enviado")))

            hilo = threading.Thread(target=segunda)
            hilo.start()
            limite = time.monotonic() + 10
            while not a.execute("SELECT count(*) AS n FROM pg_locks WHERE pid = %(pid)s AND NOT granted",
                                {"pid": b.info.backend_pid}).fetchone()["n"]:
                assert time.monotonic() < limite, "la segunda alta no llegó a esperar a la primera"
                time.sleep(0.01)
            # Lo que escribe el chat al cancelar, confirmado junto con el alta.
            a.execute(cancelaciones.INSERT_CANCELACION_SQL, {
                "clave": "hilo:c", "thread_id": "hilo", "tool_call_id": "c", "pedido": pedido,
                "cliente_id": "C-0001", "tienda": "talavera", "importe": "24.90", "motivo": "ya no lo quiero",
                "aprobado_por": None, "trace_id": None})
            a.execute(cancelaciones.MARCAR_CANCELADO_SQL, {"pedido": pedido})
        hilo.join(10)
    assert isinstance(resultado["b"], RegistroRechazado), resultado["b"]
    assert "canceló el pedido por el chat" in str(resultado["b"])
    assert consultar(bd_url, "SELECT estado, enviado_en FROM pedidos WHERE id = %(p)s", {"p": pedido}) == [
        {"estado": "cancelado", "enviado_en": None}]
