"""Factorías de datos y atajos para las pruebas del agente y del servicio."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from decimal import Decimal

import psycopg

from agente.bd.pool import KWARGS_CONEXION
from nucleo.ajustes import Ajustes

PEDIDO_GRANDE = "P-20260917-0041"  # 120 EUR, C-0001, talavera
PEDIDO_PEQUENO = "P-20260920-0102"  # 24,90 EUR, C-0002, talavera


def ajustes_prueba(bd_url: str, **extra) -> Ajustes:
    return Ajustes(database_url=bd_url, langfuse_public_key=None, langfuse_secret_key=None, **extra)


class PasarelaContada:
    """Envuelve la pasarela real (simulada) y cuenta las llamadas: instrumenta la herramienta."""

    def __init__(self, interna):
        self.interna = interna
        self.llamadas: list[tuple[str, Decimal]] = []

    def emitir_reembolso(self, referencia, importe):
        self.llamadas.append((referencia, Decimal(str(importe))))
        return self.interna.emitir_reembolso(referencia, importe)

    def cobrar(self, referencia, importe):
        self.llamadas.append((referencia, Decimal(str(importe))))
        return self.interna.cobrar(referencia, importe)


class PasarelaAveriable:
    """La pasarela simulada con un interruptor: ``caida = True`` hace fallar toda llamada
    (``ErrorPasarela``) sin apuntar nada, como un proveedor caído; se puede volver a levantar."""

    def __init__(self, interna):
        self.interna = interna
        self.caida = False

    def _antes(self):
        if self.caida:
            from nucleo.errores import ErrorPasarela

            raise ErrorPasarela("la pasarela de pagos no está disponible (caída de prueba)")

    def emitir_reembolso(self, referencia, importe):
        self._antes()
        return self.interna.emitir_reembolso(referencia, importe)

    def cobrar(self, referencia, importe):
        self._antes()
        return self.interna.cobrar(referencia, importe)


class PasarelaRetenida:
    """Se queda dentro de la pasarela hasta que la prueba la suelta (``soltar.set()``): una
    ejecución sigue en curso todo lo que haga falta, sin depender de cuánto tarde nada."""

    def __init__(self, interna):
        import threading

        self.interna, self.dentro, self.soltar = interna, threading.Event(), threading.Event()

    def emitir_reembolso(self, referencia, importe):
        self.dentro.set()
        assert self.soltar.wait(60), "nadie soltó la pasarela"
        return self.interna.emitir_reembolso(referencia, importe)

    def cobrar(self, referencia, importe):
        self.dentro.set()
        assert self.soltar.wait(60), "nadie soltó la pasarela"
        return self.interna.cobrar(referencia, importe)


def consultar(bd_url: str, sql: str, params: dict | None = None) -> list[dict]:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        return c.execute(sql, params or {}).fetchall()


def uno(bd_url: str, sql: str, params: dict | None = None):
    filas = consultar(bd_url, sql, params)
    return next(iter(filas[0].values())) if filas else None


def conversacion(servicio, cliente_id: str, *textos: str):
    """Abre una conversación y envía los textos; devuelve (hilo, última respuesta)."""
    ctx = servicio.contexto_de_cliente(cliente_id)
    hilo = servicio.iniciar_conversacion(ctx)
    respuesta = None
    for texto in textos:
        respuesta = servicio.conversar(hilo, texto, ctx)
    return hilo, respuesta


_secuencia = iter(range(1, 10_000))

INSERT_PEDIDO_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, entregado_en, importe)
SELECT %(id)s, c.id, c.tienda, now() - make_interval(days => coalesce(%(dias)s::int, 0) + 3),
       CASE WHEN %(dias)s::int IS NULL THEN 'enviado' ELSE 'entregado' END,
       now() - make_interval(days => %(dias)s::int), %(importe)s
FROM clientes c WHERE c.id = %(cliente)s
"""
INSERT_LINEA_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
VALUES (%(pedido)s, %(linea)s, %(sku)s, %(unidades)s, %(precio)s)
"""
# El pvp de hoy en la tienda del cliente (sql/030); una base de antes de 030 (las pruebas
# de migraciones) solo tiene el precio común productos.pvp.
HAY_PRECIOS_TIENDA_SQL = "SELECT to_regclass('precios_tienda') IS NOT NULL AS hay"
PRECIOS_TIENDA_SQL = """
SELECT pt.sku, pt.pvp FROM precios_tienda pt JOIN clientes c ON c.tienda = pt.tienda
WHERE c.id = %(cliente)s AND pt.sku = ANY(%(skus)s)
"""
PRECIOS_ANTERIORES_SQL = "SELECT sku, pvp FROM productos WHERE sku = ANY(%(skus)s)"


def crear_pedido(bd_url: str, cliente_id: str, lineas: list[tuple[str, int]], *, dias_entrega: int | None = 4) -> str:
    """Un pedido nuevo del cliente con esas líneas (precio = pvp actual en su tienda). Devuelve su id."""
    pedido = f"P-20261101-{9000 + next(_secuencia):04d}"
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c, c.transaction():
        por_tienda = c.execute(HAY_PRECIOS_TIENDA_SQL).fetchone()["hay"]
        precios = {
            f["sku"]: f["pvp"]
            for f in c.execute(PRECIOS_TIENDA_SQL if por_tienda else PRECIOS_ANTERIORES_SQL,
                               {"cliente": cliente_id, "skus": [s for s, _ in lineas]})
        }
        importe = sum((precios[s] * u for s, u in lineas), Decimal("0"))
        c.execute(INSERT_PEDIDO_SQL, {"id": pedido, "cliente": cliente_id, "dias": dias_entrega, "importe": importe})
        for n, (sku, unidades) in enumerate(lineas, 1):
            c.execute(INSERT_LINEA_SQL, {"pedido": pedido, "linea": n, "sku": sku, "unidades": unidades,
                                         "precio": precios[sku]})
    return pedido


def capturar(funcion):
    """El resultado de ``funcion()`` o la excepción que lanzó (para comprobarla en el test)."""
    try:
        return funcion()
    except Exception as exc:  # noqa: BLE001 - se comprueba en el test
        return exc


def esperar_bloqueadas(pool, n: int, *, limite: float = 20.0) -> None:
    """Espera (sondeando) a que ``n`` sesiones de esta base estén esperando un candado."""
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        with pool.connection() as c:
            esperando = c.execute(
                "SELECT count(*) AS n FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()["n"]
        if esperando >= n:
            return
        time.sleep(0.02)
    raise AssertionError(f"no hay {n} sesiones esperando el candado")


def en_carrera(pool, bd_url: str, candado_sql: str, parametros: tuple,
               tareas: dict[str, Callable]) -> dict:
    """Compiten de verdad: retiene una fila (``candado_sql``, un ``SELECT ... FOR UPDATE``),
    lanza cada tarea en un hilo, espera a que todas esperen ese candado y lo suelta.

    Devuelve ``nombre -> resultado | excepción``.
    """
    resultados: dict = {}
    with psycopg.connect(bd_url, autocommit=True) as retenedor:
        retenedor.execute("BEGIN")
        retenedor.execute(candado_sql, parametros)
        hilos = [threading.Thread(target=lambda n=n, f=f: resultados.__setitem__(n, capturar(f)))
                 for n, f in tareas.items()]
        for h in hilos:
            h.start()
        try:
            esperar_bloqueadas(pool, len(tareas))
        finally:
            retenedor.execute("COMMIT")
            for h in hilos:
                h.join(timeout=60)
    return resultados
