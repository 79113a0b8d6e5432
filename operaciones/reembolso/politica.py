"""La política del reembolso: sus valores por tienda (con dominio y defecto) y su frase.

Capa de ``politicas``, pero sin importarla: ``VALORES`` son los argumentos de cada
``ValorPolitica`` (un importe sin ``maximo`` tiene el de todos, ``DINERO_MAXIMO``), que
``politicas.valores`` construye y pone en ``VALORES``;
``politicas.texto_cliente`` pone ``texto_cliente`` en el texto de la política. Los
defectos son los ``DEFAULT`` de ``sql/002_politica.sql``.

Trampa: ``ventana_devoluciones_dias`` es la ventana en la que se **cuentan** devoluciones
para pedir firma; una ventana más larga cuenta más y por eso endurece al subir. La
ventana de la tienda para devolver o cambiar es ``dias_desde_entrega`` (de todas las
operaciones, en ``politicas.valores``; endurece al bajar).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from nucleo import dinero
from nucleo.abonos import columna_plazo, texto_plazo

__all__ = ["VALORES", "texto_cliente"]

VALORES = (
    dict(
        nombre="limite_reembolso", etiqueta="Límite de reembolso sin firma", tipo="dinero", unidad="EUR",
        minimo=Decimal("0.00"), defecto=Decimal("60.00"), endurece="bajar", regla="reembolso",
        descripcion="Un reembolso mayor pide firma."),
    dict(
        nombre="devoluciones_max_30d", etiqueta="Devoluciones que piden firma", tipo="entero", unidad="devoluciones",
        minimo=1, maximo=100, defecto=2, endurece="bajar",
        descripcion="Con tantas devoluciones o más en la ventana, una nueva pide firma."),
    dict(
        nombre="ventana_devoluciones_dias", etiqueta="Ventana para contar devoluciones", tipo="entero", unidad="días",
        minimo=1, maximo=365, defecto=30, endurece="subir",
        descripcion="Días en los que se cuentan las devoluciones del cliente."),
)

# Cómo se nombra cada medio de pago en el plazo de un reembolso.
_MEDIOS = (("tarjeta", "tarjeta"), ("bizum", "Bizum"), ("transferencia", "transferencia"))


def texto_cliente(valores: Mapping[str, Any]) -> str:
    """Sus líneas en el texto de la política que lee el cliente (``valores``: los de la tienda)."""
    return "\n".join([
        "- Reembolsos: se devuelve al medio de pago original y nunca más de lo pagado por "
        "el pedido menos lo ya reembolsado. Un reembolso de hasta "
        f"{dinero.eur(valores['limite_reembolso'])} se hace al momento; si es "
        "mayor, necesita la aprobación de un encargado de la tienda. Desde que se emite, el "
        "dinero suele tardar en verse (depende del banco): "
        + "; ".join(f"con {nombre}, {texto_plazo(valores[columna_plazo(medio)])}" for medio, nombre in _MEDIOS)
        + ".",
        f"- Plazo: si han pasado más de {valores['dias_desde_entrega']} días desde la entrega, "
        "la devolución necesita la aprobación de un encargado.",
        f"- Devoluciones frecuentes: si ya tienes {valores['devoluciones_max_30d']} "
        f"devoluciones o más en los últimos {valores['ventana_devoluciones_dias']} días, una "
        "nueva necesita la aprobación de un encargado.",
    ])
