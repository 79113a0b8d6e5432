"""Lo que el cliente niega, retira o limita en su mensaje cambia las tareas que lee el modelo offline.

Sin base de datos: ``lectura.tareas`` sobre frases sueltas. Las historias completas, por el
agente real, están en ``tests/integracion/test_agente_entiende.py``.
"""

from __future__ import annotations

import pytest

from agente.modelo_offline.articulo import PATRON
from agente.modelo_offline.lectura import tareas
from agente.modelo_offline.matices import articulo_nombrado, unidades_nombradas

VAJILLA = "P-20261012-0099"
SARTEN = "P-20260920-0102"
CAFETERA = "P-20260917-0041"


def _leidas(texto: str) -> list[tuple[str, str | None]]:
    return [(t.tipo, t.pedido) for t in tareas(texto, [])]


@pytest.mark.parametrize(("texto", "esperadas"), [
    # Negar una operación junto a otra: solo queda la otra.
    (f"Quiero que me compenséis con 30 euros por el pedido {VAJILLA}, sin devolverlo", [("vale", VAJILLA)]),
    (f"No quiero el reembolso, prefiero un vale por la vajilla del pedido {VAJILLA}", [("vale", VAJILLA)]),
    (f"Quiero cambiar la sartén del pedido {SARTEN} en vez de devolverla", [("cambio", SARTEN)]),
    (f"En vez de devolver la cafetera del pedido {CAFETERA}, cámbiamela por la CAF-005", [("cambio", CAFETERA)]),
    # Retirar en el mismo mensaje: nada que hacer.
    (f"Iba a devolver el pedido {SARTEN}, bueno no, mejor me lo quedo", [("retirada", SARTEN)]),
    (f"Quería devolver la sartén del pedido {SARTEN}... al final no", [("retirada", SARTEN)]),
    (f"Quiero devolver la sartén del pedido {SARTEN}. Mejor no, olvídalo", [("retirada", SARTEN)]),
    (f"No quiero el reembolso del pedido {CAFETERA}", [("retirada", CAFETERA)]),
    ("Cancela el pedido P-20261008-0201, bueno no, que siga adelante", [("retirada", "P-20261008-0201")]),
    ("No canceléis el pedido P-20261008-0201", [("retirada", "P-20261008-0201")]),
    ("No me ha llegado el pedido P-20261010-0300, pero prefiero esperar", [("retirada", "P-20261010-0300")]),
    # Varias operaciones: la retirada anula solo la suya.
    (f"Quiero un vale de 5 euros por la vajilla del pedido {VAJILLA} y devolver la sartén del pedido "
     f"{SARTEN}, bueno no, la sartén me la quedo", [("vale", VAJILLA)]),
    # Lo que parece una negación y no lo es.
    (f"Mejor no, quiero devolver la sartén del pedido {SARTEN}", [("reembolso", SARTEN)]),
    (f"Al final quiero devolver la sartén del pedido {SARTEN}", [("reembolso", SARTEN)]),
    (f"¿Por qué no me devolvéis el dinero del pedido {CAFETERA}?", [("reembolso", CAFETERA)]),
    ("Al final no me ha llegado el pedido P-20261010-0300", [("reenvio", "P-20261010-0300")]),
    # Una corrección del destino es un cambio de dirección.
    ("Perdona, al final mejor que el pedido P-20260914-0025 me llegue a Barcelona: Calle Hospital 20, "
     "1º 2ª, 08001 Barcelona.", [("direccion", "P-20260914-0025")]),
    ("Aún no he recibido el pedido P-20261010-0300", [("reenvio", "P-20261010-0300")]),
])
def test_negar_retirar_o_corregir_cambia_las_tareas_leidas(texto, esperadas):
    assert _leidas(texto) == esperadas


def test_no_haber_recibido_el_reembolso_no_es_un_reenvio():
    assert "reenvio" not in {tipo for tipo, _ in _leidas(f"Aún no he recibido el reembolso del pedido {SARTEN}")}


@pytest.mark.parametrize(("texto", "unidades"), [
    ("Quiero devolver una sartén", 1),
    ("quiero devolver 1 sartén", 1),
    ("devuelvo una de las sartenes", 1),
    ("devuelvo dos sartenes", 2),
    ("quiero devolver la sartén", None),
    ("quiero un reembolso de la sartén", None),
])
def test_la_cantidad_que_nombra_el_cliente_limita_las_unidades(texto, unidades):
    assert unidades_nombradas(texto, "Sartén antiadherente 24 cm") == unidades


@pytest.mark.parametrize(("texto", "articulo"), [
    ("quiero devolver la jarra del pedido P-20261201-0001", "jarra"),
    ("Quiero devolver las sábanas del pedido", "sábanas"),
    ("Quiero devolver el pedido P-20260920-0102", None),
    ("quiero el reembolso del pedido", None),
    ("devolver el juego de sábanas", None),
])
def test_el_articulo_que_nombra_el_cliente_se_lee_tras_la_operacion(texto, articulo):
    assert articulo_nombrado(texto, PATRON["reembolso"]) == articulo


def test_me_equivoque_de_un_dato_corrige_y_me_equivoque_a_secas_retira():
    corrige = ("Mandadlo desde el P-20260914-0025 a la Calle Luna 2, 28004 Madrid; me equivoqué de número, "
               "es Calle Luna 12, 28004 Madrid")
    assert [t.tipo for t in tareas(corrige, [])] == ["direccion"]
    assert [t.tipo for t in tareas("Devolved la tostadora del P-20260914-0025. Uy, no, me equivoqué", [])] == [
        "retirada"]
