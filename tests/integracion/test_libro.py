"""El libro de compensaciones: unidades por línea, reglas en la base y elegibilidad.

Cada unidad se compensa una vez como mucho (reembolsada, del todo o en parte, o
cambiada). Las pruebas lo miran por las herramientas, por la base directamente (la
clave primaria y el disparador rechazan lo que se cuele) y con dos operaciones a la vez.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agente.bd.pool import KWARGS_CONEXION
from caja.asignacion import LineaPedida, UnidadLibre, asignar, normalizar_lineas
from caja.pasarela import PasarelaSimulada
from herramientas.pedidos import consultar_pedido
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio, ImporteNoValido
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.fabricas import consultar, crear_pedido, en_carrera, uno

D = Decimal
ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
DAVID = ContextoCliente(cliente_id="C-0004", tienda="madrid-centro", nombre="David")
JORGE = ContextoCliente(cliente_id="C-0010", tienda="madrid-centro", nombre="Jorge")
FERNANDO = ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando")
CAFETERA = "P-20260917-0041"  # C-0001, una CAF-001 de 120,00, entregado hace 4 días
SIN_ENTREGAR = "P-20260925-0150"  # C-0004, enviado
CANCELADO = "P-20260920-0031"  # C-0010, cancelado
DOS_LINEAS = "P-20260911-0022"  # C-0006: 1 MEN-002 (19,90) y 2 TEX-005 (12,00)


def devolver(pool, *, contexto=ANA, pedido=CAFETERA, importe="120.00", llamada="r1", hilo="h",
             lineas=None, pasarela=None, **extra):
    return reembolsar(pool, contexto=contexto, thread_id=hilo, tool_call_id=llamada,
                      pedido=pedido, importe=importe, motivo="no funciona", lineas=lineas,
                      pasarela=pasarela or PasarelaSimulada(pool=pool), **extra)


def cambiar(pool, *, contexto=ANA, pedido=CAFETERA, original="CAF-001", nuevo="CAF-003",
            llamada="s1", hilo="h", pasarela=None):
    return sustituir(pool, contexto=contexto, thread_id=hilo, tool_call_id=llamada, pedido=pedido,
                     sku_original=original, sku_nuevo=nuevo,
                     pasarela=pasarela or PasarelaSimulada(pool=pool))


def libro(bd_url, pedido):
    return consultar(bd_url, "SELECT linea, unidad, importe, reembolso_id IS NOT NULL AS reembolso "
                             "FROM compensaciones_unidad WHERE pedido_id = %(p)s ORDER BY 1, 2",
                     {"p": pedido})


def huella(bd_url):
    """Todo lo que una operación rechazada no debe tocar."""
    return consultar(bd_url, """
        SELECT (SELECT count(*) FROM reembolsos) r, (SELECT count(*) FROM sustituciones) s,
               (SELECT count(*) FROM cobros) c, (SELECT count(*) FROM compensaciones_unidad) u,
               (SELECT count(*) FROM pasarela_movimientos) m, (SELECT sum(unidades) FROM stock) st
    """)[0]


# --- Asignación determinista (función pura) ---------------------------------------------


def unidades(*lineas):
    """``unidades((1, 2, "24.90"), ...)``: línea, número de unidades libres, precio."""
    return [UnidadLibre(linea=n, unidad=u, precio=D(p)) for n, k, p in lineas for u in range(1, k + 1)]


def test_sin_lineas_llena_unidades_en_orden_y_solo_las_que_hacen_falta():
    libres = unidades((1, 2, "24.90"), (2, 1, "10.00"))
    asignacion = asignar(libres, D("30.00"), None, pedido="P", lineas_del_pedido=[1, 2])
    assert [(u.linea, u.unidad, parte) for u, parte in asignacion] == [
        (1, 1, D("24.90")), (1, 2, D("5.10"))]


def test_con_unidades_exactas_se_ocupan_todas_aunque_el_importe_no_las_llene():
    libres = unidades((1, 3, "10.00"))
    asignacion = asignar(libres, D("5.00"), [LineaPedida(1, 2)], pedido="P", lineas_del_pedido=[1])
    assert [(u.unidad, parte) for u, parte in asignacion] == [(1, D("5.00")), (2, D("0.00"))]


def test_lo_que_no_cabe_dice_el_maximo_y_las_lineas_ajenas_se_nombran():
    libres = unidades((1, 1, "10.00"), (2, 1, "5.00"))
    with pytest.raises(ImporteNoValido) as error:
        asignar(libres, D("6.00"), [LineaPedida(2)], pedido="P", lineas_del_pedido=[1, 2])
    assert error.value.datos["maximo"] == "5.00"
    with pytest.raises(ErrorDominio, match="no tiene la línea 3; sus líneas son 1, 2"):
        asignar(libres, D("1.00"), [LineaPedida(3)], pedido="P", lineas_del_pedido=[1, 2])
    with pytest.raises(ErrorDominio, match="le quedan 1 unidades"):
        asignar(libres, D("1.00"), [LineaPedida(1, 2)], pedido="P", lineas_del_pedido=[1, 2])


def test_normalizar_lineas_acepta_numeros_y_objetos_y_une_repetidas():
    assert normalizar_lineas(None) is None and normalizar_lineas([]) is None
    assert normalizar_lineas([2, {"linea": 1, "unidades": 1}, {"linea": 1, "unidades": 2}]) == [
        LineaPedida(1, 3), LineaPedida(2)]
    assert normalizar_lineas([{"linea": 1, "unidades": 1}, 1]) == [LineaPedida(1)]
    with pytest.raises(ErrorDominio):
        normalizar_lineas([{"linea": 0}])
    with pytest.raises(ErrorDominio):
        normalizar_lineas([True])


@settings(max_examples=200, deadline=None)
@given(
    lineas=st.lists(st.tuples(st.integers(1, 3), st.integers(0, 5000)), min_size=1, max_size=4),
    centimos=st.integers(1, 30000),
)
def test_propiedad_la_asignacion_suma_el_importe_sin_pasar_de_ningun_precio(lineas, centimos):
    libres = unidades(*[(n, k, D(c) / 100) for n, (k, c) in enumerate(lineas, start=1)])
    importe = D(centimos) / 100
    maximo = sum((u.precio for u in libres), D("0"))
    if importe > maximo:
        with pytest.raises(ImporteNoValido):
            asignar(libres, importe, None, pedido="P", lineas_del_pedido=range(1, len(lineas) + 1))
        return
    asignacion = asignar(libres, importe, None, pedido="P", lineas_del_pedido=range(1, len(lineas) + 1))
    assert sum((parte for _, parte in asignacion), D("0")) == importe
    assert all(D("0") < parte <= u.precio for u, parte in asignacion)
    claves = [(u.linea, u.unidad) for u, _ in asignacion]
    assert len(set(claves)) == len(claves) and claves == sorted(claves)
    # Solo la última unidad puede quedar a medias: las demás se llenan.
    assert all(parte == u.precio for u, parte in asignacion[:-1])


# --- Por las herramientas -----------------------------------------------------------------


def test_reembolso_completo_y_despues_cambio_de_la_misma_cafetera_se_rechaza(pool, bd_url):
    devolver(pool)
    antes = huella(bd_url)
    with pytest.raises(ErrorDominio, match="ya se reembolsaron o se cambiaron"):
        cambiar(pool, nuevo="CAF-004")
    assert huella(bd_url) == antes


def test_cambio_y_despues_reembolso_de_la_misma_unidad_se_rechaza(pool, bd_url):
    cambiar(pool)
    antes = huella(bd_url)
    with pytest.raises(ImporteNoValido, match=r"supera lo reembolsable del pedido \(0,00 EUR\)"):
        devolver(pool, llamada="r2")
    assert huella(bd_url) == antes
    datos = consultar_pedido(pool, contexto=ANA, pedido=CAFETERA)
    assert (datos["reembolsable"], datos["lineas"][0]["unidades_cambiadas"]) == ("0.00", 1)


def test_el_encargado_edita_120_a_90_y_la_unidad_queda_consumida(pool, bd_url):
    devolver(pool, importe="90.00", aprobado_por="enc-talavera")
    assert [dict(f) for f in libro(bd_url, CAFETERA)] == [
        {"linea": 1, "unidad": 1, "importe": D("90.00"), "reembolso": True}]
    with pytest.raises(ImporteNoValido):
        devolver(pool, importe="30.00", llamada="r2")


def test_reembolso_por_lineas_y_unidades_ocupa_solo_esas(pool, bd_url):
    resultado = devolver(pool, contexto=FERNANDO, pedido=DOS_LINEAS, importe="12.00",
                         lineas=[{"linea": 2, "unidades": 1}])
    assert resultado["unidades"] == [{"linea": 2, "unidades": 1}]
    datos = consultar_pedido(pool, contexto=FERNANDO, pedido=DOS_LINEAS)
    linea1, linea2 = datos["lineas"]
    assert (linea1["unidades_libres"], linea1["reembolsable"]) == (1, "19.90")
    assert (linea2["unidades"], linea2["unidades_reembolsadas"], linea2["unidades_libres"],
            linea2["reembolsado"], linea2["reembolsable"]) == (2, 1, 1, "12.00", "12.00")
    assert (datos["importe"], datos["reembolsado"], datos["reembolsable"]) == ("43.90", "12.00", "31.90")
    # La misma línea no puede dar dos unidades más: le queda una.
    with pytest.raises(ErrorDominio, match="le quedan 1 unidades"):
        devolver(pool, contexto=FERNANDO, pedido=DOS_LINEAS, importe="5.00", llamada="r2",
                 lineas=[{"linea": 2, "unidades": 2}])


def test_consultar_pedido_muestra_por_linea_reembolsado_cambiado_y_lo_que_queda(pool, bd_url):
    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 2), ("MEN-001", 1)])
    cambiar(pool, pedido=pedido)
    devolver(pool, pedido=pedido, importe="10.00", llamada="r2", lineas=[2])
    datos = consultar_pedido(pool, contexto=ANA, pedido=pedido)
    cafeteras, sarten = datos["lineas"]
    assert (cafeteras["unidades"], cafeteras["unidades_cambiadas"], cafeteras["unidades_libres"],
            cafeteras["reembolsable"]) == (2, 1, 1, "120.00")
    assert (sarten["reembolsado"], sarten["unidades_reembolsadas"], sarten["reembolsable"]) == (
        "10.00", 1, "0.00")
    assert (datos["importe"], datos["reembolsado"], datos["reembolsable"]) == ("264.90", "10.00", "120.00")


@pytest.mark.parametrize(
    ("contexto", "pedido", "motivo"),
    [(DAVID, SIN_ENTREGAR, r"aún no se ha entregado \(estado: enviado\)"),
     (JORGE, CANCELADO, "está cancelado")],
    ids=["sin_entregar", "cancelado"],
)
def test_cambio_de_un_pedido_sin_entregar_o_cancelado_se_rechaza_sin_escribir(
        pool, bd_url, contexto, pedido, motivo):
    original = uno(bd_url, "SELECT sku FROM lineas_pedido WHERE pedido_id = %(p)s", {"p": pedido})
    nuevo = uno(bd_url, """SELECT p.sku FROM productos p JOIN productos o ON o.categoria = p.categoria
                           WHERE o.sku = %(s)s AND p.sku <> o.sku ORDER BY p.sku LIMIT 1""",
                {"s": original})
    antes = huella(bd_url)
    with pytest.raises(ErrorDominio, match=motivo):
        cambiar(pool, contexto=contexto, pedido=pedido, original=original, nuevo=nuevo)
    assert huella(bd_url) == antes


def test_la_elegibilidad_se_lee_de_una_sola_vista(conexion, pool):
    hechos = {f["pedido_id"]: f for f in conexion.execute(
        "SELECT * FROM elegibilidad_pedidos WHERE pedido_id = ANY(%s)",
        ([CAFETERA, SIN_ENTREGAR, CANCELADO, "P-20260801-0007"],)).fetchall()}
    assert (hechos[CAFETERA]["entregado"], hechos[CAFETERA]["dias_desde_entrega"],
            hechos[CAFETERA]["ventana_dias"], hechos[CAFETERA]["dentro_de_ventana"],
            hechos[CAFETERA]["compensado"], hechos[CAFETERA]["reembolsable"]) == (
        True, 4, 30, True, False, D("120.00"))
    assert (hechos["P-20260801-0007"]["dias_desde_entrega"], hechos["P-20260801-0007"]["dentro_de_ventana"]) == (45, False)
    assert (hechos[SIN_ENTREGAR]["entregado"], hechos[SIN_ENTREGAR]["dentro_de_ventana"]) == (False, False)
    assert hechos[CANCELADO]["estado"] == "cancelado"
    conexion.execute("UPDATE politicas_tienda SET dias_desde_entrega = 3 WHERE tienda = 'talavera'")
    devolver(pool, importe="1.00")
    ahora = conexion.execute("SELECT * FROM elegibilidad_pedidos WHERE pedido_id = %s", (CAFETERA,)).fetchone()
    assert (ahora["dentro_de_ventana"], ahora["compensado"], ahora["reembolsos"], ahora["reembolsable"]) == (
        False, True, 1, D("0.00"))


# --- La base lo hace cumplir, no solo Python ---------------------------------------------

INSERT_UNIDAD = """
INSERT INTO compensaciones_unidad (pedido_id, linea, unidad, reembolso_id, sustitucion_id, importe)
VALUES (%(p)s, %(l)s, %(u)s, %(r)s, %(s)s, %(i)s)
"""


def test_la_base_rechaza_compensar_dos_veces_la_misma_unidad(pool, bd_url, conexion):
    devolver(pool, importe="50.00")
    reembolso_id = uno(bd_url, "SELECT id FROM reembolsos")
    with pytest.raises(psycopg.errors.UniqueViolation):
        conexion.execute(INSERT_UNIDAD, {"p": CAFETERA, "l": 1, "u": 1, "r": reembolso_id, "s": None,
                                         "i": D("10.00")})


@pytest.mark.parametrize(
    ("fila", "texto"),
    [({"u": 1, "i": D("120.01")}, "que costó 120.00"),
     ({"u": 2, "i": D("1.00")}, "no existe la unidad 2")],
    ids=["por_encima_del_precio", "unidad_inexistente"],
)
def test_la_base_rechaza_pasar_del_precio_o_de_las_unidades(pool, bd_url, conexion, fila, texto):
    devolver(pool, pedido="P-20260919-0055", importe="14.90")  # un reembolso al que apuntar
    reembolso_id = uno(bd_url, "SELECT id FROM reembolsos")
    with pytest.raises(psycopg.errors.CheckViolation, match=texto):
        conexion.execute(INSERT_UNIDAD, {"p": CAFETERA, "l": 1, "r": reembolso_id, "s": None, **fila})


def test_la_base_exige_un_solo_dueno_por_unidad(conexion):
    with pytest.raises(psycopg.errors.CheckViolation):
        conexion.execute(INSERT_UNIDAD, {"p": CAFETERA, "l": 1, "u": 1, "r": None, "s": None, "i": 1})


def test_dos_transacciones_a_la_vez_no_ocupan_la_misma_unidad(pool, bd_url):
    # Sin el candado del pedido (directo a la tabla): la clave primaria para a la segunda.
    devolver(pool, pedido="P-20260919-0055", importe="14.90")
    reembolso_id = uno(bd_url, "SELECT id FROM reembolsos")
    fila = {"p": CAFETERA, "l": 1, "u": 1, "r": reembolso_id, "s": None, "i": D("1.00")}
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as a, psycopg.connect(bd_url, **KWARGS_CONEXION) as b:
        a.execute("BEGIN")
        a.execute(INSERT_UNIDAD, fila)
        resultado = {}

        def segunda():
            try:
                b.execute("BEGIN")
                b.execute(INSERT_UNIDAD, fila)
                resultado["b"] = "insertada"
            except psycopg.Error as exc:
                resultado["b"] = type(exc)
                b.execute("ROLLBACK")

        hilo = threading.Thread(target=segunda)
        hilo.start()
        hilo.join(timeout=1.0)
        assert hilo.is_alive()  # espera a que la primera decida
        a.execute("COMMIT")
        hilo.join(timeout=30)
    assert resultado["b"] is psycopg.errors.UniqueViolation


def test_un_reembolso_y_un_cambio_a_la_vez_de_la_unica_unidad_solo_pasa_uno(pool, bd_url):
    resultados = en_carrera(
        pool, bd_url, "SELECT 1 FROM pedidos WHERE id = %s FOR UPDATE", (CAFETERA,),
        {"reembolso": lambda: devolver(pool), "cambio": lambda: cambiar(pool)},
    )
    ganadores = [n for n, r in resultados.items() if isinstance(r, dict)]
    perdedores = [r for r in resultados.values() if isinstance(r, Exception)]
    assert len(ganadores) == 1 and len(perdedores) == 1, resultados
    assert isinstance(perdedores[0], ErrorDominio) and "una sola vez" in perdedores[0].mensaje
    assert uno(bd_url, "SELECT count(*) FROM compensaciones_unidad") == 1


def test_el_historial_del_pedido_para_la_tarjeta_del_encargado(pool, bd_url, conexion):
    from caja.libro import historial

    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 2), ("MEN-001", 1)])
    cambiar(pool, pedido=pedido, nuevo="CAF-002")
    devolver(pool, pedido=pedido, importe="24.90", llamada="r2", lineas=[2])
    filas = historial(conexion, pedido)
    assert [(f["tipo"], f["concepto"], f["importe"], f["lineas"], f["cambio"]) for f in filas] == [
        ("cambio", "CAF-001 -> CAF-002", D("-90.10"), "1", None),
        ("reembolso", "diferencia", D("90.10"), None, "SU-000001"),
        ("reembolso", "devolucion", D("24.90"), "2", None),
    ]


def test_sin_fila_de_politica_la_ventana_y_el_minimo_son_los_defectos(conexion, pool, bd_url):
    # La vista y sustituir no pueden leer politicas.DEFECTOS (otra capa): escriben el mismo
    # valor que el DEFAULT de la columna, y esta prueba los ata a DEFECTOS.
    from politicas import DEFECTOS

    conexion.execute("DELETE FROM politicas_tienda WHERE tienda = 'talavera'")
    hechos = conexion.execute("SELECT ventana_dias FROM elegibilidad_pedidos WHERE pedido_id = %s",
                              (CAFETERA,)).fetchone()
    assert hechos["ventana_dias"] == DEFECTOS["dias_desde_entrega"]
    assert DEFECTOS["diferencia_minima_liquidable"] == D("0.00")
    resultado = cambiar(pool, nuevo="CAF-002")  # sin fila: se liquida siempre
    assert resultado["liquidacion"]["tipo"] == "reembolso"
