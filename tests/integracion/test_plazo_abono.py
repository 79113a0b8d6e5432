"""«¿Cuándo me llega el dinero?» (issue #43, punto 4): el plazo típico del medio de pago del
pedido, el que la tienda tiene configurado, sin prometer lo que el sistema no ha hecho.

De punta a punta por el agente real (modelo offline, PostgreSQL de la demo): un reembolso y
después la pregunta; cambiar el plazo de la tienda o el medio de pago cambia la respuesta, y
un reembolso que espera firma se dice como tal. Pedidos de ``agente/demo.py``.
"""

from __future__ import annotations

import psycopg
import pytest

from agente.bd.pool import KWARGS_CONEXION
from tests.apoyo.fabricas import conversacion, uno
from tests.apoyo.reglas_texto import CLIENTE, defectos

SARTEN_SOLA = "P-20260920-0102"  # C-0002, entregado, 1 × sartén de 24,90 EUR (sin firma)
VAJILLA = "P-20261012-0099"  # C-0003, entregado, 1 × vajilla de 99,00 EUR (pide firma)


def _ejecutar(bd_url: str, sql: str, params: dict) -> None:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        c.execute(sql, params)


def _fijar_plazo(bd_url: str, pedido: str, columna: str, dias: int) -> None:
    assert columna in ("plazo_abono_tarjeta_dias", "plazo_abono_bizum_dias")
    tienda = uno(bd_url, "SELECT tienda FROM pedidos WHERE id = %(p)s", {"p": pedido})
    _ejecutar(bd_url, "INSERT INTO politicas_tienda (tienda) VALUES (%(t)s) ON CONFLICT DO NOTHING", {"t": tienda})
    _ejecutar(bd_url, f"UPDATE politicas_tienda SET {columna} = %(d)s WHERE tienda = %(t)s",  # noqa: S608
              {"d": dias, "t": tienda})


@pytest.mark.parametrize("pregunta", ["¿Cuándo me llega el dinero?", "¿cuándo me devolvéis el dinero?",
                                      "Todavía no me ha llegado el reembolso"])
def test_tras_un_reembolso_la_pregunta_tiene_el_plazo_de_la_tienda_y_cambia_con_ella(servicio, bd_url, pregunta):
    ctx = servicio.contexto_de_cliente("C-0002")
    hilo, hecho = conversacion(servicio, "C-0002", f"Quiero devolver la sartén del pedido {SARTEN_SOLA}")
    assert hecho.estado == "respondida" and "He tramitado el reembolso" in hecho.mensaje_cliente, hecho.mensaje_cliente
    numero = uno(bd_url, "SELECT numero FROM reembolsos WHERE pedido_id = %(p)s", {"p": SARTEN_SOLA})

    respuesta = servicio.conversar(hilo, pregunta, ctx)
    texto = respuesta.mensaje_cliente
    assert numero in texto and "24,90 EUR" in texto, texto
    assert "la tarjeta con la que pagaste" in texto and "hasta 10 días hábiles" in texto, texto
    assert not defectos(texto, para=CLIENTE), texto
    # Ninguna devolución nueva: la pregunta no pide otro reembolso.
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 1

    _fijar_plazo(bd_url, SARTEN_SOLA, "plazo_abono_tarjeta_dias", 7)
    texto = servicio.conversar(hilo, pregunta, ctx).mensaje_cliente
    assert "hasta 7 días hábiles" in texto and "10 días" not in texto, texto

    _ejecutar(bd_url, "UPDATE pedidos SET metodo_pago = 'bizum' WHERE id = %(p)s", {"p": SARTEN_SOLA})
    _fijar_plazo(bd_url, SARTEN_SOLA, "plazo_abono_bizum_dias", 1)
    texto = servicio.conversar(hilo, pregunta, ctx).mensaje_cliente
    assert "tu Bizum" in texto and "1 día hábil" in texto, texto


def test_con_el_reembolso_esperando_firma_dice_que_aun_no_ha_salido_nada(servicio, bd_url):
    _, pausa = conversacion(servicio, "C-0003", f"Quiero devolver la vajilla del pedido {VAJILLA}")
    assert pausa.estado == "esperando_aprobacion", pausa.mensaje_cliente
    _, respuesta = conversacion(servicio, "C-0003", f"¿Cuándo me llega el dinero del pedido {VAJILLA}?")
    texto = respuesta.mensaje_cliente
    assert "pendiente de que lo apruebe un encargado" in texto and "no sale ningún dinero" in texto, texto
    assert "hasta 10 días hábiles" in texto, texto
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0


def test_sin_reembolso_no_promete_dinero_y_dice_que_hacer(servicio, bd_url):
    _, respuesta = conversacion(servicio, "C-0002", f"¿Cuándo me llega el dinero del pedido {SARTEN_SOLA}?")
    texto = respuesta.mensaje_cliente
    assert "no tiene ningún reembolso" in texto and "dime qué producto" in texto, texto
    assert uno(bd_url, "SELECT count(*) FROM reembolsos") == 0
