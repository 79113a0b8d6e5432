"""La tarjeta enseña lo que una persona necesita para decidir cada operación (issue 30, punto 2).

Lo declara cada operación (``EnTarjeta``): nombres y precios de un cambio con la diferencia
y quién la paga, las dos direcciones de un cambio de dirección, lo pagado y el límite de un
vale. Siempre de un pedido del cliente de la aprobación, nunca de otro.
"""

from __future__ import annotations

from agente.servicio.decisiones.ficha import detalles_de
from nucleo.operaciones import CAMBIO, OPERACIONES
from operaciones.reembolso.declaracion import REEMBOLSO
from tests.apoyo.firmas import TIENDA_DE, pausa_con

CAFETERA = "P-20260917-0041"  # C-0001, talavera: una CAF-001 pagada a 120,00
DIRECCION = "P-20260914-0025"  # C-0007, madrid-centro, pendiente


def _detalles(http, como, hilo: str, quien: str) -> dict[str, tuple[str | None, bool]]:
    r = http.get(f"/api/aprobaciones/{hilo}", headers=como(quien))
    assert r.status_code == 200, r.text
    (detalles,) = r.json()["detalles"]
    return {d["etiqueta"]: (d["valor"], d["dinero"]) for d in detalles}


def test_la_tarjeta_de_un_cambio_mas_caro_da_nombres_precios_diferencia_y_quien_la_paga(http, como):
    hilo = pausa_con(http, como, "C-0001", f"Quiero cambiar la cafetera del pedido {CAFETERA} por la CAF-004")
    detalles = _detalles(http, como, hilo, "enc-talavera")
    assert detalles["Producto original"] == ("Cafetera de goteo Aroma 10 tazas", False)
    assert detalles["Producto nuevo"] == ("Cafetera superautomática Barista", False)
    assert detalles["Pagado por unidad"] == ("120.00", True)
    assert detalles["Precio del nuevo"] == ("249.00", True)
    assert detalles["Diferencia"] == ("129.00", True)
    assert detalles["Quién paga la diferencia"][0] == "la paga el cliente (cobro por la pasarela)"


def test_la_tarjeta_de_un_cambio_de_direccion_pone_la_actual_y_la_nueva(http, como):
    assert TIENDA_DE["C-0007"] == "madrid-centro"
    hilo = pausa_con(http, como, "C-0007", f"Quiero cambiar la dirección de envío del pedido {DIRECCION} a "
                                        "Carrer de Balmes 10, 08001 Barcelona")
    detalles = _detalles(http, como, hilo, "enc-madrid-centro")
    assert detalles["Dirección actual"][0].startswith("Calle de Fuencarral 101, 2º B, 28004 Madrid")
    assert detalles["Dirección nueva"][0] == "Carrer de Balmes 10, 08001 Barcelona"


def test_los_detalles_solo_salen_de_un_pedido_del_cliente_de_la_aprobacion(conexion):
    accion = {"name": CAMBIO.herramienta,
              "args": {"pedido": CAFETERA, "sku_original": "CAF-001", "sku_nuevo": "CAF-004"}}
    (propios,) = detalles_de(conexion, [accion], "C-0001")
    assert {d["etiqueta"] for d in propios} >= {"Producto original", "Diferencia"}
    # El mismo pedido leído para otro cliente (argumentos escritos por el modelo): nada.
    assert detalles_de(conexion, [accion], "C-0002") == [[]]
    # Argumentos que no casan (línea no numérica) no rompen la ficha.
    vale = {"name": "compensar_con_vale", "args": {"pedido": CAFETERA, "linea": "uno"}}
    assert detalles_de(conexion, [vale], "C-0001") == [[]]


def test_cada_operacion_menos_el_reembolso_declara_su_tarjeta():
    # El reembolso ya se ve entero en la tabla de líneas del pedido (el libro).
    sin_tarjeta = {op.nombre for op in OPERACIONES if op.tarjeta is None}
    assert sin_tarjeta == {REEMBOLSO.nombre}


def test_vale_reenvio_y_cancelacion_dan_importe_limite_y_productos(conexion):
    acciones = [
        {"name": "compensar_con_vale", "args": {"pedido": "P-20261012-0099", "linea": 1, "importe": "30.00"}},
        {"name": "reenviar", "args": {"pedido": "P-20261009-0120", "linea": 1, "unidades": 1}},
        {"name": "cancelar_pedido", "args": {"pedido": "P-20261009-0420", "importe": "420.00"}},
    ]
    vale, reenvio, cancelacion = (
        {d["etiqueta"]: d["valor"] for d in detalles}
        for detalles in (detalles_de(conexion, [a], c)[0] for a, c in zip(acciones, ("C-0003", "C-0010", "C-0011"),
                                                                          strict=True)))
    assert (vale["Pagado por la línea"], vale["Máximo sin firma (política vigente)"]) == ("99.00", "9.90")
    assert (reenvio["Valor del reenvío"], reenvio["Unidades a reenviar"]) == ("120.00", "1 de 1")
    assert cancelacion["Pagado por el pedido (se devuelve entero)"] == "420.00"
    assert cancelacion["Productos (vuelven al stock)"].startswith("3 × Cafetera de goteo Aroma 10 tazas; 2 × ")
