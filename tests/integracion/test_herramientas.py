"""Herramientas: lecturas, reembolsos y sustituciones contra un PostgreSQL real.

Las funciones de dominio se prueban directamente; cada herramienta pasa además al menos
una vez por ``tool.invoke(ToolCall)`` con un ``ToolRuntime`` real, y ``reembolsar`` por un
``ToolNode`` dentro de un grafo, donde es LangGraph quien inyecta el runtime.
"""

from __future__ import annotations

import json
import threading
from decimal import Decimal

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from psycopg import sql
from psycopg.types.json import Jsonb

from caja.movimientos import completar_pendientes
from caja.pasarela import PasarelaSimulada
from caja.pasarelas import pasarela_desde_ajustes
from herramientas import REGISTRO, crear_herramientas
from herramientas.pedidos import (
    RESPUESTA_ENCARGADO_EN_ESPERA,
    consultar_pedido,
    stock_alternativas,
)
from nucleo.ajustes import Ajustes
from nucleo.contexto import ContextoCliente
from nucleo.errores import (
    AprobacionCaducada,
    ConflictoIdempotencia,
    ContextoAusente,
    ErrorDominio,
    ErrorPasarela,
    ImporteNoValido,
    PedidoNoEncontrado,
    ProductoNoEncontrado,
)
from nucleo.operaciones import OPERACIONES as DECLARADAS
from operaciones.reembolso.herramienta import reembolsar
from operaciones.sustitucion.herramienta import sustituir
from tests.apoyo.fabricas import capturar, crear_pedido, en_carrera
from tests.apoyo.llamadas import invocar, runtime

D = Decimal
ANA = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
IRENE = ContextoCliente(cliente_id="C-0009", tienda="talavera", nombre="Irene Delgado Serrano")
CARMEN = ContextoCliente(cliente_id="C-0003", tienda="madrid-centro", nombre="Carmen Ruiz Gómez")
PEDIDO_ANA = "P-20260917-0041"  # 120.00, CAF-001
TOTAL_ANA = D("120.00")
PEDIDO_IRENE = "P-20260917-0028"  # 29.90, CAF-002 (talavera)
PEDIDO_BRUNO = "P-20260920-0102"  # de C-0002: para Ana es como si no existiera


# --- Ayudantes -------------------------------------------------------------------------


def contar(pool, tabla: str) -> int:
    consulta = sql.SQL("SELECT count(*) AS n FROM {}").format(sql.Identifier(tabla))
    with pool.connection() as c:
        return c.execute(consulta).fetchone()["n"]


def efectos(pool) -> dict[str, int]:
    """Todo lo que una operación fallida no debe tocar."""
    with pool.connection() as c:
        stock = c.execute("SELECT sum(unidades) AS n FROM stock").fetchone()["n"]
    tablas = ("reembolsos", "devoluciones", "pasarela_movimientos", "sustituciones", "cobros",
              "compensaciones_unidad")
    return {**{t: contar(pool, t) for t in tablas}, "stock": stock}


def unidades(pool, sku: str, tienda: str = "talavera") -> int:
    with pool.connection() as c:
        return c.execute(
            "SELECT unidades FROM stock WHERE tienda = %s AND sku = %s", (tienda, sku)
        ).fetchone()["unidades"]


def fijar_stock(pool, sku: str, n: int, tienda: str = "talavera") -> None:
    with pool.connection() as c:
        c.execute("UPDATE stock SET unidades = %s WHERE tienda = %s AND sku = %s", (n, tienda, sku))


def fijar_pvp(pool, sku: str, pvp: Decimal, tienda: str = "talavera") -> None:
    with pool.connection() as c:
        c.execute("UPDATE precios_tienda SET pvp = %s WHERE tienda = %s AND sku = %s", (pvp, tienda, sku))


def fila_reembolso(pool, numero: str) -> dict:
    with pool.connection() as c:
        return c.execute("SELECT * FROM reembolsos WHERE numero = %s", (numero,)).fetchone()


def pasarela_ok(pool) -> PasarelaSimulada:
    return PasarelaSimulada(pool=pool)


def reembolso(pool, *, contexto=ANA, tool_call_id="call-1", thread_id="hilo-1", pasarela=None,
              pedido=PEDIDO_ANA, importe=TOTAL_ANA, **extra):
    return reembolsar(
        pool, contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id, pedido=pedido,
        importe=importe, motivo=extra.pop("motivo", "llegó rota"),
        pasarela=pasarela or pasarela_ok(pool), **extra,
    )


def cambio(pool, *, contexto=ANA, tool_call_id="call-s1", thread_id="hilo-1", pedido=PEDIDO_ANA,
           sku_original="CAF-001", sku_nuevo="CAF-004", pasarela=None, **extra):
    return sustituir(
        pool, contexto=contexto, thread_id=thread_id, tool_call_id=tool_call_id, pedido=pedido,
        sku_original=sku_original, sku_nuevo=sku_nuevo, pasarela=pasarela or pasarela_ok(pool),
        **extra,
    )


@pytest.fixture
def herramientas(pool):
    # El texto de la política vive en politicas/: se inyecta como en agente.construir.
    from politicas import PoliticaTienda

    return crear_herramientas(pool=pool, pasarela=pasarela_ok(pool), politica=PoliticaTienda(pool=pool))


# --- consultar_pedido / consultar_politica / stock_alternativas ------------------------


def test_consultar_pedido_da_estado_lineas_importes_y_dias_desde_entrega(pool):
    datos = consultar_pedido(pool, contexto=ANA, pedido=PEDIDO_ANA)
    assert datos["pedido"] == PEDIDO_ANA
    assert datos["estado"] == "entregado"
    assert (datos["importe"], datos["reembolsado"], datos["reembolsable"]) == ("120.00", "0.00", "120.00")
    assert datos["dias_desde_entrega"] == 4
    assert datos["entregado_en"] is not None and len(datos["fecha"]) == 10
    assert datos["lineas"] == [{
        "linea": 1, "sku": "CAF-001", "nombre": "Cafetera de goteo Aroma 10 tazas",
        "categoria": "cafeteras", "unidades": 1, "precio_unitario": "120.00", "importe": "120.00",
        "reembolsado": "0.00", "unidades_reembolsadas": 0, "unidades_cambiadas": 0,
        "unidades_libres": 1, "reembolsable": "120.00",
    }]


def test_consultar_pedido_sin_entregar_no_tiene_dias_desde_entrega(pool):
    david = ContextoCliente(cliente_id="C-0004", tienda="madrid-centro", nombre="David")
    datos = consultar_pedido(pool, contexto=david, pedido="p-20260925-0150 ")
    assert (datos["pedido"], datos["estado"]) == ("P-20260925-0150", "enviado")
    assert datos["entregado_en"] is None and datos["dias_desde_entrega"] is None


def test_lo_reembolsable_descuenta_las_unidades_ya_reembolsadas_aunque_sea_en_parte(pool, bd_url):
    # Antes del libro quedaban 100,00 reembolsables; ahora la única unidad está compensada.
    reembolso(pool, importe=D("20.00"))
    datos = consultar_pedido(pool, contexto=ANA, pedido=PEDIDO_ANA)
    assert (datos["reembolsado"], datos["reembolsable"]) == ("20.00", "0.00")
    assert (datos["lineas"][0]["unidades_reembolsadas"], datos["lineas"][0]["unidades_libres"]) == (1, 0)
    # Con dos unidades, la segunda sigue libre.
    pedido = crear_pedido(bd_url, "C-0001", [("MEN-001", 2)])
    reembolso(pool, pedido=pedido, tool_call_id="call-2", importe=D("20.00"))
    datos = consultar_pedido(pool, contexto=ANA, pedido=pedido)
    assert (datos["importe"], datos["reembolsado"], datos["reembolsable"]) == ("49.80", "20.00", "24.90")


def test_alternativas_de_la_misma_categoria_con_stock_en_la_tienda_por_diferencia(pool):
    datos = stock_alternativas(pool, contexto=ANA, sku="caf-001")
    assert (datos["sku"], datos["categoria"], datos["pvp"]) == ("CAF-001", "cafeteras", "120.00")
    assert [(a["sku"], a["diferencia"], a["unidades"]) for a in datos["alternativas"]] == [
        ("CAF-002", "-90.10", 8), ("CAF-005", "-51.00", 8), ("CAF-003", "0.00", 8),
        ("CAF-004", "129.00", 2),
    ]
    fijar_stock(pool, "CAF-004", 0)
    assert "CAF-004" not in [a["sku"] for a in stock_alternativas(pool, contexto=ANA, sku="CAF-001")["alternativas"]]


def test_alternativas_solo_miran_la_tienda_del_cliente(pool):
    # TEX-004 está agotado en Madrid-Centro y no en Talavera.
    madrid = [a["sku"] for a in stock_alternativas(pool, contexto=CARMEN, sku="TEX-002")["alternativas"]]
    talavera = [a["sku"] for a in stock_alternativas(pool, contexto=ANA, sku="TEX-002")["alternativas"]]
    assert "TEX-004" not in madrid and "TEX-004" in talavera


def test_producto_sin_alternativas_y_producto_inexistente(pool):
    assert stock_alternativas(pool, contexto=ANA, sku="REP-001")["alternativas"] == []
    with pytest.raises(ProductoNoEncontrado, match="producto no encontrado: NO-999"):
        stock_alternativas(pool, contexto=ANA, sku="NO-999")


# --- Propiedad del pedido --------------------------------------------------------------

OPERACIONES = {
    "consultar_pedido": lambda pool, pedido: consultar_pedido(pool, contexto=ANA, pedido=pedido),
    "reembolsar": lambda pool, pedido: reembolso(pool, pedido=pedido, importe=D("10.00")),
    "sustituir": lambda pool, pedido: cambio(pool, pedido=pedido, sku_original="MEN-001",
                                              sku_nuevo="MEN-003"),
}


@pytest.mark.parametrize("operacion", sorted(OPERACIONES))
def test_pedido_de_otro_cliente_responde_igual_que_uno_que_no_existe(pool, operacion):
    ejecutar = OPERACIONES[operacion]
    antes = efectos(pool)
    with pytest.raises(PedidoNoEncontrado) as ajeno:
        ejecutar(pool, PEDIDO_BRUNO)
    assert efectos(pool) == antes
    # El mismo número cuando el pedido ya no existe: la respuesta no puede distinguirse.
    with pool.connection() as c, c.transaction():
        c.execute("DELETE FROM lineas_pedido WHERE pedido_id = %s", (PEDIDO_BRUNO,))
        c.execute("DELETE FROM pedidos WHERE id = %s", (PEDIDO_BRUNO,))
    with pytest.raises(PedidoNoEncontrado) as inexistente:
        ejecutar(pool, PEDIDO_BRUNO)
    assert str(ajeno.value) == str(inexistente.value) == f"pedido no encontrado: {PEDIDO_BRUNO}"
    assert ajeno.value.datos == inexistente.value.datos
    assert efectos(pool) == antes


# --- reembolsar ------------------------------------------------------------------------


def test_reembolso_emitido_con_devolucion_movimiento_y_quien_lo_aprobo(pool):
    resultado = reembolso(pool, aprobado_por="enc-talavera", trace_id="traza-1", lineas=[1])
    assert resultado == {"reembolso": "RE-000001", "pedido": PEDIDO_ANA, "importe": "120.00",
                         "estado": "emitido", "repetido": False,
                         "unidades": [{"linea": 1, "unidades": 1}]}
    fila = fila_reembolso(pool, "RE-000001")
    assert (fila["estado"], fila["aprobado_por"], fila["trace_id"]) == ("emitido", "enc-talavera", "traza-1")
    assert fila["clave_idempotencia"] == "hilo-1:call-1" and fila["emitido_en"] is not None
    assert fila["lineas"] == [1] and fila["tienda"] == "talavera"
    with pool.connection() as c:
        devolucion = c.execute("SELECT * FROM devoluciones WHERE reembolso_id = %s", (fila["id"],)).fetchone()
        movimiento = c.execute("SELECT * FROM pasarela_movimientos").fetchall()
    assert (devolucion["importe"], devolucion["cliente_id"]) == (D("120.00"), "C-0001")
    assert [(m["referencia"], m["importe"], m["tipo"]) for m in movimiento] == [
        ("RE-000001", D("120.00"), "reembolso")]


def test_reembolso_por_encima_de_lo_reembolsable_se_rechaza_y_no_escribe_nada(pool, bd_url):
    antes = efectos(pool)
    with pytest.raises(ImporteNoValido) as error:
        reembolso(pool, importe=D("130.00"))
    assert error.value.mensaje.startswith(
        "el importe 130,00 EUR supera lo reembolsable del pedido (120,00 EUR)")
    assert error.value.datos["maximo"] == "120.00"
    assert efectos(pool) == antes

    # Dos sartenes de 24,90: 30,00 ocupan las dos (24,90 + 5,10) y ya no queda nada.
    pedido = crear_pedido(bd_url, "C-0001", [("MEN-001", 2)])
    reembolso(pool, pedido=pedido, tool_call_id="call-parcial", importe=D("30.00"))
    despues_parcial = efectos(pool)
    with pytest.raises(ImporteNoValido, match=r"1,00 EUR supera lo reembolsable del pedido \(0,00 EUR\)"):
        reembolso(pool, pedido=pedido, tool_call_id="call-resto", importe=D("1.00"))
    assert efectos(pool) == despues_parcial
    # Una sartén sola (20,00 de 24,90) deja la otra libre.
    otro = crear_pedido(bd_url, "C-0001", [("MEN-001", 2)])
    reembolso(pool, pedido=otro, tool_call_id="call-una", importe=D("20.00"))
    assert reembolso(pool, pedido=otro, tool_call_id="call-otra", importe=D("24.90"))["estado"] == "emitido"


@pytest.mark.parametrize("importe", [D("0"), D("-5.00"), D("10.001"), "diez"])
def test_importe_cero_negativo_o_con_mas_de_dos_decimales_se_rechaza(pool, importe):
    antes = efectos(pool)
    with pytest.raises(ImporteNoValido):
        reembolso(pool, importe=importe)
    assert efectos(pool) == antes


def test_lineas_que_no_son_del_pedido_o_importe_mayor_que_sus_lineas_se_rechazan(pool):
    antes = efectos(pool)
    with pytest.raises(ErrorDominio, match="no tiene la línea 7"):
        reembolso(pool, lineas=[7])
    with pool.connection() as c:
        c.execute("INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario) "
                  "VALUES (%s, 2, 'REP-001', 1, 0.00)", (PEDIDO_ANA,))
    with pytest.raises(ImporteNoValido, match="supera lo reembolsable de las líneas indicadas"):
        reembolso(pool, lineas=[2], importe=D("10.00"))
    assert efectos(pool) == antes


def test_la_misma_llamada_dos_veces_da_un_reembolso_y_repetido(pool):
    primero = reembolso(pool)
    antes = efectos(pool)
    segundo = reembolso(pool)
    assert primero["repetido"] is False and segundo["repetido"] is True
    assert {**primero, "repetido": True} == segundo
    assert efectos(pool) == antes
    assert (antes["reembolsos"], antes["pasarela_movimientos"]) == (1, 1)


def test_la_misma_clave_con_otro_importe_o_pedido_es_conflicto_y_no_crea_nada(pool):
    reembolso(pool, importe=D("50.00"))
    antes = efectos(pool)
    with pytest.raises(ConflictoIdempotencia, match="ya se ejecutó con otros datos"):
        reembolso(pool, importe=D("60.00"))
    with pytest.raises(ConflictoIdempotencia):
        reembolso(pool, importe=D("14.90"), pedido="P-20260919-0055")
    assert efectos(pool) == antes
    # La misma llamada en otro hilo es otra clave (la cafetera ya está compensada: la jarra).
    otra = reembolso(pool, thread_id="hilo-2", importe=D("14.90"), pedido="P-20260919-0055")
    assert otra["repetido"] is False


@pytest.mark.parametrize("clave", [{"tool_call_id": ""}, {"tool_call_id": None}, {"thread_id": ""}])
def test_sin_tool_call_id_o_sin_hilo_no_se_reembolsa(pool, clave):
    antes = efectos(pool)
    with pytest.raises(ContextoAusente, match="no se ejecute dos veces"):
        reembolso(pool, **clave)
    assert efectos(pool) == antes


class PasarelaCita:
    """Retiene a cada llamada hasta que llegan ``n``: fuerza a que se solapen de verdad."""

    def __init__(self, real, n: int = 2) -> None:
        self.real = real
        self.cita = threading.Barrier(n, timeout=30)
        self.referencias: list[str] = []

    def emitir_reembolso(self, referencia, importe):
        self.referencias.append(referencia)
        self.cita.wait()
        return self.real.emitir_reembolso(referencia, importe)


def en_paralelo(*funciones):
    """Lanza las funciones a la vez; devuelve (resultado | excepción) de cada una."""
    salida: list = [None] * len(funciones)
    salida_lista = threading.Barrier(len(funciones), timeout=30)

    def correr(i, f):
        salida_lista.wait()
        salida[i] = capturar(f)

    hilos = [threading.Thread(target=correr, args=(i, f)) for i, f in enumerate(funciones)]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(timeout=60)
    assert not any(h.is_alive() for h in hilos)
    return salida


@pytest.mark.temporal
def test_dos_hilos_con_la_misma_llamada_a_la_vez_dan_un_reembolso_y_un_movimiento(pool):
    # La cita obliga a que las dos ejecuciones estén dentro de la pasarela a la vez: la
    # segunda vio el reembolso 'pendiente' de la primera y repite la llamada.
    pasarela = PasarelaCita(pasarela_ok(pool))
    resultados = en_paralelo(lambda: reembolso(pool, pasarela=pasarela),
                             lambda: reembolso(pool, pasarela=pasarela))
    assert not [r for r in resultados if isinstance(r, Exception)], resultados
    assert sorted(r["repetido"] for r in resultados) == [False, True]
    assert {r["reembolso"] for r in resultados} == {"RE-000001"}
    assert pasarela.referencias == ["RE-000001", "RE-000001"]
    assert (contar(pool, "reembolsos"), contar(pool, "pasarela_movimientos")) == (1, 1)
    assert fila_reembolso(pool, "RE-000001")["estado"] == "emitido"


@pytest.mark.temporal
def test_dos_reembolsos_distintos_a_la_vez_no_superan_lo_reembolsable(pool, bd_url):
    # El test retiene el pedido: las dos llamadas quedan en cola en el mismo punto y
    # compiten de verdad al soltarlo.
    resultados = en_carrera(
        pool, bd_url, "SELECT 1 FROM pedidos WHERE id = %s FOR UPDATE", (PEDIDO_ANA,),
        {clave: (lambda clave=clave: reembolso(pool, tool_call_id=clave, importe=D("80.00")))
         for clave in ("a", "b")},
    )
    assert sorted(type(r).__name__ for r in resultados.values()) == ["ImporteNoValido", "dict"]
    with pool.connection() as c:
        total = c.execute("SELECT sum(importe) AS s FROM reembolsos").fetchone()["s"]
    assert total == D("80.00") and contar(pool, "pasarela_movimientos") == 1


def test_pasarela_caida_deja_el_reembolso_pendiente_y_el_reintento_lo_completa(pool):
    with pytest.raises(ErrorPasarela) as error:
        reembolso(pool, pasarela=PasarelaSimulada(pool=pool, falla=True))
    assert "RE-000001" in error.value.mensaje and "pendiente" in error.value.mensaje
    fila = fila_reembolso(pool, "RE-000001")
    assert (fila["estado"], fila["emitido_en"]) == ("pendiente", None)
    assert contar(pool, "pasarela_movimientos") == 0
    # Lo pendiente ya cuenta: otro reembolso del mismo pedido no puede duplicarlo.
    assert consultar_pedido(pool, contexto=ANA, pedido=PEDIDO_ANA)["reembolsable"] == "0.00"
    with pytest.raises(ImporteNoValido):
        reembolso(pool, tool_call_id="call-otra")

    resultado = reembolso(pool)
    assert (resultado["estado"], resultado["repetido"]) == ("emitido", True)
    assert fila_reembolso(pool, "RE-000001")["estado"] == "emitido"
    assert contar(pool, "pasarela_movimientos") == 1 and contar(pool, "reembolsos") == 1


def test_completar_pendientes_termina_los_que_quedaron_a_medias(pool):
    with pytest.raises(ErrorPasarela):
        reembolso(pool, pasarela=PasarelaSimulada(pool=pool, falla=True))
    caida = PasarelaSimulada(pool=pool, falla=True)
    assert completar_pendientes(pool, caida, solo_vencidos=False).completados == []
    assert fila_reembolso(pool, "RE-000001")["estado"] == "pendiente"
    hechos = completar_pendientes(pool, pasarela_ok(pool), solo_vencidos=False).completados
    assert [h.movimiento.referencia for h in hechos] == ["RE-000001"]
    assert fila_reembolso(pool, "RE-000001")["estado"] == "emitido"
    assert completar_pendientes(pool, pasarela_ok(pool), solo_vencidos=False).completados == []
    assert contar(pool, "pasarela_movimientos") == 1


# --- Pasarela --------------------------------------------------------------------------


def test_la_pasarela_simulada_es_idempotente_por_referencia(pool):
    pasarela = pasarela_ok(pool)
    primero = pasarela.emitir_reembolso("RE-000042", D("10.00"))
    segundo = pasarela.emitir_reembolso("RE-000042", D("10.00"))
    assert (primero.nuevo, segundo.nuevo) == (True, False) and primero.id == segundo.id
    with pytest.raises(ErrorPasarela, match="otro importe"):
        pasarela.emitir_reembolso("RE-000042", D("11.00"))
    with pytest.raises(ErrorPasarela, match="no está disponible"):
        PasarelaSimulada(pool=pool, falla=True).emitir_reembolso("RE-000043", D("1.00"))
    assert contar(pool, "pasarela_movimientos") == 1


def test_pasarela_desde_ajustes_usa_retardo_y_fallo(pool):
    pasarela = pasarela_desde_ajustes(pool, Ajustes(pasarela_retardo=D("1.5"), pasarela_fallo=True))
    assert isinstance(pasarela, PasarelaSimulada)
    assert (pasarela.retardo, pasarela.falla) == (D("1.5"), True)
    assert pasarela_desde_ajustes(pool, Ajustes()).falla is False


# --- sustituir -------------------------------------------------------------------------


def test_sustitucion_mueve_el_stock_y_repetirla_no_lo_mueve_otra_vez(pool):
    resultado = cambio(pool, sku_nuevo="caf-003", aprobado_por="enc-talavera", trace_id="t-9")
    assert resultado == {"sustitucion": "SU-000001", "pedido": PEDIDO_ANA, "sku_original": "CAF-001",
                         "sku_nuevo": "CAF-003", "nombre_nuevo": "Cafetera espresso Crema 15 bar",
                         "linea": 1, "diferencia": "0.00", "estado": "hecha",
                         "liquidacion": {"tipo": "ninguna"}, "repetido": False}
    assert (unidades(pool, "CAF-001"), unidades(pool, "CAF-003")) == (9, 7)
    antes = efectos(pool)
    assert cambio(pool, sku_nuevo="CAF-003") == {**resultado, "repetido": True}
    assert efectos(pool) == antes
    with pytest.raises(ConflictoIdempotencia):
        cambio(pool, sku_nuevo="CAF-002")
    assert efectos(pool) == antes
    with pool.connection() as c:
        fila = c.execute("SELECT * FROM sustituciones").fetchone()
    assert (fila["pvp_original"], fila["pvp_nuevo"], fila["aprobado_por"], fila["trace_id"]) == (
        D("120.00"), D("120.00"), "enc-talavera", "t-9")


def test_sustitucion_mas_cara_da_la_diferencia_positiva_y_la_cobra(pool):
    resultado = cambio(pool)
    assert (resultado["diferencia"], resultado["estado"]) == ("129.00", "hecha")
    assert resultado["liquidacion"] == {"tipo": "cobro", "numero": "CO-000001", "importe": "129.00",
                                        "estado": "completado"}
    assert unidades(pool, "CAF-004") == 1


@pytest.mark.parametrize(
    ("sku_original", "sku_nuevo", "error", "texto"),
    [
        ("MEN-001", "MEN-003", ErrorDominio, "no está en el pedido"),
        ("CAF-001", "MEN-003", ErrorDominio, "misma categoría"),
        ("CAF-001", "CAF-999", ProductoNoEncontrado, "producto no encontrado"),
        ("CAF-001", "CAF-001", ErrorDominio, "el mismo"),
    ],
)
def test_sustitucion_no_valida_no_cambia_nada(pool, sku_original, sku_nuevo, error, texto):
    antes = efectos(pool)
    with pytest.raises(error, match=texto):
        cambio(pool, sku_original=sku_original, sku_nuevo=sku_nuevo)
    assert efectos(pool) == antes


def test_sustitucion_sin_stock_al_ejecutar_caduca_y_no_cambia_nada(pool):
    fijar_stock(pool, "CAF-004", 0)
    antes = efectos(pool)
    with pytest.raises(AprobacionCaducada, match="la aprobación ha caducado: ya no queda stock de CAF-004"):
        cambio(pool, aprobado_por="enc-talavera")
    assert efectos(pool) == antes and unidades(pool, "CAF-001") == 8


def guardar_evaluacion(pool, *, tool_call_id="call-s1", sku_nuevo="CAF-004", umbrales):
    with pool.connection() as c:
        c.execute(
            """INSERT INTO evaluaciones_politica (thread_id, tool_call_id, herramienta, args,
                   tienda, cliente_id, requiere_encargado, umbrales)
               VALUES ('hilo-1', %s, 'sustituir', %s, 'talavera', 'C-0001', true, %s)""",
            (tool_call_id, Jsonb({"pedido": PEDIDO_ANA, "sku_original": "CAF-001", "sku_nuevo": sku_nuevo}),
             Jsonb(umbrales)),
        )


@pytest.mark.parametrize("sku_cambiado", ["CAF-004", "CAF-001"])
def test_sustitucion_con_precio_cambiado_desde_la_propuesta_caduca(pool, sku_cambiado):
    guardar_evaluacion(pool, umbrales={"pvp_original": "120.00", "pvp_nuevo": "249.00"})
    fijar_pvp(pool, sku_cambiado, D("259.00"))
    antes = efectos(pool)
    with pytest.raises(AprobacionCaducada) as error:
        cambio(pool, aprobado_por="enc-talavera")
    assert error.value.mensaje.startswith("la aprobación ha caducado: el precio de " + sku_cambiado)
    assert "259,00 EUR ahora" in error.value.mensaje
    assert efectos(pool) == antes
    # Con el precio de la propuesta, la misma llamada sí se ejecuta.
    fijar_pvp(pool, sku_cambiado, D("249.00") if sku_cambiado == "CAF-004" else D("120.00"))
    assert cambio(pool, aprobado_por="enc-talavera")["diferencia"] == "129.00"


def test_precio_de_la_propuesta_como_numero_y_evaluacion_de_otros_sku_no_cuenta(pool):
    with pool.connection() as c:  # dos cafeteras: cada cambio usa su unidad
        c.execute("UPDATE lineas_pedido SET unidades = 2 WHERE pedido_id = 'P-20260917-0041'")
    guardar_evaluacion(pool, umbrales={"pvp_original": 120, "pvp_nuevo": 249.0})
    guardar_evaluacion(pool, tool_call_id="call-editada", sku_nuevo="CAF-005",
                       umbrales={"pvp_original": "999.00", "pvp_nuevo": "999.00"})
    assert cambio(pool)["repetido"] is False
    # Un encargado editó sku_nuevo: el precio guardado era de otro producto.
    assert cambio(pool, tool_call_id="call-editada", sku_nuevo="CAF-003")["sku_nuevo"] == "CAF-003"


@pytest.mark.temporal
def test_dos_sustituciones_a_la_vez_por_la_ultima_unidad_solo_gana_una(pool, bd_url):
    # Pedidos de dos clientes distintos: solo compiten por la fila de stock. El test la
    # retiene hasta que las dos esperan por ella, y entonces la suelta.
    # Los dos de mismo precio (CAF-001 -> CAF-003): el stock se mueve dentro de la transacción.
    fijar_stock(pool, "CAF-003", 1)
    pedido_irene = crear_pedido(bd_url, "C-0009", [("CAF-001", 1)])
    antes = efectos(pool)
    llamadas = {
        "ana": lambda: cambio(pool, tool_call_id="call-ana", sku_nuevo="CAF-003"),
        "irene": lambda: cambio(pool, contexto=IRENE, pedido=pedido_irene, sku_nuevo="CAF-003",
                                tool_call_id="call-irene", thread_id="hilo-irene"),
    }
    resultados = en_carrera(
        pool, bd_url, "SELECT 1 FROM stock WHERE tienda = 'talavera' AND sku = %s FOR UPDATE",
        ("CAF-003",), llamadas,
    )
    ganadoras = [r for r in resultados.values() if isinstance(r, dict)]
    perdedoras = [r for r in resultados.values() if isinstance(r, Exception)]
    assert len(ganadoras) == 1 and len(perdedoras) == 1, resultados
    assert isinstance(perdedoras[0], AprobacionCaducada)
    assert "la aprobación ha caducado" in perdedoras[0].mensaje
    assert unidades(pool, "CAF-003") == 0
    assert contar(pool, "sustituciones") == 1 and contar(pool, "compensaciones_unidad") == 1
    # 8 y solo la ganadora devolvió su unidad al stock.
    assert unidades(pool, "CAF-001") == 9
    assert efectos(pool)["stock"] == antes["stock"]


# --- Las herramientas: esquema e inyección del runtime ---------------------------------


def test_las_herramientas_tienen_los_nombres_del_contrato_y_ningun_runtime_en_el_esquema(herramientas):
    assert tuple(h.name for h in herramientas) == REGISTRO.nombres
    # Las de consulta más las de cada operación con efecto declarada.
    assert set(REGISTRO.nombres) == {"consultar_pedido", "consultar_politica", "stock_alternativas",
                                     "consultar_encargado"} | {h for op in DECLARADAS for h in op.herramientas}
    for h in herramientas:
        esquema = h.tool_call_schema.model_json_schema()
        assert "runtime" not in esquema.get("properties", {}), h.name
        assert "runtime" not in json.dumps(esquema)
        assert h.description and "\n    " not in h.description


def test_el_esquema_de_reembolsar_que_ve_el_modelo(herramientas):
    from langchain_core.utils.function_calling import convert_to_openai_tool

    funcion = convert_to_openai_tool(next(h for h in herramientas if h.name == "reembolsar"))["function"]
    parametros = funcion["parameters"]
    assert set(parametros["properties"]) == {"pedido", "importe", "motivo", "lineas"}
    assert set(parametros["required"]) == {"pedido", "importe", "motivo"}
    assert parametros["properties"]["importe"]["type"] == "number"
    descripciones = {k: v["description"] for k, v in parametros["properties"].items()}
    assert "euros" in descripciones["importe"] and "reembolsable" in descripciones["importe"]
    assert "P-AAAAMMDD-NNNN" in descripciones["pedido"]
    assert "motivo" in descripciones["motivo"].lower() and "línea" in descripciones["lineas"]
    assert "Úsala solo cuando el cliente" in funcion["description"]


def test_cada_herramienta_por_tool_invoke_con_un_toolruntime_real(pool, bd_url, herramientas):
    pedido = invocar(herramientas, "consultar_pedido", {"pedido": PEDIDO_ANA},
                     runtime(ANA, tool_call_id="c1"))
    assert isinstance(pedido, ToolMessage) and pedido.tool_call_id == "c1"
    assert json.loads(pedido.content)["reembolsable"] == "120.00"

    politica = invocar(herramientas, "consultar_politica", {}, runtime(ANA, tool_call_id="c2"))
    assert "Talavera de la Reina" in politica.content

    alternativas = json.loads(invocar(herramientas, "stock_alternativas", {"sku": "CAF-001"},
                                      runtime(ANA, tool_call_id="c3")).content)
    assert alternativas["alternativas"][0]["sku"] == "CAF-002"

    metadatos = {"aprobado_por": "enc-talavera", "trace_id": "traza-x"}
    rt = runtime(ANA, tool_call_id="c4", thread_id="hilo-tool", metadata=metadatos)
    # El modelo manda números JSON: 24.9 llega como Decimal("24.9"), sin ruido de float.
    args = {"pedido": PEDIDO_ANA, "importe": 24.9, "motivo": "no funciona"}
    hecho = json.loads(invocar(herramientas, "reembolsar", args, rt).content)
    assert hecho == {"reembolso": "RE-000001", "pedido": PEDIDO_ANA, "importe": "24.90",
                     "estado": "emitido", "repetido": False,
                     "unidades": [{"linea": 1, "unidades": 1}]}
    fila = fila_reembolso(pool, "RE-000001")
    assert (fila["clave_idempotencia"], fila["aprobado_por"], fila["trace_id"]) == (
        "hilo-tool:c4", "enc-talavera", "traza-x")
    assert json.loads(invocar(herramientas, "reembolsar", args, rt).content)["repetido"] is True

    # La cafetera ya está reembolsada (en parte): cambiarla se rechaza; la de otro pedido, no.
    with pytest.raises(ErrorDominio, match="una sola vez"):
        invocar(herramientas, "sustituir",
                {"pedido": PEDIDO_ANA, "sku_original": "CAF-001", "sku_nuevo": "CAF-002"},
                runtime(ANA, tool_call_id="c5", metadata=metadatos))
    pedido = crear_pedido(bd_url, "C-0001", [("CAF-001", 1)])
    cambiado = json.loads(invocar(
        herramientas, "sustituir", {"pedido": pedido, "sku_original": "CAF-001", "sku_nuevo": "CAF-002"},
        runtime(ANA, tool_call_id="c5b", metadata=metadatos)).content)
    assert (cambiado["sustitucion"], cambiado["diferencia"]) == ("SU-000001", "-90.10")
    assert cambiado["liquidacion"] == {"tipo": "reembolso", "numero": "RE-000002", "importe": "90.10",
                                       "estado": "completado"}

    espera = invocar(herramientas, "consultar_encargado", {"pregunta": "¿Se puede cambiar fuera de plazo?"},
                     runtime(ANA, tool_call_id="c6"))
    assert espera.content == RESPUESTA_ENCARGADO_EN_ESPERA


def test_las_herramientas_leen_el_cliente_del_contexto_nunca_de_los_argumentos(pool, herramientas):
    # Un argumento «cliente» inventado por el modelo se ignora; manda el contexto.
    with pytest.raises(PedidoNoEncontrado):
        invocar(herramientas, "consultar_pedido", {"pedido": PEDIDO_BRUNO, "cliente_id": "C-0002"},
                runtime(ANA, tool_call_id="c1"))
    with pytest.raises(ContextoAusente):
        invocar(herramientas, "consultar_pedido", {"pedido": PEDIDO_ANA}, runtime(None, tool_call_id="c2"))
    antes = efectos(pool)
    with pytest.raises(ContextoAusente):
        invocar(herramientas, "reembolsar", {"pedido": PEDIDO_ANA, "importe": 10, "motivo": "x"},
                runtime(ANA, tool_call_id=""))
    assert efectos(pool) == antes


def test_dentro_de_un_grafo_langgraph_inyecta_el_runtime_con_contexto_hilo_y_metadatos(pool, herramientas):
    grafo = StateGraph(MessagesState, context_schema=ContextoCliente)
    grafo.add_node("tools", ToolNode(herramientas))
    grafo.add_edge(START, "tools")
    grafo.add_edge("tools", END)
    llamada = {"name": "reembolsar", "id": "call-grafo", "type": "tool_call",
               "args": {"pedido": PEDIDO_ANA, "importe": "30.00", "motivo": "no enciende"}}
    salida = grafo.compile().invoke(
        {"messages": [AIMessage(content="", tool_calls=[llamada])]},
        config={"configurable": {"thread_id": "hilo-grafo"}, "metadata": {"aprobado_por": "enc-talavera"}},
        context=ANA,
    )
    mensaje = salida["messages"][-1]
    assert isinstance(mensaje, ToolMessage) and mensaje.tool_call_id == "call-grafo"
    assert json.loads(mensaje.content)["importe"] == "30.00"
    fila = fila_reembolso(pool, "RE-000001")
    assert (fila["clave_idempotencia"], fila["aprobado_por"], fila["cliente_id"]) == (
        "hilo-grafo:call-grafo", "enc-talavera", "C-0001")


def test_no_se_cambia_dos_veces_la_misma_unidad(pool):
    from nucleo.contexto import ContextoCliente
    from operaciones.sustitucion.herramienta import sustituir

    ctx = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana")
    primero = sustituir(pool, contexto=ctx, thread_id="h1", tool_call_id="c1",
                        pedido="P-20260917-0041", sku_original="CAF-001", sku_nuevo="CAF-002",
                        pasarela=pasarela_ok(pool))
    assert primero["repetido"] is False
    with pytest.raises(ErrorDominio, match="ya se reembolsaron o se cambiaron"):
        sustituir(pool, contexto=ctx, thread_id="h2", tool_call_id="c2",
                  pedido="P-20260917-0041", sku_original="CAF-001", sku_nuevo="CAF-003",
                  pasarela=pasarela_ok(pool))
