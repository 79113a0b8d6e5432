"""Política por dentro: reglas por nombre, hechos, autoridad, versión y texto para el cliente."""

from __future__ import annotations

import logging
from dataclasses import replace
from decimal import Decimal

import pytest
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from agente.bd.pool import KWARGS_CONEXION
from caja.pasarela import PasarelaSimulada
from herramientas import REGISTRO, Herramienta, crear_herramientas
from nucleo.contexto import ContextoCliente
from nucleo.operaciones import OPERACIONES
from nucleo.puertos import FuentePolitica
from politicas import (
    DEFECTOS,
    REGLAS,
    Autoridad,
    DescripcionEncargado,
    PoliticaAprobacion,
    PoliticaTienda,
    Regla,
    leer_veredicto,
)
from politicas.defectos import parametros_defecto
from politicas.hechos import consulta_de_hechos
from politicas.reglas.base import Dictamen
from tests.apoyo.llamadas import invocar, peticion, runtime, runtime_grafo
from tests.apoyo.politica import (
    ANA,
    MOTIVO_120,
    REEMBOLSO_120,
    ejecutar_sql,
    nueva_politica,
    veredicto,
)

D = Decimal
TABLAS_DE_NEGOCIO = {"pedidos", "lineas_pedido", "productos", "precios_tienda", "devoluciones", "politicas_tienda"}


def _sin_crear(_dependencias):
    raise AssertionError("estas pruebas no construyen la herramienta")


@pytest.fixture
def politica(pool):
    return nueva_politica(pool)


def fila_evaluacion(pool, tool_call_id: str) -> dict:
    with pool.connection() as c:
        return c.execute(
            "SELECT version_politica, autoridad_importe, autoridad_firmas, autoridad_rol "
            "FROM evaluaciones_politica WHERE tool_call_id = %(id)s", {"id": tool_call_id}
        ).fetchone()


# --- la regla sale del registro, por su nombre -----------------------------------------


def test_cada_regla_del_registro_existe_en_politicas():
    nombradas = {r for r in REGISTRO.reglas().values() if r is not None}
    # Las de las operaciones con efecto declaradas, más la consulta al encargado.
    assert nombradas == {op.regla for op in OPERACIONES} | {"consulta"}
    assert {"reembolso", "sustitucion"} <= nombradas
    assert nombradas <= set(REGLAS)
    # Las herramientas sin decisiones figuran con None: la política no les pide firma.
    assert REGISTRO.reglas()["consultar_pedido"] is None


def test_la_regla_se_elige_por_su_nombre_no_por_el_de_la_herramienta(pool):
    politica = PoliticaAprobacion(pool=pool, reglas={"devolver_dinero": "reembolso"})
    v = veredicto(politica, "devolver_dinero", REEMBOLSO_120, ANA, id="d1")
    assert v.motivos == (MOTIVO_120,)
    assert v.umbrales["limite_reembolso"] == "60.00"
    # «reembolsar» no está en estas reglas: pide firma siempre, aunque el importe sea pequeño.
    pequeno = veredicto(politica, "reembolsar", {**REEMBOLSO_120, "importe": "5.00"}, ANA, id="d2")
    assert pequeno.requiere_encargado is True
    assert pequeno.motivos == ("herramienta sin regla de aprobación: reembolsar",)


def test_herramienta_con_firma_y_regla_inexistente_pide_firma(pool, caplog):
    registro = REGISTRO.con(
        Herramienta(nombre="borrar_cliente", crear=_sin_crear, decisiones=("approve", "reject"),
                    regla="borrado")
    )
    with caplog.at_level(logging.WARNING, logger="politicas.aprobacion"):
        politica = PoliticaAprobacion(pool=pool, reglas=registro.reglas())
    assert "borrado" in caplog.text
    assert politica.necesita_encargado(peticion("borrar_cliente", {}, ANA)) is True
    assert veredicto(politica, "borrar_cliente", {}, ANA).motivos == (
        "herramienta sin regla de aprobación: borrar_cliente",
    )


def test_herramienta_nueva_sin_decisiones_no_pide_firma_ni_toca_la_base(bd_url):
    registro = REGISTRO.con(Herramienta(nombre="consultar_horario", crear=_sin_crear))
    cerrado = ConnectionPool(bd_url, min_size=0, max_size=1, kwargs=KWARGS_CONEXION, open=False)
    politica = PoliticaAprobacion(pool=cerrado, reglas=registro.reglas())
    assert politica.necesita_encargado(peticion("consultar_horario", {}, ANA)) is False
    assert politica.necesita_encargado(peticion("consultar_horario", {}, None)) is False


def test_reglas_tiene_que_ser_un_mapping(pool):
    with pytest.raises(TypeError, match="Registro.reglas"):
        PoliticaAprobacion(pool=pool, reglas=["reembolsar"])


# --- las reglas en Python, sin base ------------------------------------------------------


def _hechos_reembolso(**cambios) -> dict:
    return {**DEFECTOS, "pedido_existe": True, "estado_pedido": "entregado",
            "entregado_en": "2026-09-20", "dias_entregado": 4, "devoluciones_recientes": 0,
            **cambios}


@pytest.mark.parametrize(
    ("cambios", "motivos"),
    [
        ({}, ()),
        ({"devoluciones_recientes": 1, "devoluciones_max_30d": 1, "ventana_devoluciones_dias": 1},
         ("1 devolución en el último día",)),
        ({"devoluciones_recientes": 3}, ("3 devoluciones en los últimos 30 días",)),
        ({"dias_entregado": 1, "dias_desde_entrega": 0}, ("entregado hace 1 día (límite 0)",)),
        ({"estado_pedido": "cancelado"}, ("pedido cancelado",)),
        ({"pedido_existe": False, "estado_pedido": None, "entregado_en": None},
         ("pedido no encontrado para este cliente",)),
        ({"limite_reembolso": D("1234.00")}, ()),
        ({"limite_reembolso": D("5.50")},
         ("importe 50,00 EUR supera el límite de 5,50 EUR de la tienda",)),
    ],
    ids=["ok", "una_devolucion_un_dia", "tres", "un_dia", "cancelado", "ajeno", "limite_alto",
         "limite_bajo"],
)
def test_regla_de_reembolso_decide_con_los_hechos(cambios, motivos):
    dictamen = REGLAS["reembolso"].decidir(_hechos_reembolso(**cambios), {"importe": "50.00"})
    assert dictamen.motivos == motivos
    assert dictamen.importe == D("50.00")


_ELEGIBLE = {"entregado": True, "estado": "entregado", "dias_desde_entrega": 4, "ventana_dias": 30,
             "dentro_de_ventana": True, "reembolsos": 0, "sustituciones": 0, "unidades_libres": 1}


@pytest.mark.parametrize(
    ("regla", "hechos", "razon"),
    [
        ("reembolso", {"elegibilidad": {**_ELEGIBLE, "entregado": False, "estado": "cancelado"}},
         "pedido cancelado"),
        ("reembolso", {"elegibilidad": {**_ELEGIBLE, "entregado": False, "estado": "enviado"}},
         "pedido aún no entregado"),
        ("reembolso", {"elegibilidad": {**_ELEGIBLE, "reembolsos": 1, "unidades_libres": 0}},
         "todas las unidades del pedido ya se reembolsaron o se cambiaron"),
        ("sustitucion", {"elegibilidad": {**_ELEGIBLE, "reembolsos": 1, "unidades_libres": 0},
                         "libres_sku_original": 0},
         "todas las unidades de ese producto del pedido ya se reembolsaron o se cambiaron"),
    ],
    ids=["reembolso_cancelado", "reembolso_sin_entregar", "reembolso_compensado", "cambio_compensado"],
)
def test_lo_imposible_no_pide_firma_y_guarda_la_razon_para_la_herramienta(regla, hechos, razon):
    base = {**_hechos_reembolso(importe=None), "sku_original_en_pedido": True, "pvp_original": D("120.00"),
            "pvp_nuevo": D("29.90"), "libres_sku_original": 1}
    # Con límite bajo y fuera de plazo: pediría firma si fuera posible.
    base.update(limite_reembolso=D("1.00"), dias_entregado=90)
    dictamen = REGLAS[regla].decidir({**base, **hechos}, {"importe": "50.00", "sku_original": "A", "sku_nuevo": "B"})
    assert dictamen.motivos == ()
    assert dictamen.umbrales["imposible"] == razon


def test_lo_posible_sigue_pidiendo_firma_y_no_se_marca_imposible():
    hechos = {**_hechos_reembolso(), "limite_reembolso": D("1.00"), "elegibilidad": _ELEGIBLE}
    dictamen = REGLAS["reembolso"].decidir(hechos, {"importe": "50.00"})
    assert dictamen.motivos and "imposible" not in dictamen.umbrales


def test_regla_de_sustitucion_decide_con_los_hechos():
    hechos = {**DEFECTOS, "pedido_existe": True, "sku_original_en_pedido": True,
              "pvp_original": D("1000.00"), "pvp_nuevo": D("2234.50"),
              "diferencia_max_sustitucion": D("1000.00")}
    args = {"sku_original": "A", "sku_nuevo": "B"}
    dictamen = REGLAS["sustitucion"].decidir(hechos, args)
    assert dictamen.motivos == (
        "el producto nuevo cuesta 1.234,50 EUR más que el original (límite 1.000,00 EUR)",
    )
    assert dictamen.importe == D("1234.50")
    assert dictamen.umbrales == {"diferencia_max_sustitucion": "1000.00", "limite_reembolso": "60.00",
                                 "pvp_original": "1000.00", "pvp_nuevo": "2234.50"}
    sin_skus = REGLAS["sustitucion"].decidir({**hechos, "pvp_original": None, "pvp_nuevo": None}, {})
    assert sin_skus.motivos == ("el producto original no existe en el catálogo",
                                "el producto nuevo no existe en el catálogo")
    assert sin_skus.importe is None


def test_una_regla_con_hechos_desconocidos_o_sin_sus_parametros_no_se_crea():
    with pytest.raises(ValueError, match="hechos desconocidos"):
        Regla(nombre="x", hechos=("no_existe",), decidir=lambda h, a: Dictamen(motivos=()))
    with pytest.raises(ValueError, match="sku_nuevo"):
        Regla(nombre="x", hechos=("pvp_nuevo",), decidir=lambda h, a: Dictamen(motivos=()))
    with pytest.raises(ValueError, match="reservados"):
        consulta_de_hechos(("pedido_existe", "pedido_existe"))


# --- una consulta de hechos; con veredicto guardado no se calcula nada ---------------------


def _nodos(plan: dict):
    yield plan
    for hijo in plan.get("Plans", ()):
        yield from _nodos(hijo)


@pytest.mark.parametrize("regla", ["reembolso", "sustitucion"])
def test_con_veredicto_guardado_la_consulta_de_hechos_no_lee_tablas_de_negocio(pool, politica, regla):
    herramienta = {"reembolso": "reembolsar", "sustitucion": "sustituir"}[regla]
    args = {**REEMBOLSO_120, "sku_original": "CAF-001", "sku_nuevo": "CAF-004"}
    veredicto(politica, herramienta, args, ANA, id="guardado")
    parametros = {**parametros_defecto(), **REGLAS[regla].parametros(args), "thread_id": "t1",
                  "tienda": ANA.tienda, "cliente_id": ANA.cliente_id, "pedido": args["pedido"],
                  "herramienta": "reembolsar", "args": Jsonb(args)}

    def leidas(tool_call_id: str) -> dict[str, int]:
        with pool.connection() as c:
            plan = c.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + REGLAS[regla].consulta,
                {**parametros, "tool_call_id": tool_call_id},
            ).fetchone()["QUERY PLAN"][0]["Plan"]
        lecturas: dict[str, int] = {}
        for nodo in _nodos(plan):
            if nodo.get("Relation Name") in TABLAS_DE_NEGOCIO:
                lecturas[nodo["Relation Name"]] = lecturas.get(nodo["Relation Name"], 0) + nodo["Actual Loops"]
        return lecturas

    nueva = leidas("otra")
    assert nueva and all(n > 0 for n in nueva.values())  # la prueba ve las lecturas
    assert set(leidas("guardado")) == set(nueva)
    assert all(n == 0 for n in leidas("guardado").values())


# --- autoridad y versión de la política ----------------------------------------------------


def test_el_veredicto_guarda_la_autoridad_que_exige(pool, politica):
    grande = veredicto(politica, "reembolsar", REEMBOLSO_120, ANA, id="a1")
    assert grande.autoridad == Autoridad(importe=D("120.00"), firmas=1, rol_minimo="encargado")
    assert grande.version_politica == 1
    assert fila_evaluacion(pool, "a1") == {"version_politica": 1, "autoridad_importe": D("120.00"),
                                           "autoridad_firmas": 1, "autoridad_rol": "encargado"}
    pequeno = veredicto(politica, "reembolsar", {**REEMBOLSO_120, "importe": "10.00"}, ANA, id="a2")
    assert pequeno.autoridad is None
    assert fila_evaluacion(pool, "a2") == {"version_politica": 1, "autoridad_importe": None,
                                           "autoridad_firmas": None, "autoridad_rol": None}
    cambio = veredicto(politica, "sustituir",
                       {"pedido": REEMBOLSO_120["pedido"], "sku_original": "CAF-001", "sku_nuevo": "CAF-004"},
                       ANA, id="a3")
    assert cambio.autoridad == Autoridad(importe=D("129.00"))
    consulta = veredicto(politica, "consultar_encargado", {"pregunta": "?"}, ANA, id="a4")
    assert consulta.autoridad == Autoridad(importe=None)
    # Otro proceso (sin lo recordado) lee lo mismo de la base.
    with pool.connection() as c:
        assert leer_veredicto(c, thread_id="t1", tool_call_id="a1") == replace(grande, nuevo=False)


def test_cambiar_un_umbral_sube_la_version_y_el_veredicto_nuevo_la_guarda(pool, politica):
    assert veredicto(politica, "reembolsar", REEMBOLSO_120, ANA, id="v1").version_politica == 1
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = limite_reembolso WHERE tienda = 'talavera'")
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 150 WHERE tienda = 'talavera'")
    nuevo = veredicto(politica, "reembolsar", REEMBOLSO_120, ANA, id="v2")
    assert (nuevo.requiere_encargado, nuevo.version_politica) == (False, 2)
    assert fila_evaluacion(pool, "v1")["version_politica"] == 1  # el guardado no cambia
    ejecutar_sql(pool, "UPDATE politicas_tienda SET version = 10, limite_reembolso = 40 WHERE tienda = 'talavera'")
    assert veredicto(politica, "reembolsar", REEMBOLSO_120, ANA, id="v3").version_politica == 10


def test_un_veredicto_guardado_sin_autoridad_se_lee_como_una_firma_de_encargado(pool):
    ejecutar_sql(
        pool,
        "INSERT INTO evaluaciones_politica (thread_id, tool_call_id, herramienta, args, "
        "requiere_encargado, motivos) VALUES ('t1', 'antigua', 'reembolsar', '{}', true, '[\"x\"]')",
    )
    v = nueva_politica(pool).veredicto_guardado(thread_id="t1", tool_call_id="antigua")
    assert (v.autoridad, v.version_politica) == (Autoridad(importe=None), 1)


@pytest.mark.parametrize(
    "valores",
    [{"importe": D("1.005")}, {"importe": D("0")}, {"importe": None, "firmas": 0},
     {"importe": None, "firmas": True}, {"importe": None, "rol_minimo": ""}],
)
def test_una_autoridad_no_valida_no_se_crea(valores):
    with pytest.raises(ValueError):
        Autoridad(**valores)


# --- la descripción del encargado va por regla ------------------------------------------------


def test_la_descripcion_se_redacta_por_la_regla_y_con_el_titulo_del_registro(pool):
    politica = PoliticaAprobacion(
        pool=pool, reglas={"devolver_dinero": "reembolso", "borrar_cliente": "borrado"}
    )
    texto = DescripcionEncargado(pool=pool, politica=politica, titulos={"borrar_cliente": "Borrado"})
    llamada = {"name": "devolver_dinero", "args": REEMBOLSO_120, "id": "r1", "type": "tool_call"}
    assert "Reembolso de 120,00 EUR para Ana García López" in texto(llamada, {}, runtime_grafo(ANA))
    otra = {"name": "borrar_cliente", "args": {}, "id": "r2", "type": "tool_call"}
    assert texto(otra, {}, runtime_grafo(ANA)).startswith(
        "Borrado (borrar_cliente) solicitada para Ana García López (cliente C-0001)."
    )


def test_la_descripcion_de_un_cambio_mas_barato_lleva_la_diferencia_con_signo(pool):
    args = {"pedido": REEMBOLSO_120["pedido"], "sku_original": "CAF-001", "sku_nuevo": "CAF-002"}
    llamada = {"name": "sustituir", "args": args, "id": "s1", "type": "tool_call"}
    texto = DescripcionEncargado(pool=pool, politica=nueva_politica(pool))(llamada, {}, runtime_grafo(ANA))
    assert "Diferencia de precio: 90,10 EUR, se le devuelve al cliente." in texto
    # Lo que devuelve un cambio cuenta contra el límite de reembolso de la tienda (60,00 EUR).
    assert "el cambio devuelve 90,10 EUR y supera el límite de 60,00 EUR" in texto


# --- el texto de la política para el cliente ---------------------------------------------------


def test_la_politica_en_texto_sale_de_la_tienda_y_tiene_valores_por_defecto(pool):
    # (Antes en test_herramientas: el texto se movió de herramientas/pedidos.py a politicas/.)
    fuente = PoliticaTienda(pool=pool)
    texto = fuente.texto_para_cliente(ANA)
    assert "Talavera de la Reina" in texto
    for trozo in ("60,00 EUR", "más de 30 días desde la entrega", "2 devoluciones o más",
                  "misma categoría", f"{DEFECTOS['horas_caducidad']} horas"):
        assert trozo in texto
    with pool.connection() as c:
        c.execute("DELETE FROM politicas_tienda WHERE tienda = 'talavera'")
    assert fuente.texto_para_cliente(ANA) == texto  # la demo usa los DEFAULT del esquema
    with pool.connection() as c:
        c.execute("INSERT INTO politicas_tienda (tienda, limite_reembolso, diferencia_max_sustitucion,"
                  " horas_caducidad) VALUES ('talavera', 1500, 15, 24)")
    cambiado = fuente.texto_para_cliente(ANA)
    assert "1.500,00 EUR" in cambiado and "más de 15,00 EUR por encima" in cambiado
    assert "caduca a las 24 horas" in cambiado


def test_la_politica_de_una_tienda_desconocida_usa_los_defectos(pool):
    texto = PoliticaTienda(pool=pool).texto_para_cliente(
        ContextoCliente(cliente_id="C-0001", tienda="sin-tienda", nombre="Ana")
    )
    assert texto.startswith("Política de devoluciones y cambios de la tienda sin-tienda:")
    assert "60,00 EUR" in texto and "72 horas" in texto


def test_consultar_politica_lee_el_texto_del_puerto_y_sin_el_falla(pool):
    assert isinstance(PoliticaTienda(pool=pool), FuentePolitica)

    class Fija:
        def texto_para_cliente(self, contexto):
            return f"política de prueba para {contexto.tienda}"

    pasarela = PasarelaSimulada(pool=pool)
    con = crear_herramientas(pool=pool, pasarela=pasarela, politica=Fija())
    assert invocar(con, "consultar_politica", {}, runtime(ANA, tool_call_id="p1")).content == (
        "política de prueba para talavera"
    )
    sin = crear_herramientas(pool=pool, pasarela=pasarela)
    with pytest.raises(RuntimeError, match=r"Dependencias\(politica=\.\.\.\)"):
        invocar(sin, "consultar_politica", {}, runtime(ANA, tool_call_id="p2"))
