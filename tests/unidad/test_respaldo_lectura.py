"""El entendimiento que comparte la guarda de la conversación con el modelo offline (issue #42, 2a)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agente.modelo_offline.respaldo import respaldo

P1, P2 = "P-20261012-0099", "P-20260920-0102"
OFERTA = AIMessage(f"Siento lo del rayón del pedido {P1}. ¿Quieres que te prepare un vale de 30 euros?")


@pytest.mark.parametrize(("mensajes", "intencion", "pedido", "motivo"), [
    ([HumanMessage(f"Del pedido {P1} quiero que me compenséis con 30 euros, sin devolverlo.")],
     "reembolso", P1, "excluida"),
    ([HumanMessage(f"Del pedido {P1} quiero que me compenséis con 30 euros, sin devolverlo.")],
     "vale", P1, "pedida"),
    ([HumanMessage(f"¿Cuándo llega el pedido {P1}?")], "reembolso", P1, "no_pedida"),
    ([HumanMessage(f"El pedido {P1} llegó rayado."), OFERTA, HumanMessage("Sí, por favor.")], "vale", P1, "aceptada"),
    ([HumanMessage(f"El pedido {P1} llegó rayado."), OFERTA, HumanMessage("Mejor no.")], "vale", P1, "excluida"),
    ([HumanMessage(f"El pedido {P1} llegó rayado."), OFERTA, HumanMessage("Sí, por favor.")],
     "reembolso", P1, "no_pedida"),
    # Lo pidió antes y el mensaje de ahora no dice nada de ello: sigue pedido.
    ([HumanMessage(f"Quiero devolver el pedido {P1}."), AIMessage("¿Por qué motivo?"),
      HumanMessage("Porque llegó roto.")], "reembolso", P1, "pedida"),
    # Lo pidió y después lo retira en otro mensaje.
    ([HumanMessage(f"Quiero devolver el pedido {P1}."), AIMessage("¿Por qué motivo?"),
      HumanMessage("No quiero el reembolso, me lo quedo.")], "reembolso", P1, "excluida"),
    # Pide devolver otro pedido: no respalda el reembolso de este.
    ([HumanMessage(f"Quiero devolver el pedido {P2}.")], "reembolso", P1, "no_pedida"),
])
def test_respaldo(mensajes, intencion, pedido, motivo):
    dicho = respaldo(intencion, pedido, mensajes)
    assert dicho.motivo == motivo
    assert dicho.respaldada == (motivo in ("pedida", "aceptada"))
