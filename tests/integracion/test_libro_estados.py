"""Prueba con estados (Hypothesis): secuencias al azar de reembolsos, cambios, decisiones del
encargado, caídas de la pasarela y del proceso, y pasadas de la cola de movimientos.

Las herramientas se llaman directamente (``reembolsar``, ``sustituir``) contra una base
real nueva por ejemplo (clonada de la plantilla de demo, como ``conftest``), sobre
unos pocos pedidos con varias líneas y unidades. Una decisión del encargado es: aprobar
(la llamada tal cual, firmada), editar (la misma llamada con un importe menor, firmada)
o rechazar (no se llama nada). Una caída del proceso se simula con una excepción que
nadie captura (``Caida``, como un SIGKILL) antes de la pasarela o después de que mueva el
dinero y antes de marcarlo.

Después de cada paso, la auditoría del libro no encuentra nada salvo movimientos
pendientes (o marcados) mientras la pasarela está caída, el stock de cada producto solo
cambia por los cambios hechos (ni los pendientes de cobro ni los anulados lo mueven) y
ningún pedido devuelve más de lo pagado. Al final, con la pasarela levantada y la bandeja
completada, no queda nada pendiente y los movimientos de la pasarela son los del libro.

``AGENTE_HYPOTHESIS_LARGO=1`` alarga la prueba (noche o ``make bench``).
"""

from __future__ import annotations

import itertools
import os
import uuid
from decimal import Decimal

import psycopg
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from agente.bd.pool import KWARGS_CONEXION, abrir_pool
from agente.servicio.auditoria.auditoria_libro import auditar_libro, total_hallazgos
from caja.movimientos import completar_pendientes
from caja.pasarela import PasarelaSimulada
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio, ErrorPasarela
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.bases import borrar_base, crear_base
from tests.apoyo.fabricas import crear_pedido

D = Decimal
LARGO = os.environ.get("AGENTE_HYPOTHESIS_LARGO") == "1"
AJUSTES = settings(
    max_examples=150 if LARGO else 15,
    stateful_step_count=50 if LARGO else 20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

CLIENTES = {
    "C-0001": ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana"),
    "C-0006": ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando"),
    "C-0003": ContextoCliente(cliente_id="C-0003", tienda="madrid-centro", nombre="Carmen"),
    "C-0004": ContextoCliente(cliente_id="C-0004", tienda="madrid-centro", nombre="David"),
}
# (cliente, líneas, días desde la entrega; None = sin entregar)
PEDIDOS = [
    ("C-0001", [("CAF-001", 2), ("MEN-001", 2)], 4),
    ("C-0006", [("TEX-005", 3), ("ILU-001", 1)], 10),
    ("C-0003", [("ELE-002", 1), ("MEN-003", 2)], 45),
    ("C-0004", [("ILU-003", 1)], None),
]
CATEGORIA = {
    "CAF-001": ["CAF-002", "CAF-003", "CAF-004", "CAF-005"],
    "MEN-001": ["MEN-002", "MEN-003", "MEN-004"],
    "TEX-005": ["TEX-001", "TEX-002"],
    "ILU-001": ["ILU-002", "ILU-003", "ILU-004"],
    "ELE-002": ["ELE-001", "ELE-003"],
    "MEN-003": ["MEN-001", "MEN-004"],
    "ILU-003": ["ILU-001", "ILU-002"],
}
# (tienda, sku) que la prueba agota o repone: sobre todo los más caros (un cobro pendiente
# que al confirmarse ya no tiene stock anula el cambio y devuelve el cobro).
AGOTABLES = [("talavera", "CAF-004"), ("talavera", "TEX-001"), ("talavera", "TEX-002"),
             ("madrid-centro", "ELE-001"), ("madrid-centro", "MEN-004"), ("talavera", "CAF-002")]


class Caida(BaseException):
    """El proceso muere aquí: ni la herramienta ni la bandeja la capturan."""


class PasarelaDePrueba:
    """La pasarela simulada con un interruptor de caída y una muerte del proceso programada."""

    def __init__(self, interna: PasarelaSimulada) -> None:
        self.interna = interna
        self.caida = False
        self.morir: str | None = None  # "antes" | "despues": una vez

    def _mover(self, metodo: str, referencia, importe):
        if self.morir == "antes":
            self.morir = None
            raise Caida
        if self.caida:
            raise ErrorPasarela("la pasarela de pagos no está disponible (caída de prueba)")
        movimiento = getattr(self.interna, metodo)(referencia, importe)
        if self.morir == "despues":
            self.morir = None
            raise Caida
        return movimiento

    def emitir_reembolso(self, referencia, importe):
        return self._mover("emitir_reembolso", referencia, importe)

    def cobrar(self, referencia, importe):
        return self._mover("cobrar", referencia, importe)


HUELLA_SQL = """
SELECT (SELECT count(*) FROM reembolsos) AS reembolsos,
       (SELECT count(*) FROM sustituciones) AS sustituciones,
       (SELECT count(*) FROM cobros) AS cobros,
       (SELECT count(*) FROM compensaciones_unidad) AS unidades,
       (SELECT count(*) FROM pasarela_movimientos) AS movimientos,
       (SELECT sum(unidades) FROM stock) AS stock
"""

DEVUELTO_POR_PEDIDO_SQL = """
SELECT p.id, p.importe,
       coalesce((SELECT sum(r.importe) FROM reembolsos r
                  WHERE r.pedido_id = p.id AND r.concepto <> 'anulacion'), 0) AS devuelto
FROM pedidos p WHERE p.id = ANY(%(pedidos)s)
"""

PENDIENTES_SQL = "SELECT count(*) AS n FROM libro_movimientos WHERE NOT completado"

LIBRO_CONTRA_PASARELA_SQL = """
SELECT (SELECT count(*) FROM libro_movimientos WHERE completado) AS completados,
       (SELECT count(*) FROM pasarela_movimientos) AS movimientos,
       (SELECT coalesce(sum(importe), 0) FROM libro_movimientos WHERE completado AND tipo = 'reembolso')
           AS reembolsado,
       (SELECT coalesce(sum(importe), 0) FROM pasarela_movimientos WHERE tipo = 'reembolso')
           AS pasarela_reembolsado,
       (SELECT coalesce(sum(importe), 0) FROM libro_movimientos WHERE completado AND tipo = 'cobro')
           AS cobrado,
       (SELECT coalesce(sum(importe), 0) FROM pasarela_movimientos WHERE tipo = 'cobro')
           AS pasarela_cobrado
"""

# El stock de cada producto menos lo que han movido los cambios hechos: solo cambia cuando
# la prueba toca el stock a mano.
STOCK_BASE_SQL = """
SELECT st.tienda, st.sku,
       st.unidades
       - (SELECT count(*) FROM sustituciones s
           WHERE s.estado = 'hecha' AND s.tienda = st.tienda AND s.sku_original = st.sku)
       + (SELECT count(*) FROM sustituciones s
           WHERE s.estado = 'hecha' AND s.tienda = st.tienda AND s.sku_nuevo = st.sku) AS base
FROM stock st
"""

PENDIENTES_DE_COBRO_SQL = """
SELECT tienda, sku_nuevo FROM sustituciones WHERE estado = 'pendiente_cobro' ORDER BY id
"""

VENCER_SQL = """
WITH r AS (UPDATE reembolsos SET proximo_intento = now() WHERE estado = 'pendiente')
UPDATE cobros SET proximo_intento = now() WHERE estado = 'pendiente'
"""


class MaquinaLibro(RuleBasedStateMachine):
    url_admin: str = ""
    plantilla: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.nombre = f"t_{uuid.uuid4().hex[:12]}"
        self.url = crear_base(self.url_admin, self.nombre, plantilla=self.plantilla)
        self.pool = abrir_pool(self.url, max_size=4)
        self.pasarela = PasarelaDePrueba(PasarelaSimulada(pool=self.pool))
        self.conexion = psycopg.connect(self.url, **KWARGS_CONEXION)
        self.llamadas = itertools.count(1)
        self.hechas: list[dict] = []  # llamadas ya lanzadas, para repetirlas
        self.pedidos: list[tuple[str, str, list[tuple[str, int]]]] = []
        self.stock_base: dict[tuple[str, str], int] = {}

    @initialize()
    def crear_pedidos(self) -> None:
        for cliente, lineas, dias in PEDIDOS:
            pedido = crear_pedido(self.url, cliente, lineas, dias_entrega=dias)
            self.pedidos.append((pedido, cliente, lineas))
        self.stock_base = self._stock_base()

    # -- ayudantes -------------------------------------------------------------------------

    def _stock_base(self) -> dict[tuple[str, str], int]:
        return {(f["tienda"], f["sku"]): f["base"] for f in self.conexion.execute(STOCK_BASE_SQL)}

    def _huella(self) -> dict:
        return self.conexion.execute(HUELLA_SQL).fetchone()

    def _llamar(self, llamada: dict) -> None:
        """Ejecuta una llamada a una herramienta como lo haría el agente (con su clave)."""
        antes = self._huella()
        argumentos = {k: v for k, v in llamada.items() if k != "herramienta"}
        argumentos["contexto"] = CLIENTES[argumentos["contexto"]]
        funcion = reembolsar if llamada["herramienta"] == "reembolsar" else sustituir
        herramienta = llamada["herramienta"]
        try:
            resultado = funcion(self.pool, pasarela=self.pasarela, **argumentos)
        except Caida:
            event(f"{herramienta}: el proceso muere")  # lo apuntado queda pendiente
        except ErrorPasarela:
            event(f"{herramienta}: pasarela caída, queda pendiente")
        except ErrorDominio as exc:
            # Un rechazo no deja nada, ni dinero ni stock ni unidades.
            event(f"{herramienta}: rechazada ({type(exc).__name__})")
            assert self._huella() == antes
            return
        else:
            detalle = resultado.get("liquidacion", {}).get("tipo", "")
            event(f"{herramienta}: {resultado['estado']} {detalle}".strip())
        self.hechas.append(llamada)

    def _pedido(self, indice: int):
        return self.pedidos[indice % len(self.pedidos)]

    # -- reglas ----------------------------------------------------------------------------

    @rule(
        indice=st.integers(0, 3),
        centimos=st.one_of(st.integers(1, 6000), st.sampled_from([1200, 2490, 4000, 12000, 24000])),
        forma=st.sampled_from(["sin_lineas", "linea", "unidades"]),
        linea=st.integers(1, 2),
        unidades=st.integers(1, 3),
        decision=st.sampled_from(["sin_firma", "aprobar", "editar", "rechazar"]),
    )
    def pedir_reembolso(self, indice, centimos, forma, linea, unidades, decision):
        pedido, cliente, _ = self._pedido(indice)
        importe = D(centimos) / 100
        if decision == "rechazar":
            return  # el encargado rechaza: la herramienta no se llama (los invariantes siguen)
        if decision == "editar":
            importe = max(D("0.01"), (importe / 2).quantize(D("0.01")))
        lineas = {"sin_lineas": None, "linea": [linea],
                  "unidades": [{"linea": linea, "unidades": unidades}]}[forma]
        self._llamar({
            "herramienta": "reembolsar", "contexto": cliente, "thread_id": f"hilo-{pedido}",
            "tool_call_id": f"r{next(self.llamadas)}", "pedido": pedido, "importe": importe,
            "motivo": "prueba", "lineas": lineas,
            "aprobado_por": None if decision == "sin_firma" else "encargado",
        })

    @rule(indice=st.integers(0, 3), linea=st.integers(0, 1), eleccion=st.integers(0, 3),
          firmado=st.booleans())
    def pedir_cambio(self, indice, linea, eleccion, firmado):
        pedido, cliente, lineas = self._pedido(indice)
        original = lineas[linea % len(lineas)][0]
        alternativas = CATEGORIA[original]
        self._llamar({
            "herramienta": "sustituir", "contexto": cliente, "thread_id": f"hilo-{pedido}",
            "tool_call_id": f"s{next(self.llamadas)}", "pedido": pedido,
            "sku_original": original, "sku_nuevo": alternativas[eleccion % len(alternativas)],
            "aprobado_por": "encargado" if firmado else None,
        })

    @precondition(lambda self: self.hechas)
    @rule(cual=st.integers(0, 1000))
    def repetir_una_llamada(self, cual):
        # Un reintento (middleware, conciliador): misma clave, mismos argumentos.
        antes = self._huella()
        llamada = self.hechas[cual % len(self.hechas)]
        self._llamar(llamada)
        despues = self._huella()
        assert (despues["reembolsos"] - antes["reembolsos"]) <= 1  # solo una anulación, si acaso
        assert despues["sustituciones"] == antes["sustituciones"]
        assert despues["unidades"] <= antes["unidades"]

    @rule(caida=st.booleans())
    def cambiar_la_pasarela(self, caida):
        self.pasarela.caida = caida

    @rule(momento=st.sampled_from(["antes", "despues"]))
    def el_proceso_morira(self, momento):
        self.pasarela.morir = momento

    @rule(producto=st.sampled_from(AGOTABLES), unidades=st.sampled_from([0, 0, 1, 5]))
    def cambiar_el_stock(self, producto, unidades):
        tienda, sku = producto
        self.conexion.execute("UPDATE stock SET unidades = %s WHERE tienda = %s AND sku = %s",
                              (unidades, tienda, sku))
        self.stock_base[(tienda, sku)] = self._stock_base()[(tienda, sku)]

    @rule(cual=st.integers(0, 100))
    def se_agota_lo_que_espera_cobro(self, cual):
        # El producto de un cambio pendiente de cobro se agota: al confirmar el cobro, el
        # cambio se anula y el cobro se devuelve.
        pendientes = self.conexion.execute(PENDIENTES_DE_COBRO_SQL).fetchall()
        if not pendientes:
            return
        fila = pendientes[cual % len(pendientes)]
        self.conexion.execute("UPDATE stock SET unidades = 0 WHERE tienda = %s AND sku = %s",
                              (fila["tienda"], fila["sku_nuevo"]))
        self.stock_base[(fila["tienda"], fila["sku_nuevo"])] = self._stock_base()[
            (fila["tienda"], fila["sku_nuevo"])]
        event("se agota un producto pendiente de cobro")

    @rule()
    def pasa_el_tiempo(self):
        self.conexion.execute(VENCER_SQL)

    @rule(solo_vencidos=st.booleans())
    def pasada_de_la_bandeja(self, solo_vencidos):
        try:
            hecho = completar_pendientes(self.pool, self.pasarela, solo_vencidos=solo_vencidos,
                                         max_intentos=3)
        except Caida:
            event("bandeja: el servidor muere a mitad")
            return
        for confirmacion in hecho.completados:
            event(f"bandeja: completa {confirmacion.movimiento.tipo} "
                  f"{confirmacion.movimiento.concepto} {confirmacion.estado_sustitucion or ''}".strip())
        if hecho.marcados:
            event("bandeja: marca para una persona")

    # -- invariantes -----------------------------------------------------------------------

    @invariant()
    def el_libro_cuadra(self):
        informe = auditar_libro(self.conexion, pendientes_mas_de_segundos=0)
        for comprobacion in ("unidades", "pasarela", "diferencias"):
            assert informe[comprobacion] == [], (comprobacion, informe[comprobacion])

    @invariant()
    def el_stock_solo_lo_mueven_los_cambios_hechos(self):
        if self.pedidos:
            assert self._stock_base() == self.stock_base

    @invariant()
    def ningun_pedido_devuelve_mas_de_lo_pagado(self):
        filas = self.conexion.execute(
            DEVUELTO_POR_PEDIDO_SQL, {"pedidos": [p for p, _, _ in self.pedidos]}
        ).fetchall()
        for fila in filas:
            assert fila["devuelto"] <= fila["importe"], fila

    def teardown(self) -> None:
        try:
            if self.pedidos:
                self._cerrar_las_cuentas()
        finally:
            self.conexion.close()
            self.pool.close()
            borrar_base(self.url_admin, self.nombre)

    def _cerrar_las_cuentas(self) -> None:
        self.pasarela.caida = False
        self.pasarela.morir = None
        for _ in range(4):  # una anulación crea un reembolso nuevo: otra vuelta lo completa
            completar_pendientes(self.pool, self.pasarela, solo_vencidos=False)
        assert self.conexion.execute(PENDIENTES_SQL).fetchone()["n"] == 0
        informe = auditar_libro(self.conexion, pendientes_mas_de_segundos=0)
        assert total_hallazgos(informe) == 0, informe
        cuentas = self.conexion.execute(LIBRO_CONTRA_PASARELA_SQL).fetchone()
        assert cuentas["completados"] == cuentas["movimientos"], cuentas
        assert cuentas["reembolsado"] == cuentas["pasarela_reembolsado"], cuentas
        assert cuentas["cobrado"] == cuentas["pasarela_cobrado"], cuentas


def test_el_libro_cuadra_en_cualquier_secuencia(url_admin, plantillas):
    maquina = type("MaquinaLibroDeEstaSesion", (MaquinaLibro,),
                   {"url_admin": url_admin, "plantilla": plantillas["demo"]})
    run_state_machine_as_test(maquina, settings=AJUSTES)

