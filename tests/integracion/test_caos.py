"""Un modelo que no es de fiar no se salta las garantías (issue 42, punto 4).

El modelo del caos (``tests/apoyo/caos.py``: estrategias de Hypothesis sobre las llamadas a
herramientas y el texto) conduce el agente real (``create_agent`` con su middleware, la
firma y la política) por ``Servicio.conversar``, la misma puerta que el chat web, sobre una
base con la demo. Tras cada conversación, ``tests/apoyo/caos_invariantes.py`` mira las
tablas: ningún efecto sin la firma que pide la política, nada sobre pedidos ni datos de
otro cliente, ningún error interno (un 500), cada turno con su respuesta y cada afirmación
falsa que lee el cliente marcada por el comprobador de afirmaciones.

Una base por módulo (cada conversación es un hilo nuevo de un cliente al azar): 200
conversaciones caben en el presupuesto de ``make test``. Más: ``CAOS_EJEMPLOS=2000`` o
``python -m bench --solo caos``. Las últimas pruebas quitan una guarda a propósito (la
comprobación de que el pedido es del cliente): la propiedad tiene que fallar.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from hypothesis.errors import FlakyFailure

from herramientas import pedidos
from tests.apoyo.bases import borrar_base, crear_base
from tests.apoyo.caos_invariantes import abrir_banco, propiedad

EJEMPLOS = int(os.environ.get("CAOS_EJEMPLOS", "200"))

# Lo mismo que las consultas de caja/libro.py y herramientas/pedidos.py, sin el dueño.
SIN_DUENO_BLOQUEO = """
SELECT id, cliente_id, tienda, importe FROM pedidos
WHERE id = %(pedido)s AND %(cliente_id)s::text IS NOT NULL
FOR UPDATE
"""


@pytest.fixture
def banco_nuevo(url_admin, plantillas):
    """Una base con la demo y el servicio del caos encima; se borra al acabar."""
    nombre = f"caos_{uuid.uuid4().hex[:10]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["demo"])
    banco = abrir_banco(url)
    yield banco
    banco.servicio.cerrar()
    borrar_base(url_admin, nombre)


def test_el_modelo_del_caos_no_se_salta_ninguna_garantia(banco_nuevo):
    inicio = time.perf_counter()
    propiedad(banco_nuevo, EJEMPLOS)
    duracion = time.perf_counter() - inicio
    cuenta = banco_nuevo.cuenta
    print(f"caos: {EJEMPLOS} ejemplos en {duracion:.1f} s: {cuenta}")
    assert cuenta["conversaciones"] >= EJEMPLOS
    # El caos no es trivial: hubo efectos, pausas, llamadas a pedidos ajenos y mentiras leídas.
    for clave in ("efectos", "efectos_firmados", "pausas", "firmas", "retenidos", "llamadas_a_pedidos_ajenos",
                  "afirmaciones_leidas"):
        assert cuenta[clave] > 0, (clave, cuenta)


# --- la propiedad puede fallar: una guarda quitada a propósito ---------------------------------

def _sin_dueno(sql: str) -> str:
    """La consulta de verdad con la condición del dueño cambiada por una que siempre se cumple:
    el mutante sigue la forma que tenga hoy la consulta (sus columnas nuevas incluidas)."""
    condicion = "p.cliente_id = %(cliente_id)s"
    assert condicion in sql, "la consulta ya no filtra por el dueño así: actualiza el mutante"
    return sql.replace(condicion, "%(cliente_id)s::text IS NOT NULL")


MUTANTES = {
    # reembolsar, sustituir, vale, reenvío...: el pedido se bloquea sin mirar de quién es.
    "efecto_ajeno": ("caja.libro.BLOQUEAR_PEDIDO_SQL", SIN_DUENO_BLOQUEO),
    # consultar_pedido enseña cualquier pedido.
    "revelado": ("herramientas.pedidos.SELECT_PEDIDO_SQL", _sin_dueno(pedidos.SELECT_PEDIDO_SQL)),
}


@pytest.mark.parametrize("garantia", sorted(MUTANTES))
def test_sin_la_comprobacion_del_dueno_la_propiedad_falla(banco_nuevo, monkeypatch, garantia):
    destino, sql = MUTANTES[garantia]
    monkeypatch.setattr(destino, sql)
    # Al repetir el ejemplo que falló, la base ya no es la misma (el efecto ajeno ya está hecho):
    # Hypothesis puede avisar de un fallo que no se reproduce (FlakyFailure); las garantías
    # rotas de la primera conversación que falló las guarda el banco.
    with pytest.raises((AssertionError, FlakyFailure)):
        propiedad(banco_nuevo, 150, encoger=False)
    print(f"mutante {garantia}: " + "; ".join(banco_nuevo.rotas))
    assert any(r.startswith(f"{garantia}:") for r in banco_nuevo.rotas), banco_nuevo.rotas


# --- lo que encontró el caos ------------------------------------------------------------------


def test_un_nulo_del_modelo_o_una_respuesta_en_blanco_no_rompen_el_turno(banco_nuevo):
    # Antes: el U+0000 en los argumentos rompía el ``when`` de la firma (DataError al guardar
    # el veredicto) y el cliente leía la disculpa; una respuesta «\n» llegaba como mensaje vacío.
    from tests.apoyo.caos import Plan, Turno
    from tests.apoyo.caos_invariantes import comprobar, ejecutar

    pedido = banco_nuevo.mundo.frescos["C-0002"][0]
    nulo = {"name": "consultar_pedido", "args": {"pedido": f"{pedido}\x00"}, "id": "call_nulo"}
    plan = Plan("C-0002", [Turno(pasos=[("", [nulo])], final="Hecho\x00.\n<<ECO>>"),
                           Turno(pasos=[], final="\n  ")])
    resultado = ejecutar(banco_nuevo.servicio, banco_nuevo.modelo, plan)
    assert comprobar(banco_nuevo.servicio.pool, resultado, banco_nuevo.mundo) == []  # ni disculpa ni error registrado
    primera, segunda = resultado.respuestas
    assert primera.estado == "respondida" and "\x00" not in primera.mensaje_cliente
    assert "\ufffd" in primera.mensaje_cliente and "no encontrado" in primera.mensaje_cliente.lower(), primera
    assert segunda.mensaje_cliente.strip() and segunda.mensaje_cliente.startswith("Lo siento")
