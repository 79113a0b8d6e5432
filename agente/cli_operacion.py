"""Órdenes de operación: ``agente db start|stop|status`` (PostgreSQL embebido) y ``agente secreto``.

Las registra ``agente.cli`` (``registrar(app, db)``).
"""

from __future__ import annotations

import typer

from agente.cli_errores import errores_en_una_linea
from agente.nucleo.errores import ErrorDominio

__all__ = ["registrar"]


def _pgdata():
    from agente.nucleo.ajustes import ajustes

    ajustes.cache_clear()
    aj = ajustes()
    if aj.database_url:
        raise ErrorDominio(
            "db start, stop y status solo se aplican al PostgreSQL embebido: DATABASE_URL está "
            "definido, así que el servidor es tuyo y se arranca y se para fuera del agente"
        )
    return aj.pgdata


def _describir(est) -> list[str]:
    lineas = []
    if est.reparados:
        lineas.append(f"Pids obsoletos retirados de {est.pgdata}/.handle_pids.json: "
                      + ", ".join(map(str, est.reparados)))
    if est.en_marcha:
        lineas.append(f"PostgreSQL embebido: en marcha (pid {est.pid})")
        lineas.append(f"URL: {est.url}")
    else:
        lineas.append("PostgreSQL embebido: parado")
    lineas.append(f"Datos en: {est.pgdata}" + ("" if est.inicializado else " (sin crear: se creará al primer uso)"))
    if est.en_marcha:
        if est.usuarios:
            from agente.embebido import describir_proceso

            lineas.append("Lo usan los procesos: " + ", ".join(map(describir_proceso, est.usuarios)))
        elif est.mantener:
            lineas.append("Arrancado con «agente db start»: sigue en marcha hasta «agente db stop».")
        else:
            lineas.append("No lo usa ningún proceso: «agente db stop» lo para.")
    return lineas


@errores_en_una_linea
def db_start() -> None:
    """Arranca el PostgreSQL embebido y lo deja en marcha hasta «agente db stop»."""
    from agente import embebido

    pgdata = _pgdata()
    embebido.arrancar(pgdata, mantener=True)
    embebido.soltar()  # este proceso se va; la marca lo mantiene en marcha
    typer.echo("\n".join(_describir(embebido.estado(pgdata))))


@errores_en_una_linea
def db_stop(
    forzar: bool = typer.Option(False, "--forzar", help="Pararlo aunque otro proceso lo esté usando."),
) -> None:
    """Para el PostgreSQL embebido (si ningún proceso lo está usando)."""
    from agente import embebido

    pgdata = _pgdata()
    antes = embebido.estado(pgdata)
    despues = embebido.detener(pgdata, forzar=forzar)
    if antes.en_marcha and not despues.en_marcha:
        typer.echo(f"PostgreSQL embebido parado (datos en {despues.pgdata}).")
    elif despues.en_marcha:
        raise ErrorDominio(f"el PostgreSQL embebido de {despues.pgdata} sigue en marcha")
    else:
        typer.echo(f"El PostgreSQL embebido ya estaba parado (datos en {despues.pgdata}).")


@errores_en_una_linea
def db_status() -> None:
    """Dónde están los datos del PostgreSQL embebido y si está en marcha."""
    from agente import embebido

    typer.echo("\n".join(_describir(embebido.estado(_pgdata()))))


def secreto() -> None:
    """Imprime un AGENTE_SECRETO nuevo y fuerte (32 bytes aleatorios en hexadecimal)."""
    from agente.nucleo.secretos import secreto_nuevo

    typer.echo(secreto_nuevo())


def registrar(app: typer.Typer, db: typer.Typer) -> None:
    db.command("start")(db_start)
    db.command("stop")(db_stop)
    db.command("status")(db_status)
    app.command("secreto")(secreto)
