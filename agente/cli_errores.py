"""Los errores del dominio en la CLI: una línea en español y código 2, nunca una traza."""

from __future__ import annotations

from functools import wraps

import typer

from agente.nucleo.errores import ErrorDominio


def errores_en_una_linea(funcion):
    @wraps(funcion)
    def envoltura(*args, **kwargs):
        try:
            return funcion(*args, **kwargs)
        except ErrorDominio as exc:
            typer.echo(f"Error: {exc.mensaje}", err=True)
            raise typer.Exit(code=2) from None

    return envoltura
