"""Quién puede firmar lo que la política para: la autoridad que exige un veredicto.

Un solo concepto de «autoridad requerida»: el ``Requisito`` de la matriz de autoridad
(``politicas.matriz_autoridad``), aquí con el nombre que usa el veredicto (``Autoridad``).
``autoridad_requerida`` es el único sitio donde se decide, al evaluar la llamada por
primera vez, con la versión vigente de la matriz de la tienda; se guarda con el veredicto
(y con él la versión de la matriz) y no se vuelve a calcular al reanudar.
"""

from __future__ import annotations

from politicas.matriz_autoridad import ROLES_POR_DEFECTO, Matriz, Requisito, autoridad_necesaria
from politicas.reglas.base import Dictamen

__all__ = ["ROL_ENCARGADO", "Autoridad", "autoridad_requerida"]

ROL_ENCARGADO = ROLES_POR_DEFECTO[0]

# La firma que exige un veredicto: ``importe`` (lo que autoriza, o None), ``firmas`` de
# personas distintas y ``rol_minimo``; con la regla y la versión de la matriz que la fijó.
Autoridad = Requisito


def autoridad_requerida(dictamen: Dictamen, matriz: Matriz | None, regla: str | None) -> Autoridad | None:
    """La autoridad que exige ``dictamen``; None si no pide firma.

    Sin matriz (una base sin ``sql/008``) la única autoridad que existía: una firma de
    encargado.
    """
    if not dictamen.motivos:
        return None
    if matriz is None:
        importe = dictamen.importe if dictamen.importe is not None and dictamen.importe > 0 else None
        return Autoridad(importe=importe, regla=regla)
    return autoridad_necesaria(matriz, regla, dictamen.importe)
