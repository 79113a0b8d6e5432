"""Comprobación del secreto al arrancar (módulo ligero: la CLI la usa sin importar la app)."""

from __future__ import annotations

from agente.nucleo.ajustes import Ajustes
from agente.nucleo.errores import ErrorConfiguracion


def comprobar_secreto(ajustes: Ajustes) -> None:
    """Fuera del modo demo, el secreto de serie o uno vacío no valen: error en una línea."""
    if not ajustes.demo and ajustes.secreto_es_de_demo():
        raise ErrorConfiguracion(
            "AGENTE_SECRETO: define un secreto propio (p. ej. «openssl rand -hex 32») para servir "
            "fuera del modo demo; el de serie o uno vacío no valen",
            ajuste="AGENTE_SECRETO",
        )
