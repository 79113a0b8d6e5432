"""La política con la que se liquida un cambio: la fijada al pausar, no la de ahora.

El veredicto de la política guarda, al evaluar la llamada, los precios que vio (los de la
tienda del pedido) y los valores que deciden dinero (``evaluaciones_politica.umbrales`` y
``.valores``). Al ejecutar el cambio se compara el precio de ahora con el visto (si cambió,
la aprobación caduca) y la diferencia mínima liquidable se toma de esa instantánea: un
cambio de política entre la pausa y la firma no perdona ni cobra otra cosa (issue 24).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from caja import libro
from herramientas.pedidos import normalizar_id
from nucleo import dinero
from nucleo.errores import AprobacionCaducada

__all__ = ["MINIMO_POR_DEFECTO", "comprobar_precios", "evaluacion", "valores_de_politica"]

# Sin veredicto guardado (una llamada directa, fuera del agente): la política vigente, leída
# en la transacción del cambio. Con veredicto, la instantánea guardada al evaluarlo.
SELECT_MINIMO_SQL = """
SELECT coalesce((SELECT diferencia_minima_liquidable FROM politicas_tienda
                 WHERE tienda = %(tienda)s), %(defecto)s) AS minimo,
       coalesce((SELECT version FROM politicas_tienda WHERE tienda = %(tienda)s), 1) AS version
"""

SELECT_EVALUACION_SQL = """
SELECT herramienta, args, umbrales, valores FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = %(tool_call_id)s
"""

# El DEFAULT de politicas_tienda.diferencia_minima_liquidable (herramientas/ no importa
# politicas/; tests/integracion/test_libro_liquidacion.py comprueba que coinciden).
MINIMO_POR_DEFECTO = Decimal("0.00")
CADUCADA = libro.CADUCADA


def evaluacion(conexion, llamada: libro.Llamada) -> dict | None:
    """La evaluación de la política de esta misma llamada (None fuera del agente)."""
    return conexion.execute(SELECT_EVALUACION_SQL, {
        "thread_id": llamada.thread_id, "tool_call_id": llamada.tool_call_id}).fetchone()


def _precio_guardado(umbrales: dict, clave: str) -> Decimal | None:
    valor = umbrales.get(clave)
    if valor is None:
        return None
    try:
        return Decimal(str(valor))
    except InvalidOperation:
        return None


def valores_de_politica(conexion, evaluacion: dict | None, tienda: str) -> dict[str, Any]:
    """Los valores de la política con los que se liquida este cambio: la instantánea que
    guardó el veredicto de esta llamada (fijada al pausar; un cambio de política posterior
    no perdona ni cobra otra cosa) o, sin ella, la política vigente en esta transacción.
    Se guardan con el cambio (``valores_politica``) y la auditoría los compara."""
    instantanea = (evaluacion or {}).get("valores")
    if instantanea and "diferencia_minima_liquidable" in instantanea:
        return {"diferencia_minima_liquidable": str(instantanea["diferencia_minima_liquidable"]),
                "version": instantanea.get("version"), "origen": "instantanea"}
    fila = conexion.execute(SELECT_MINIMO_SQL, {"tienda": tienda, "defecto": MINIMO_POR_DEFECTO}).fetchone()
    return {"diferencia_minima_liquidable": str(fila["minimo"]), "version": fila["version"],
            "origen": "vigente"}


def comprobar_precios(evaluacion: dict | None, *, argumentos: dict, actuales: dict) -> None:
    """Compara el pvp de ahora en la tienda del pedido (``actuales``: los productos con el
    precio de ``precios_tienda``, sql/030) con el que vio la política al evaluar esta misma
    llamada, que también es el de esa tienda (``politicas.hechos``).

    Solo si la evaluación es de ``sustituir`` con los mismos SKU: si un encargado editó
    los SKU, lo que aprobó es lo que se ejecuta ahora y no hay precio previo que comparar.
    """
    if evaluacion is None or evaluacion["herramienta"] != "sustituir":
        return
    args = evaluacion["args"] or {}
    if any(
        normalizar_id(str(args.get(k, ""))) != argumentos[k] for k in ("sku_original", "sku_nuevo")
    ):
        return
    umbrales = evaluacion["umbrales"] or {}
    for clave, producto in actuales.items():
        antes = _precio_guardado(umbrales, clave)
        if antes is not None and antes != producto["pvp"]:
            raise AprobacionCaducada(
                f"{CADUCADA}: el precio de {producto['sku']} en la tienda ha cambiado desde que se propuso "
                f"el cambio ({dinero.eur(antes)} entonces, {dinero.eur(producto['pvp'])} "
                "ahora); consulta de nuevo las alternativas y vuelve a proponerlo",
                sku=producto["sku"],
            )
