"""Política de aprobación: reglas, umbrales por tienda, veredicto estable, descripción."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import psycopg
import psycopg_pool
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt.tool_node import ToolRuntime
from langgraph.types import Command
from psycopg_pool import ConnectionPool

from agente.bd.pool import KWARGS_CONEXION
from nucleo import dinero
from nucleo.contexto import ContextoCliente
from nucleo.errores import ContextoAusente
from politicas import (
    DEFECTOS,
    DescripcionEncargado,
    leer_veredicto,
    veredictos_de_hilo,
)
from tests.apoyo.llamadas import peticion, runtime_grafo
from tests.apoyo.politica import (
    ANA,
    BRUNO,
    CARMEN,
    DAVID,
    ELENA,
    MOTIVO_120,
    REEMBOLSO_120,
    ejecutar_sql,
    nueva_politica,
    veredicto,
)
from tests.apoyo.traza_protocolo import trazar_pool


def descripcion(pool, politica=None) -> DescripcionEncargado:
    return DescripcionEncargado(pool=pool, politica=politica or nueva_politica(pool))


@pytest.fixture
def politica(pool):
    return nueva_politica(pool)


# --- reembolsar: importe ------------------------------------------------------------


def test_reembolso_sobre_limite_requiere_encargado(politica):
    assert politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA)) is True
    v = veredicto(politica, "reembolsar", REEMBOLSO_120, ANA)
    assert v.motivos == (MOTIVO_120,)
    assert v.umbrales["limite_reembolso"] == "60.00"


def test_reembolso_bajo_limite_de_pedido_reciente_no_requiere_encargado(politica):
    # Mismo pedido de Ana (entregado hace 4 días), 50 EUR: por debajo de 60.
    args = {**REEMBOLSO_120, "importe": "50.00"}
    assert politica.necesita_encargado(peticion("reembolsar", args, ANA)) is False
    assert veredicto(politica, "reembolsar", args, ANA).motivos == ()


def test_reembolso_en_el_limite_exacto_no_requiere_encargado(politica):
    args = {**REEMBOLSO_120, "importe": Decimal("60.00")}
    assert politica.necesita_encargado(peticion("reembolsar", args, ANA)) is False


def test_reembolso_de_cliente_sin_devoluciones_no_requiere_encargado(politica):
    args = {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "Se raya"}
    assert politica.necesita_encargado(peticion("reembolsar", args, BRUNO)) is False


# --- reembolsar: devoluciones recientes ----------------------------------------------


def test_cliente_con_dos_devoluciones_recientes_requiere_encargado(politica):
    args = {"pedido": "P-20260922-0077", "importe": "30.00", "motivo": "Hace ruido"}
    assert politica.necesita_encargado(peticion("reembolsar", args, ELENA)) is True
    assert veredicto(politica, "reembolsar", args, ELENA).motivos == (
        "2 devoluciones en los últimos 30 días",
    )


def test_devoluciones_fuera_de_la_ventana_no_cuentan(pool, politica):
    ejecutar_sql(
        pool,
        "UPDATE devoluciones SET creada = now() - interval '40 days' "
        "WHERE cliente_id = 'C-0005' AND pedido_id = 'P-20260905-0019'",
    )
    args = {"pedido": "P-20260922-0077", "importe": "30.00", "motivo": "Hace ruido"}
    assert politica.necesita_encargado(peticion("reembolsar", args, ELENA)) is False


def test_sin_devoluciones_el_mismo_pedido_no_requiere_encargado(pool, politica):
    ejecutar_sql(pool, "DELETE FROM devoluciones WHERE cliente_id = 'C-0005'")
    args = {"pedido": "P-20260922-0077", "importe": "30.00", "motivo": "Hace ruido"}
    assert politica.necesita_encargado(peticion("reembolsar", args, ELENA)) is False


# --- reembolsar: entrega -------------------------------------------------------------


def test_pedido_entregado_hace_45_dias_requiere_encargado(politica):
    args = {"pedido": "P-20260801-0007", "importe": "35.00", "motivo": "Talla equivocada"}
    assert politica.necesita_encargado(peticion("reembolsar", args, CARMEN)) is True
    assert veredicto(politica, "reembolsar", args, CARMEN).motivos == (
        "entregado hace 45 días (límite 30)",
    )


def test_pedido_no_entregado_no_pide_firma_porque_la_herramienta_lo_rechaza(politica):
    # Nadie puede aprobar lo imposible: reembolsar rechaza un pedido sin entregar.
    args = {"pedido": "P-20260925-0150", "importe": "40.00", "motivo": "No llega"}
    assert politica.necesita_encargado(peticion("reembolsar", args, DAVID)) is False
    v = veredicto(politica, "reembolsar", args, DAVID)
    assert v.motivos == () and v.umbrales["imposible"] == "pedido aún no entregado"


def test_pedido_entregado_hace_45_dias_pasa_si_la_tienda_admite_60(pool, politica):
    ejecutar_sql(pool, "UPDATE politicas_tienda SET dias_desde_entrega = 60 WHERE tienda = 'madrid-centro'")
    args = {"pedido": "P-20260801-0007", "importe": "35.00", "motivo": "Talla equivocada"}
    assert politica.necesita_encargado(peticion("reembolsar", args, CARMEN)) is False


def test_varios_motivos_se_acumulan(pool, politica):
    args = {"pedido": "P-20260801-0007", "importe": "80.00", "motivo": "Talla"}
    v = veredicto(politica, "reembolsar", args, CARMEN)
    assert v.requiere_encargado is True
    assert v.motivos == (
        "importe 80,00 EUR supera el límite de 60,00 EUR de la tienda",
        "entregado hace 45 días (límite 30)",
    )


# --- sustituir -----------------------------------------------------------------------


def _sustitucion(sku_nuevo: str) -> dict:
    return {"pedido": "P-20260917-0041", "sku_original": "CAF-001", "sku_nuevo": sku_nuevo}


def test_sustitucion_por_producto_mas_caro_requiere_encargado(politica):
    assert politica.necesita_encargado(peticion("sustituir", _sustitucion("CAF-004"), ANA)) is True
    v = veredicto(politica, "sustituir", _sustitucion("CAF-004"), ANA)
    assert v.motivos == ("el producto nuevo cuesta 129,00 EUR más que el original",)
    assert v.umbrales == {"diferencia_max_sustitucion": "0.00", "limite_reembolso": "60.00",
                          "pvp_original": "120.00", "pvp_nuevo": "249.00"}


@pytest.mark.parametrize("sku_nuevo", ["CAF-005", "CAF-003"], ids=["mas_barato", "mismo_precio"])
def test_sustitucion_por_producto_igual_o_mas_barato_no_requiere_encargado(politica, sku_nuevo):
    # CAF-005 devuelve 51,00 EUR: dentro del límite de reembolso sin firma (60,00).
    assert politica.necesita_encargado(peticion("sustituir", _sustitucion(sku_nuevo), ANA)) is False


def test_sustitucion_que_devuelve_mas_que_el_limite_de_reembolso_requiere_encargado(politica):
    v = veredicto(politica, "sustituir", _sustitucion("CAF-002"), ANA)
    assert v.requiere_encargado is True
    assert v.motivos == ("el cambio devuelve 90,10 EUR y supera el límite de 60,00 EUR de la tienda "
                         "para devolver dinero",)


def test_sustitucion_dentro_de_la_diferencia_admitida_por_la_tienda(pool, politica):
    ejecutar_sql(pool, "UPDATE politicas_tienda SET diferencia_max_sustitucion = 150 WHERE tienda = 'talavera'")
    assert politica.necesita_encargado(peticion("sustituir", _sustitucion("CAF-004"), ANA)) is False


def test_sustitucion_con_sku_desconocido_requiere_encargado(politica):
    v = veredicto(politica, "sustituir", _sustitucion("XXX-999"), ANA)
    assert v.requiere_encargado is True
    assert "el producto nuevo no existe en el catálogo" in v.motivos


def test_sustitucion_de_producto_que_no_esta_en_el_pedido_requiere_encargado(politica):
    args = {"pedido": "P-20260917-0041", "sku_original": "CAF-003", "sku_nuevo": "CAF-005"}
    v = veredicto(politica, "sustituir", args, ANA)
    assert v.requiere_encargado is True
    assert v.motivos == ("Cafetera espresso Crema 15 bar no está en el pedido",)  # el nombre, no el SKU


# --- consultar_encargado y herramientas de lectura -----------------------------------


def test_consultar_encargado_siempre_requiere_encargado(politica):
    req = peticion("consultar_encargado", {"pregunta": "¿Puedo cambiarla?"}, ANA)
    assert politica.necesita_encargado(req) is True
    assert veredicto(politica, "consultar_encargado", {}, ANA).motivos == (
        "consulta dirigida al encargado",
    )


def test_herramienta_con_firma_sin_regla_requiere_encargado(politica):
    assert politica.necesita_encargado(peticion("borrar_cliente", {}, ANA)) is True


@pytest.mark.parametrize(
    ("nombre", "args"),
    [
        ("consultar_pedido", {"pedido": "P-20260917-0041"}),
        ("consultar_politica", {}),
        ("stock_alternativas", {"sku": "CAF-001"}),
    ],
)
def test_herramientas_de_lectura_nunca_requieren_encargado_ni_tocan_la_base(bd_url, nombre, args):
    cerrado = ConnectionPool(bd_url, min_size=0, max_size=1, kwargs=KWARGS_CONEXION, open=False)
    politica = nueva_politica(cerrado)  # un pool cerrado falla si se usa
    assert politica.necesita_encargado(peticion(nombre, args, ANA)) is False
    assert politica.necesita_encargado(peticion(nombre, args, None)) is False


# --- umbrales por tienda ---------------------------------------------------------------


def test_limite_de_reembolso_propio_de_la_tienda(pool, politica):
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 150 WHERE tienda = 'talavera'")
    assert politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA)) is False
    assert veredicto(politica, "reembolsar", REEMBOLSO_120, ANA).umbrales["limite_reembolso"] == "150.00"


def test_otra_tienda_conserva_su_limite(pool, politica):
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 150 WHERE tienda = 'talavera'")
    ejecutar_sql(pool, "UPDATE politicas_tienda SET dias_desde_entrega = 60 WHERE tienda = 'madrid-centro'")
    args = {"pedido": "P-20260801-0007", "importe": "80.00", "motivo": "Talla"}
    assert veredicto(politica, "reembolsar", args, CARMEN).motivos == (
        "importe 80,00 EUR supera el límite de 60,00 EUR de la tienda",
    )


def test_tienda_sin_fila_de_politica_usa_los_valores_por_defecto(pool, politica):
    ejecutar_sql(pool, "DELETE FROM politicas_tienda WHERE tienda = 'talavera'")
    v = veredicto(politica, "reembolsar", REEMBOLSO_120, ANA)
    assert v.motivos == (MOTIVO_120,)
    assert v.umbrales == {
        "limite_reembolso": "60.00",
        "devoluciones_max_30d": 2,
        "ventana_devoluciones_dias": 30,
        "dias_desde_entrega": 30,
    }


def test_valores_por_defecto_coinciden_con_el_esquema(pool):
    # Cada columna de politicas_tienda (salvo la clave) tiene su DEFAULT en DEFECTOS.
    with pool.connection() as c, c.transaction():
        c.execute("INSERT INTO tiendas (id, nombre) VALUES ('prueba', 'Prueba')")
        fila = c.execute(
            "INSERT INTO politicas_tienda (tienda) VALUES ('prueba') RETURNING *"
        ).fetchone()
        sin_default = c.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'politicas_tienda' AND column_default IS NULL"
        ).fetchall()
    del fila["tienda"]
    assert fila == dict(DEFECTOS)
    assert [f["column_name"] for f in sin_default] == ["tienda"]


# --- veredicto estable -----------------------------------------------------------------


def test_veredicto_guardado_se_mantiene_aunque_cambien_los_datos(pool, politica):
    req = peticion("reembolsar", REEMBOLSO_120, ANA, id="call-estable")
    assert politica.necesita_encargado(req) is True
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 500 WHERE tienda = 'talavera'")

    # Reanudar vuelve a llamar a when con el mismo tool_call_id: sigue siendo True.
    assert politica.necesita_encargado(req) is True
    v = veredicto(politica, "reembolsar", REEMBOLSO_120, ANA, id="call-estable")
    assert v.nuevo is False
    assert v.motivos == (MOTIVO_120,)
    assert v.umbrales["limite_reembolso"] == "60.00"
    # Una llamada nueva sí ve el límite nuevo.
    assert politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="call-nueva")) is False


def test_veredicto_guardado_es_por_hilo(pool, politica):
    assert politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, hilo="h1")) is True
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 500 WHERE tienda = 'talavera'")
    assert politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, hilo="h2")) is False


def test_veredicto_negativo_tambien_es_estable(pool, politica):
    args = {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "Se raya"}
    req = peticion("reembolsar", args, BRUNO)
    assert politica.necesita_encargado(req) is False
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 10 WHERE tienda = 'talavera'")
    assert politica.necesita_encargado(req) is False


def test_motivos_y_umbrales_quedan_guardados_en_la_fila(pool, politica):
    politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="call-fila"))
    with pool.connection() as c:
        fila = c.execute(
            "SELECT herramienta, args, tienda, cliente_id, requiere_encargado, motivos, umbrales "
            "FROM evaluaciones_politica WHERE thread_id = 't1' AND tool_call_id = 'call-fila'"
        ).fetchone()
    assert fila == {
        "herramienta": "reembolsar",
        "args": REEMBOLSO_120,
        "tienda": "talavera",
        "cliente_id": "C-0001",
        "requiere_encargado": True,
        "motivos": [MOTIVO_120],
        "umbrales": {
            "limite_reembolso": "60.00",
            "devoluciones_max_30d": 2,
            "ventana_devoluciones_dias": 30,
            "dias_desde_entrega": 30,
        },
    }


@pytest.mark.temporal
def test_carrera_de_dos_evaluaciones_devuelve_el_veredicto_que_gano(pool, bd_url, politica):
    # Otra sesión inserta la misma clave sin confirmar: nuestro INSERT ... ON CONFLICT
    # espera, la otra confirma un veredicto distinto y el nuestro devuelve cero filas.
    otra = psycopg.connect(bd_url, autocommit=False)
    otra.execute(
        "INSERT INTO evaluaciones_politica (thread_id, tool_call_id, herramienta, args, "
        "requiere_encargado, motivos, umbrales) VALUES ('t1', 'call-carrera', 'reembolsar', "
        "'{}', true, '[\"ganó la otra sesión\"]', '{}')"
    )
    resultado: list = []
    hilo = threading.Thread(
        target=lambda: resultado.append(
            veredicto(politica, "reembolsar", {**REEMBOLSO_120, "importe": "10.00"}, ANA, id="call-carrera")
        )
    )
    hilo.start()
    with psycopg.connect(bd_url, autocommit=True) as observador:
        # Hasta 30 s (no 500 vueltas de 10 ms): bajo carga el hilo tarda en llegar a la espera.
        fin = time.monotonic() + 30
        while time.monotonic() < fin:
            esperando = observador.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE '%evaluaciones_politica%'"
            ).fetchone()[0]
            if esperando or not hilo.is_alive():
                break
            threading.Event().wait(0.01)
    assert esperando == 1, "la evaluación no llegó a esperar a la otra sesión"
    otra.commit()
    otra.close()
    hilo.join(timeout=10)
    assert resultado[0].requiere_encargado is True
    assert resultado[0].motivos == ("ganó la otra sesión",)


# --- fallar cerrado ------------------------------------------------------------------


def test_pedido_de_otro_cliente_requiere_encargado_con_motivo(politica):
    args = {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "Se raya"}  # es de Bruno
    assert politica.necesita_encargado(peticion("reembolsar", args, ANA)) is True
    assert veredicto(politica, "reembolsar", args, ANA).motivos == (
        "pedido no encontrado para este cliente",
    )


def test_pedido_inexistente_requiere_encargado(politica):
    v = veredicto(politica, "reembolsar", {"pedido": "P-20990101-0001", "importe": "5.00"}, ANA)
    assert v.requiere_encargado is True
    assert v.motivos == ("pedido no encontrado para este cliente",)


@pytest.mark.parametrize("importe", ["abc", "-5", "0", "12.345", "1e20", None, True, "120,00"])
def test_importe_no_valido_requiere_encargado(politica, importe):
    args = {"pedido": "P-20260920-0102", "importe": importe, "motivo": "x"}
    v = veredicto(politica, "reembolsar", args, BRUNO)
    assert v.requiere_encargado is True
    assert v.motivos == ("importe no válido",)


def test_el_importe_se_lee_con_los_formatos_del_esquema_decimal():
    assert dinero.importe_o_none("120.00") == Decimal("120.00")
    assert dinero.importe_o_none(120) == Decimal("120")
    assert dinero.importe_o_none(24.9) == Decimal("24.9")
    assert dinero.importe_o_none(Decimal("0.01")) == Decimal("0.01")


def test_sin_contexto_del_cliente_lanza_contexto_ausente_y_no_guarda_nada(pool, politica):
    with pytest.raises(ContextoAusente, match="context="):
        politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, None))
    with pool.connection() as c:
        assert c.execute("SELECT count(*) AS n FROM evaluaciones_politica").fetchone()["n"] == 0


def test_evaluar_sin_contexto_lanza_y_con_contexto_en_dict_funciona(politica):
    with pytest.raises(ContextoAusente):
        veredicto(politica, "reembolsar", REEMBOLSO_120, None)
    assert veredicto(politica, "reembolsar", REEMBOLSO_120, ANA.como_json()).motivos == (MOTIVO_120,)


def test_sin_thread_id_lanza_contexto_ausente(politica):
    req = peticion("reembolsar", REEMBOLSO_120, ANA)
    req = req.override(runtime=ToolRuntime(
        state={}, context=ANA, config={}, stream_writer=lambda _: None,
        tool_call_id="call-1", store=None,
    ))
    with pytest.raises(ContextoAusente, match="thread_id"):
        politica.necesita_encargado(req)


def test_error_de_base_de_datos_se_propaga(pool):
    politica = nueva_politica(pool)
    pool.close()
    with pytest.raises(psycopg.OperationalError):
        politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA))


def test_error_sql_se_propaga(pool, politica):
    ejecutar_sql(pool, "ALTER TABLE evaluaciones_politica RENAME TO evaluaciones_otra")
    with pytest.raises(psycopg.errors.UndefinedTable):
        politica.necesita_encargado(peticion("consultar_encargado", {"pregunta": "?"}, ANA))


def test_necesita_encargado_devuelve_bool_real(politica):
    si = politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="a"))
    no = politica.necesita_encargado(
        peticion("reembolsar", {**REEMBOLSO_120, "importe": "10.00"}, ANA, id="b")
    )
    assert type(si) is bool and si is True
    assert type(no) is bool and no is False


# --- una sentencia por veredicto ---------------------------------------------------------


@pytest.fixture
def pool_trazable(bd_url):
    p = ConnectionPool(bd_url, min_size=1, max_size=1, kwargs=KWARGS_CONEXION, open=False)
    p.open(wait=True, timeout=10)
    yield p
    p.close()


def test_un_veredicto_nuevo_son_dos_sentencias_y_una_pausa_por_unidades_seis(pool_trazable):
    politica = nueva_politica(pool_trazable)
    casos = [
        ("reembolsar", REEMBOLSO_120, ANA),
        ("sustituir", _sustitucion("CAF-004"), ANA),
        ("consultar_encargado", {"pregunta": "?"}, ANA),
    ]
    with trazar_pool(pool_trazable) as primera:
        for i, (nombre, args, ctx) in enumerate(casos):
            politica.necesita_encargado(peticion(nombre, args, ctx, id=f"prepara-{i}"))
    # Hechos + INSERT; una pausa por unidades (reembolso, cambio) lo guarda además bajo el
    # candado del cliente tras releer las reservas: BEGIN, candado, reservas, INSERT, COMMIT.
    # La primera vez cada sentencia se prepara (prepare_threshold=0): un viaje más.
    esperadas = {"reembolsar": 6, "sustituir": 6, "consultar_encargado": 2}
    assert primera.sentencias == sum(esperadas[nombre] for nombre, _, _ in casos)
    for i, (nombre, args, ctx) in enumerate(casos):
        with trazar_pool(pool_trazable) as traza:
            assert politica.necesita_encargado(peticion(nombre, args, ctx, id=f"nueva-{i}")) is True
        n = esperadas[nombre]
        assert (traza.sentencias, traza.viajes) == (n, n), (nombre, traza.mensajes)


def test_un_veredicto_guardado_es_una_sentencia_y_un_viaje(pool_trazable):
    req = peticion("reembolsar", REEMBOLSO_120, ANA, id="guardada")
    nueva_politica(pool_trazable).necesita_encargado(req)
    otro_proceso = nueva_politica(pool_trazable)  # reanuda en otro proceso
    with trazar_pool(pool_trazable) as traza:
        assert otro_proceso.necesita_encargado(req) is True
    assert (traza.sentencias, traza.viajes) == (1, 1), traza.mensajes


def test_el_mismo_proceso_recuerda_el_veredicto_sin_volver_a_la_base(pool_trazable, pool):
    politica = nueva_politica(pool_trazable)
    req = peticion("reembolsar", REEMBOLSO_120, ANA, id="recordada")
    assert politica.necesita_encargado(req) is True
    with pool.connection() as c:  # aunque cambien los datos, el veredicto es estable
        c.execute("UPDATE politicas_tienda SET limite_reembolso = 500")
    with trazar_pool(pool_trazable) as traza:
        assert politica.necesita_encargado(req) is True
    assert traza.sentencias == 0


def test_herramienta_de_lectura_no_envia_nada(pool_trazable):
    politica = nueva_politica(pool_trazable)
    with trazar_pool(pool_trazable) as traza:
        politica.necesita_encargado(peticion("consultar_pedido", {"pedido": "P-20260917-0041"}, ANA))
    assert traza.mensajes == []


# --- veredictos guardados para la bandeja ------------------------------------------------


def test_leer_veredicto_devuelve_motivos_y_umbrales_o_none(pool, politica):
    politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="c1"))
    politica.necesita_encargado(peticion("consultar_encargado", {"pregunta": "?"}, ANA, id="c2"))
    with pool.connection() as c:
        assert leer_veredicto(c, thread_id="t1", tool_call_id="nunca") is None
        v = leer_veredicto(c, thread_id="t1", tool_call_id="c1")
        todos = veredictos_de_hilo(c, thread_id="t1")
    assert v.como_json() == {
        "requiere_encargado": True,
        "motivos": [MOTIVO_120],
        "umbrales": {
            "limite_reembolso": "60.00",
            "devoluciones_max_30d": 2,
            "ventana_devoluciones_dias": 30,
            "dias_desde_entrega": 30,
        },
    }
    assert list(todos) == ["c1", "c2"]
    assert todos["c2"].motivos == ("consulta dirigida al encargado",)
    assert politica.veredicto_guardado(thread_id="t1", tool_call_id="c1") == v


# --- descripción para el encargado ---------------------------------------------------------


def test_descripcion_de_reembolso_para_el_encargado(pool, politica):
    llamada = {"name": "reembolsar", "args": REEMBOLSO_120, "id": "call-d", "type": "tool_call"}
    politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="call-d"))
    texto = descripcion(pool)(llamada, {"messages": []}, runtime_grafo(ANA))
    assert "Ana García López" in texto
    assert "P-20260917-0041" in texto
    assert "Reembolso de 120,00 EUR" in texto
    assert "«La cafetera no calienta»" in texto
    assert MOTIVO_120 in texto
    assert "compra " in texto and "entregado " in texto and "(hace 4 días)" in texto
    assert "Cafetera de goteo Aroma 10 tazas (CAF-001), 120,00 EUR" in texto
    assert "{" not in texto  # no es un volcado de args
    assert len(texto.splitlines()) <= 6


def test_descripcion_usa_el_veredicto_guardado(pool, politica):
    llamada = {"name": "reembolsar", "args": REEMBOLSO_120, "id": "call-d", "type": "tool_call"}
    politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="call-d"))
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 500 WHERE tienda = 'talavera'")
    texto = descripcion(pool)(llamada, {"messages": []}, runtime_grafo(ANA))
    assert MOTIVO_120 in texto


def test_al_reanudar_la_descripcion_es_la_que_vio_quien_firmo_sin_volver_a_la_base(pool, politica):
    from langchain_core.runnables.config import var_child_runnable_config

    from politicas.descripcion import CLAVE_DESCRIPCIONES_FIJADAS

    llamada = {"name": "reembolsar", "args": REEMBOLSO_120, "id": "call-d", "type": "tool_call"}
    politica.necesita_encargado(peticion("reembolsar", REEMBOLSO_120, ANA, id="call-d"))
    vista = descripcion(pool)(llamada, {"messages": []}, runtime_grafo(ANA))
    # La reanudación pasa la descripción de la pausa en ``configurable``; el pool cerrado
    # prueba que no se consulta nada más.
    cerrado = ConnectionPool(pool.conninfo, open=False)
    marca = var_child_runnable_config.set(
        {"configurable": {CLAVE_DESCRIPCIONES_FIJADAS: {"call-d": vista, "otra": "no es esta"}}})
    try:
        assert descripcion(cerrado)(llamada, {"messages": []}, runtime_grafo(ANA)) == vista
        # Una llamada sin descripción fijada se calcula (y aquí, sin base, falla).
        with pytest.raises(psycopg_pool.PoolClosed):
            descripcion(cerrado)({**llamada, "id": "call-nueva"}, {"messages": []}, runtime_grafo(ANA))
    finally:
        var_child_runnable_config.reset(marca)


def test_descripcion_de_reembolso_de_lineas_concretas(pool):
    # Pedido de dos líneas de C-0006 (MEN-002, TEX-005 x2); solo la 2.
    fer = ContextoCliente(cliente_id="C-0006", tienda="talavera", nombre="Fernando")
    args = {"pedido": "P-20260911-0022", "importe": "24.00", "motivo": "Color", "lineas": [2]}
    llamada = {"name": "reembolsar", "args": args, "id": "call-l", "type": "tool_call"}
    texto = descripcion(pool)(llamada, {}, runtime_grafo(fer))
    assert "Líneas a reembolsar: línea 2: 2 × Cojín decorativo (TEX-005), 24,00 EUR." in texto
    assert "Sartén" not in texto
    assert "Fernando Torres Vidal" in texto  # el nombre de la base, no el del contexto


def test_descripcion_de_sustitucion_con_productos_y_precios(pool):
    llamada = {"name": "sustituir", "args": _sustitucion("CAF-004"), "id": "call-s", "type": "tool_call"}
    texto = descripcion(pool)(llamada, {}, runtime_grafo(ANA))
    assert "Original: Cafetera de goteo Aroma 10 tazas (CAF-001), 120,00 EUR." in texto
    assert "Nuevo: Cafetera superautomática Barista (CAF-004), 249,00 EUR." in texto
    assert "Diferencia de precio: 129,00 EUR, la paga el cliente." in texto
    assert "el producto nuevo cuesta 129,00 EUR más que el original" in texto


def test_descripcion_de_pedido_ajeno_no_muestra_sus_datos(pool):
    args = {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "x"}
    llamada = {"name": "reembolsar", "args": args, "id": "call-a", "type": "tool_call"}
    texto = descripcion(pool)(llamada, {}, runtime_grafo(ANA))
    assert "no encontrado para este cliente" in texto
    assert "Sartén" not in texto and "Bruno" not in texto


def test_descripcion_de_consulta_al_encargado(pool):
    llamada = {"name": "consultar_encargado", "args": {"pregunta": "¿Hay\nenvío gratis?"},
               "id": "call-q", "type": "tool_call"}
    texto = descripcion(pool)(llamada, {}, runtime_grafo(ANA))
    assert "Consulta de Ana García López" in texto
    assert "«¿Hay envío gratis?»" in texto
    assert "consulta dirigida al encargado" in texto


def test_descripcion_sin_contexto_lanza_contexto_ausente(pool):
    llamada = {"name": "reembolsar", "args": REEMBOLSO_120, "id": "call-x", "type": "tool_call"}
    with pytest.raises(ContextoAusente):
        descripcion(pool)(llamada, {}, runtime_grafo(None))


# --- con el middleware de verdad -----------------------------------------------------------


class ModeloGuionado(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def _agente(pool, respuestas, ejecutadas):
    @tool
    def reembolsar(pedido: str, importe: str, motivo: str) -> str:
        """Reembolsa."""
        ejecutadas.append(("reembolsar", pedido, importe))
        return '{"estado": "emitido"}'

    @tool
    def consultar_pedido(pedido: str) -> str:
        """Consulta un pedido."""
        ejecutadas.append(("consultar_pedido", pedido))
        return "{}"

    politica = nueva_politica(pool)
    config = InterruptOnConfig(
        allowed_decisions=["approve", "edit", "reject"],
        when=politica.necesita_encargado,
        description=descripcion(pool, politica),
    )
    return create_agent(
        model=ModeloGuionado(responses=respuestas),
        tools=[reembolsar, consultar_pedido],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"reembolsar": config, "consultar_pedido": config})],
        context_schema=ContextoCliente,
        checkpointer=InMemorySaver(),
    )


def test_con_el_middleware_un_rechazo_se_respeta_aunque_cambien_los_datos(pool):
    ejecutadas: list = []
    respuestas = [
        AIMessage("", tool_calls=[
            {"name": "consultar_pedido", "args": {"pedido": "P-20260917-0041"}, "id": "lee-1"},
            {"name": "reembolsar", "args": REEMBOLSO_120, "id": "reemb-1"},
        ]),
        AIMessage("Lo siento, el encargado no lo ha aprobado."),
    ]
    agente = _agente(pool, respuestas, ejecutadas)
    config = {"configurable": {"thread_id": "hilo-mw"}}
    salida = agente.invoke({"messages": [("user", "Quiero mi dinero")]}, config, context=ANA, version="v2")
    assert len(salida.interrupts) == 1
    peticiones = salida.interrupts[0].value["action_requests"]
    assert [p["name"] for p in peticiones] == ["reembolsar"]  # la lectura no se revisa
    assert MOTIVO_120 in peticiones[0]["description"]
    assert "Ana García López" in peticiones[0]["description"]
    assert ejecutadas == []

    # Mientras espera, la tienda sube su límite: una evaluación nueva diría "no".
    ejecutar_sql(pool, "UPDATE politicas_tienda SET limite_reembolso = 500 WHERE tienda = 'talavera'")
    final = agente.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "Fuera de plazo de garantía"}]}),
        config, context=ANA, version="v2",
    )
    assert not final.interrupts
    assert ("reembolsar", "P-20260917-0041", "120.00") not in ejecutadas
    rechazo = [m for m in final.value["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "reemb-1"]
    assert len(rechazo) == 1 and rechazo[0].status == "error"
    assert "Fuera de plazo de garantía" in rechazo[0].content


def test_con_el_middleware_reanudar_sin_contexto_para_la_ejecucion(pool):
    ejecutadas: list = []
    respuestas = [
        AIMessage("", tool_calls=[{"name": "reembolsar", "args": REEMBOLSO_120, "id": "reemb-2"}]),
        AIMessage("Hecho."),
    ]
    agente = _agente(pool, respuestas, ejecutadas)
    config = {"configurable": {"thread_id": "hilo-sin-ctx"}}
    salida = agente.invoke({"messages": [("user", "Reembolso")]}, config, context=ANA, version="v2")
    assert salida.interrupts
    with pytest.raises(ContextoAusente):
        agente.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config, version="v2")
    assert ejecutadas == []


def test_con_el_middleware_un_reembolso_pequeno_no_se_detiene(pool):
    ejecutadas: list = []
    args = {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "Se raya"}
    respuestas = [
        AIMessage("", tool_calls=[{"name": "reembolsar", "args": args, "id": "reemb-3"}]),
        AIMessage("Hecho."),
    ]
    agente = _agente(pool, respuestas, ejecutadas)
    salida = agente.invoke(
        {"messages": [("user", "Reembolso")]}, {"configurable": {"thread_id": "hilo-ok"}},
        context=BRUNO, version="v2",
    )
    assert not salida.interrupts
    assert ejecutadas == [("reembolsar", "P-20260920-0102", "24.90")]

