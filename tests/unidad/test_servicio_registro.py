"""El servicio lee las herramientas del registro: textos de espera, decisiones y ediciones."""

from __future__ import annotations

import pytest

from agente.servicio.decisiones.validacion import decisiones_permitidas, validar_decisiones
from agente.servicio.textos import mensaje_espera
from herramientas import REGISTRO, Herramienta
from nucleo.errores import DecisionNoValida


def _no_se_construye(_dependencias):  # estas pruebas no ejecutan la herramienta
    raise AssertionError("no debería construirse")


COMPENSAR = Herramienta(
    nombre="compensar",
    crear=_no_se_construye,
    efectos=True,
    decisiones=("approve", "edit", "respond"),
    regla="compensacion",
    titulo_encargado="Compensación",
    texto_espera=lambda args: f"la compensación de {args.get('importe')} EUR por el retraso",
    campos_editables=("importe",),
)
REGISTRO_AMPLIADO = REGISTRO.con(COMPENSAR)


def _peticion(*acciones: tuple[str, dict, list[str]]) -> dict:
    return {
        "action_requests": [{"name": n, "args": a, "description": ""} for n, a, _ in acciones],
        "review_configs": [{"action_name": n, "allowed_decisions": d} for n, _, d in acciones],
    }


def test_el_aviso_de_espera_usa_el_texto_de_cada_herramienta_del_registro():
    peticion = _peticion(
        ("reembolsar", {"pedido": "P-1", "importe": "1234.5"}, ["approve"]),
        ("compensar", {"importe": "5"}, ["approve"]),
    )
    texto = mensaje_espera(peticion, REGISTRO_AMPLIADO)
    assert texto.startswith(
        "He preparado el reembolso de 1.234,50 EUR del pedido P-1 y la compensación de 5 EUR "
        "por el retraso; quedan pendiente"
    )
    # Sin la herramienta en el registro, el texto genérico (nunca un nombre interno).
    assert "he preparado tu solicitud" in mensaje_espera(_peticion(("compensar", {}, [])), REGISTRO).lower()


def test_respond_solo_donde_la_pausa_y_el_registro_lo_admiten():
    todas = ["approve", "edit", "reject", "respond"]
    assert decisiones_permitidas({"allowed_decisions": todas}, REGISTRO["reembolsar"]) == [
        "approve", "edit", "reject"]
    assert decisiones_permitidas({"allowed_decisions": todas}, COMPENSAR) == ["approve", "edit", "respond"]
    assert decisiones_permitidas({"allowed_decisions": todas}, None) == []
    peticion = _peticion(("reembolsar", {"pedido": "P-1", "importe": "10"}, todas))
    with pytest.raises(DecisionNoValida, match="«respond» no está permitida"):
        validar_decisiones(peticion, [{"type": "respond", "message": "hecho"}], registro=REGISTRO)
    desconocida = _peticion(("compensar", {"importe": "10"}, todas))
    with pytest.raises(DecisionNoValida, match="permitidas: ninguna"):
        validar_decisiones(desconocida, [{"type": "approve"}], registro=REGISTRO)


def test_una_herramienta_nueva_se_edita_con_las_reglas_de_su_registro():
    peticion = _peticion(("compensar", {"importe": "20.00", "motivo": "retraso"}, ["approve", "edit"]))

    def editar(**args):
        return [{"type": "edit", "edited_action": {"name": "compensar", "args": args}}]

    (decision,) = validar_decisiones(peticion, editar(importe=12.5), registro=REGISTRO_AMPLIADO)
    assert decision["edited_action"]["args"] == {"importe": "12.50", "motivo": "retraso"}
    for args, error in [
        ({"importe": "10.009"}, "más de dos decimales"),
        ({"importe": "20.01"}, "supera lo que pidió"),
        ({"importe": "-1"}, "mayor que cero"),
        ({"importe": "5", "motivo": "otro"}, "se cambió motivo"),
    ]:
        with pytest.raises(DecisionNoValida, match=error):
            validar_decisiones(peticion, editar(**args), registro=REGISTRO_AMPLIADO)


def test_un_campo_editable_que_no_es_un_importe_se_rechaza_sin_validarlo():
    cambiar_sku = Herramienta(
        nombre="cambiar_talla", crear=_no_se_construye, decisiones=("approve", "edit"),
        regla="talla", campos_editables=("talla",),
    )
    peticion = _peticion(("cambiar_talla", {"talla": "M"}, ["approve", "edit"]))
    edicion = [{"type": "edit", "edited_action": {"name": "cambiar_talla", "args": {"talla": "XXL"}}}]
    with pytest.raises(DecisionNoValida, match="no se puede validar"):
        validar_decisiones(peticion, edicion, registro=REGISTRO.con(cambiar_sku))
