"""Comprobación del secreto al arrancar (módulo ligero: la CLI la usa sin importar la app)."""

from __future__ import annotations

from agente.nucleo.ajustes import SECRETO_DEMO, Ajustes
from agente.nucleo.errores import ErrorConfiguracion
from agente.nucleo.secretos import defecto_del_secreto


def comprobar_secreto(ajustes: Ajustes) -> None:
    """Fuera del modo demo, un secreto débil no vale (ver ``agente.nucleo.secretos``):
    error en una línea que nombra ``AGENTE_SECRETO``. Así nadie puede firmar tokens con
    un secreto adivinable: el servidor no llega a arrancar."""
    if ajustes.demo:
        return
    defecto = defecto_del_secreto(ajustes.secreto, de_demo=SECRETO_DEMO)
    if defecto:
        raise ErrorConfiguracion(
            f"AGENTE_SECRETO: el secreto {defecto}; fuera del modo demo hace falta uno de al "
            "menos 32 bytes aleatorios: genera uno con «agente secreto»",
            ajuste="AGENTE_SECRETO",
        )
