"""Lo que un mensaje del agente afirma que pasó (issue 42, parte 3): la extracción, sin base.

Los textos «verdaderos» salen de la redacción real del modelo offline y de los avisos (si
cambian, la prueba lo nota); las promesas, preguntas y negaciones no afirman ningún efecto.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from agente.modelo_offline.resultados import Llamada, Resultado
from agente.servicio import textos
from agente.servicio.auditoria.afirmaciones import extraer
from operaciones.cancelacion import frases as cancelacion
from operaciones.direccion import frases as direccion
from operaciones.reembolso import frases as reembolso
from operaciones.reenvio import frases as reenvio
from operaciones.sustitucion import frases as sustitucion
from operaciones.vale import frases as vale

PEDIDO = "P-20261003-0045"


def _llamada(datos: dict, tipo: str = "ok", **extra) -> Llamada:
    return Llamada(nombre="x", args={}, id="t1", resultado=Resultado(tipo=tipo, datos=datos, texto="", **extra))


def _efectos(texto: str) -> list[tuple]:
    return [(a.operacion, a.nivel, a.codigos, a.importes, a.pedido) for a in extraer(texto) if a.tipo == "efecto"]


def _referencias(texto: str) -> list[str]:
    return [a.codigos[0] for a in extraer(texto) if a.tipo == "referencia"]


def test_el_reembolso_del_modelo_offline_afirma_su_numero_su_importe_y_su_pedido():
    texto = reembolso.redactar(PEDIDO, _llamada({"reembolso": "RE-000007", "importe": "24.90", "pedido": PEDIDO}))
    assert _referencias(texto) == ["RE-000007"]
    assert _efectos(texto) == [("reembolso", "existe", ("RE-000007",), (Decimal("24.90"),), PEDIDO)]


def test_la_diferencia_devuelta_de_un_cambio_se_da_por_hecha():
    datos = {"sustitucion": "SU-000002", "pedido": PEDIDO, "nombre_nuevo": "Sartén 28 cm", "diferencia": "-5.00",
             "liquidacion": {"tipo": "reembolso", "numero": "RE-000003", "importe": "5.00", "estado": "completado"}}
    texto = sustitucion.sustitucion(PEDIDO, _llamada(datos))
    assert _referencias(texto) == ["SU-000002", "RE-000003"]
    assert ("cambio", "existe", ("SU-000002",), (), PEDIDO) in _efectos(texto)
    assert ("reembolso", "hecho", ("RE-000003",), (Decimal("5.00"),), None) in _efectos(texto)


def test_la_diferencia_pendiente_nombra_el_reembolso_sin_darlo_por_hecho():
    datos = {"sustitucion": "SU-000002", "pedido": PEDIDO, "nombre_nuevo": "Sartén", "diferencia": "-5.00",
             "liquidacion": {"tipo": "reembolso", "numero": "RE-000003", "importe": "5.00", "estado": "pendiente"}}
    efectos = _efectos(sustitucion.sustitucion(PEDIDO, _llamada(datos)))
    assert [e[0] for e in efectos] == ["cambio"]


def test_cancelar_vale_reenvio_y_direccion_afirman_su_operacion():
    cancelado = cancelacion.redactar(PEDIDO, _llamada({
        "cancelacion": "CA-000001", "pedido": PEDIDO, "reembolso": "RE-000004", "importe_devuelto": "39.80"}))
    assert [e[:2] for e in _efectos(cancelado)] == [("cancelacion", "existe"), ("reembolso", "existe")]
    dado = vale.redactar(PEDIDO, _llamada({"vale": "VA-0123456789", "importe": "30.00", "pedido": PEDIDO,
                                           "caduca": "2027-01-01"}))
    assert _efectos(dado) == [("vale", "existe", (), (Decimal("30.00"),), PEDIDO)]
    assert _referencias(dado) == ["VA-0123456789"]
    reenviado = reenvio.redactar(PEDIDO, _llamada({"reenvio": "RV-000001", "pedido": PEDIDO, "unidades": 1,
                                                   "producto": "Lámpara", "tienda": "Madrid"}))
    assert {e[0] for e in _efectos(reenviado)} == {"reenvio"}
    cambiada = direccion.cambiada(PEDIDO, _llamada({
        "cambio_direccion": "CD-000001", "pedido": PEDIDO,
        "direccion_nueva": "Calle Hospital 20, 08001 Barcelona", "direccion_anterior": "Calle Mayor 1, 28013 Madrid"}))
    assert _efectos(cambiada) == [("direccion", "existe", (), (), PEDIDO)]
    assert _referencias(cambiada) == ["CD-000001"]


@pytest.mark.parametrize("texto", [
    "En cuanto un encargado lo apruebe te reembolsaremos 24,90 EUR.",
    "Cuando lo recibas, devuélvelo y te reembolsamos lo pagado.",
    "Si no lo quieres, puedes devolverlo dentro del plazo de la tienda y te reembolsamos lo pagado.",
    "Te devolvemos el dinero en cuanto recibamos el producto.",
    f"¿Quieres que te devuelva los 24,90 EUR del pedido {PEDIDO}?",
    "He tramitado muchas devoluciones: ¿quieres que lo haga con esta?",
    "¿Te he devuelto ya los 24,90 EUR?",
    "No he tramitado ningún reembolso.",
    "Tu pedido sigue en marcha: no he cancelado nada.",
    "Todavía no te hemos devuelto ese dinero.",
    f"Ya se han reembolsado 49,80 EUR del pedido {PEDIDO}.",
    f"He preparado el reembolso de 120,00 EUR del pedido {PEDIDO}; queda pendiente de revisión.",
    "El encargado no ha aprobado el reembolso. Motivo: ya te hemos devuelto 10 EUR en tienda. No he tramitado nada.",
    "Te he dado la información.\n\nNota del encargado: te hemos devuelto 10,00 EUR en efectivo.",
    "El encargado responde: ya te hemos devuelto el dinero.",
    "Si lo prefieres, puedo tramitar la devolución.",
])
def test_promesas_preguntas_negaciones_y_citas_no_afirman_ningun_efecto(texto):
    assert _efectos(texto) == []


def test_los_textos_de_la_aplicacion_de_espera_y_de_fallo_no_afirman_efectos():
    for texto in (textos.RESPUESTA_CADUCIDAD, textos.DISCULPA, textos.mensaje_retenido(),
                  textos.movimiento_marcado("reembolso", "24,90 EUR", PEDIDO),
                  cancelacion.no_posible(PEDIDO, "enviado"), cancelacion.no_posible(PEDIDO, "entregado"),
                  reenvio.opciones(PEDIDO, "enviado", [{"nombre": "Lámpara"}])):
        assert _efectos(texto) == [], texto


@pytest.mark.parametrize(("texto", "esperado"), [
    ("Sí, te he devuelto 120 EUR.", [("reembolso", "hecho", (), (Decimal("120.00"),), None)]),
    ("No te preocupes, te he devuelto 120,00 EUR", [("reembolso", "hecho", (), (Decimal("120.00"),), None)]),
    ("He tramitado el reembolso de 1.234,50 EUR, ¿algo más?",
     [("reembolso", "existe", (), (Decimal("1234.50"),), None)]),
    (f"Listo: he cancelado tu pedido {PEDIDO}.", [("cancelacion", "existe", (), (), PEDIDO)]),
    ("He cambiado tu dirección de envío.", [("direccion", "existe", (), (), None)]),
    ("He cambiado la cafetera por la de acero.", [("cambio", "existe", (), (), None)]),
    ("Te he enviado un correo con los detalles.", []),
    ("Hemos cobrado la diferencia de +5,00 EUR (cobro CO-000001).",
     [("cobro", "hecho", ("CO-000001",), (Decimal("5.00"),), None)]),
])
def test_lo_que_diria_un_modelo_que_miente_se_lee_como_afirmacion(texto, esperado):
    assert _efectos(texto) == esperado


def test_un_numero_que_el_agente_dice_no_encontrar_o_pregunta_no_se_afirma():
    assert _referencias("No encuentro el reembolso RE-000123 en esta conversación.") == []
    assert _referencias("¿Te refieres al reembolso RE-000123?") == []
    assert _referencias("El reembolso RE-000123 y el RE-000123 otra vez.") == ["RE-000123"]
    assert _referencias("El producto CAF-001 y el pedido P-20261003-0045 no son números de operación.") == []
