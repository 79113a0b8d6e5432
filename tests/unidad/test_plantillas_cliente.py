"""El texto del correo al cliente: qué pasó en palabras llanas, sin ids internos ni SKUs, y
los dos enlaces; y la ruta de cada tienda (correo, ninguno o Apprise)."""

from __future__ import annotations

import pytest

from agente.notificaciones.entrega_cliente import RutasCliente, entrega_cliente
from agente.notificaciones.plantillas_cliente import pintar_cliente

BASE = {"tienda_nombre": "Talavera de la Reina", "cliente_nombre": "Ana García López",
        "thread_id": "h-0123456789abcdef", "tienda": "talavera"}
REEMBOLSO = {"titulo": "Reembolso", "pedido": "P-20260917-0041", "importe": "120.00"}
CAMBIO = {"titulo": "Cambio de producto", "pedido": "P-20261001-0001", "importe": None}


def _pintar(**datos):
    return pintar_cliente({**BASE, **datos}, enlace="https://t.example/#token=abc",
                          enlace_baja="https://t.example/avisos#baja=xyz", horas_enlace=24)


@pytest.mark.parametrize(("datos", "asunto", "frase"), [
    ({"suceso": "decision", "operaciones": [{**REEMBOLSO, "resultado": "approve"}]},
     "tu solicitud está aprobada",
     "Un encargado de Talavera de la Reina ha aprobado tu solicitud de reembolso del pedido "
     "P-20260917-0041 por 120,00 EUR."),
    ({"suceso": "decision", "operaciones": [{**REEMBOLSO, "resultado": "edit", "importe_final": "90.00"}]},
     "tu solicitud está aprobada", "por 90,00 EUR en lugar de 120,00 EUR."),
    ({"suceso": "decision", "operaciones": [{**CAMBIO, "resultado": "reject", "motivo": "sin stock"}]},
     "tu solicitud está rechazada",
     "ha rechazado tu solicitud de cambio de producto del pedido P-20261001-0001. Motivo: sin stock"),
    ({"suceso": "decision", "por_sistema": True, "operaciones": [{**REEMBOLSO, "resultado": "reject"}]},
     "tu solicitud ha caducado sin revisión", "así que ha caducado sin hacerse"),
    ({"suceso": "pago", "tipo": "reembolso", "concepto": "devolucion", "importe": "24.90",
      "pedido": "P-20260920-0102"}, "tu reembolso ya está hecho", "reembolso de 24,90 EUR del pedido P-20260920-0102"),
    ({"suceso": "pago", "tipo": "cobro", "importe": "15.00", "pedido": "P-1"},
     "hemos cobrado la diferencia de tu cambio", "Hemos cobrado la diferencia de 15,00 EUR"),
    ({"suceso": "marcado", "tipo": "reembolso", "importe": "24.90", "pedido": "P-1"},
     "tu pago está tardando más de lo normal", "Una persona de la tienda lo está revisando"),
    ({"suceso": "marcado", "rechazado": True, "tipo": "reembolso", "importe": "24.90", "pedido": "P-1"},
     "tu reembolso no se ha podido completar", "todavía no te hemos devuelto ese dinero"),
    ({"suceso": "caducado", "tipo": "cobro", "importe": "15.00", "pedido": "P-1"},
     "el enlace de pago de tu cambio ha caducado", "no se te ha cobrado nada"),
    ({"suceso": "fallo_tardio", "tipo": "reembolso", "importe": "24.90", "pedido": "P-1"},
     "tu reembolso no se ha completado", "Te dijimos que tu reembolso de 24,90 EUR del pedido P-1 estaba hecho"),
    ({"suceso": "fallo_tardio", "tipo": "cobro", "importe": "15.00", "pedido": "P-1"},
     "el pago de tu cambio no se ha completado", "no se te ha cobrado"),
    ({"suceso": "respuesta"}, "tienes una respuesta nueva", "te ha respondido en tu conversación"),
])
def test_cada_suceso_en_palabras_llanas(datos, asunto, frase):
    mensaje = _pintar(**datos)
    assert mensaje.asunto == f"Talavera de la Reina: {asunto}"
    assert frase in mensaje.texto
    assert mensaje.texto.startswith("Hola, Ana:\n")
    assert "h-0123456789abcdef" not in mensaje.texto  # nunca el hilo
    assert "https://t.example/#token=abc" in mensaje.texto
    assert "date de baja aquí: https://t.example/avisos#baja=xyz" in mensaje.texto
    assert "24 horas" in mensaje.texto


def test_la_nota_del_encargado_y_un_efecto_fallido_se_cuentan():
    texto = _pintar(suceso="decision", nota="Te llamamos mañana", fallo=True,
                    operaciones=[{**REEMBOLSO, "resultado": "approve"}]).texto
    assert "Nota del encargado: Te llamamos mañana" in texto
    assert "no se ha podido completar" in texto


FILA = {"clave": "cl-1", "tienda": "talavera", "cliente_id": "C-0001", "thread_id": "h-1",
        "datos": {**BASE, "suceso": "respuesta"},
        "contacto_cliente": {"email": "ana.garcia@example.com", "telefono": "+34 600 111 001"}}


def _rutas(**por_tienda):
    return RutasCliente(secreto="s" * 64, base_url="https://t.example", por_tienda=por_tienda)


def test_la_ruta_por_defecto_es_el_correo_del_cliente():
    canal, entrega = entrega_cliente(FILA, _rutas())
    assert (canal, entrega.direccion, entrega.clave) == ("email", "ana.garcia@example.com", "cl-1")


def test_una_tienda_sin_avisos_o_un_cliente_sin_el_dato_se_descartan_con_motivo():
    assert "no avisa" in entrega_cliente(FILA, _rutas(talavera="ninguno"))
    assert "no tiene correo" in entrega_cliente({**FILA, "contacto_cliente": {}}, _rutas())
    assert "le falta" in entrega_cliente({**FILA, "contacto_cliente": {"email": "a@b.c"}},
                                         _rutas(**{"*": "twilio://sid:tok@+34600000000/{telefono}"}))


def test_una_url_de_apprise_con_el_telefono_del_cliente():
    canal, entrega = entrega_cliente(FILA, _rutas(**{"*": "twilio://sid:tok@+34600000000/{telefono}"}))
    assert canal == "apprise"
    assert entrega.direccion == "twilio://sid:tok@+34600000000/+34600111001"
