"""Firmas escalonadas por la API: los pedidos de la demo que piden más de una firma y los pasos.

``como`` es la fixture de ``tests/api/conftest.py`` que da las cabeceras de cualquier
sujeto (cliente o firmante de cualquier rol) con su tienda de :data:`TIENDA_DE`.
"""

from __future__ import annotations

from agente.demo import catalogo

__all__ = ["PEDIDO_350", "PEDIDO_650", "TIENDA_DE", "decidir_como", "pausa_con", "pausa_de_pedido"]

PEDIDO_350 = "P-20261005-0350"  # C-0009, talavera: necesita gerente
PEDIDO_650 = "P-20261006-0650"  # C-0006, talavera: dos firmas, una de gerente o regional
# La tienda de cada cliente y firmante de la demo (la de su token); ``reg-centro-2`` es la
# segunda regional que crean las pruebas de gobierno de la política.
TIENDA_DE = {
    **{cliente[0]: cliente[1] for cliente in catalogo.CLIENTES},
    **{encargado[0]: encargado[1] for encargado in catalogo.ENCARGADOS},
    "reg-centro-2": "madrid-centro",
}


def pausa_con(http, como, cliente: str, texto: str) -> str:
    """El cliente escribe ``texto`` y la conversación queda esperando firmas: da el hilo."""
    r = http.post("/api/conversaciones", headers=como(cliente))
    assert r.status_code == 201, r.text
    hilo = r.json()["thread_id"]
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", headers=como(cliente), json={"texto": texto})
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "esperando_aprobacion", r.json()
    return hilo


def pausa_de_pedido(http, como, cliente: str, pedido: str) -> str:
    """El cliente pide devolver ``pedido`` y la conversación queda esperando firmas: da el hilo."""
    return pausa_con(http, como, cliente, f"Quiero devolver el pedido {pedido} porque llegó roto")


def decidir_como(http, como, hilo: str, quien: str, decisiones=None):
    """``quien`` decide la aprobación de ``hilo`` (aprobar, si no se dice otra cosa): da la respuesta."""
    return http.post(f"/api/aprobaciones/{hilo}/decision", headers=como(quien),
                     json={"decisiones": decisiones or [{"type": "approve"}]})
