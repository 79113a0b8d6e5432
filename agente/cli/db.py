"""El grupo ``agente db``: migraciones, datos de demo, URL y reinicio de la base, y arrancar,
parar y ver el PostgreSQL embebido (``start``, ``stop``, ``status``).
"""

from __future__ import annotations

import typer

from agente.cli.comun import conexion, errores_en_una_linea, url
from nucleo.errores import ErrorDominio

__all__ = ["db"]

db = typer.Typer(help="Base de datos: migraciones, datos de demo, URL, reinicio (órdenes locales de operador).", no_args_is_help=True)


@db.command("migrate")
@errores_en_una_linea
def db_migrate() -> None:
    """Aplica las migraciones pendientes de sql/ (idempotente).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.plataforma import migrar

    aplicadas = migrar(url())
    if aplicadas:
        typer.echo("Migraciones aplicadas: " + ", ".join(aplicadas))
    else:
        typer.echo("El esquema ya estaba al día: nada que aplicar.")


@db.command("demo")
@errores_en_una_linea
def db_demo(
    reiniciar: bool = typer.Option(False, "--reiniciar", help="Borrar TODOS los datos y cargar la demo de nuevo."),
    si: bool = typer.Option(False, "--si", "--yes", help="Con --reiniciar, no pedir confirmación."),
) -> None:
    """Carga la demo en una base vacía; si ya está, la deja como está (no revive nada).

    Con un servidor usando la base no hace nada. Orden local de operador: usa la base
    directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.demo import una_vez

    with conexion() as abierta:
        una_vez.comprobar_sin_servidor(abierta)
        if not reiniciar:
            cargados = una_vez.cargar_una_vez(abierta)
            if cargados is None:
                typer.echo(f"La demo ya estaba cargada y se conserva tal cual ({una_vez.recuentos(abierta).texto()}). "
                           "Para empezar de cero: agente db demo --reiniciar.")
                return
            typer.echo(_cargada(cargados))
            return
        perdidos = una_vez.recuentos(abierta)
    typer.echo(f"Se borrarán todos los datos de la base ({perdidos.texto()}) y se cargará la demo de nuevo.")
    if not si and not typer.confirm("¿Continuar?"):
        typer.echo("Cancelado: no se ha borrado nada.")
        raise typer.Exit(code=1)
    typer.echo(_cargada(una_vez.reiniciar(url())))


def _cargada(recuentos: dict[str, int]) -> str:
    return "Demo cargada: " + ", ".join(f"{n} {nombre}" for nombre, n in recuentos.items()) + "."


@db.command("url")
@errores_en_una_linea
def db_url() -> None:
    """Muestra la URL de conexión (arranca el embebido si hace falta).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    typer.echo(url())


@db.command("reset")
@errores_en_una_linea
def db_reset(
    yes: bool = typer.Option(False, "--yes", help="No pedir confirmación."),
) -> None:
    """Borra TODOS los datos del PostgreSQL embebido y vuelve a migrar.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.plataforma import rehacer
    from nucleo.ajustes import ajustes

    aj = ajustes()
    if aj.database_url:
        raise ErrorDominio("db reset solo funciona con el PostgreSQL embebido (DATABASE_URL está definido)")
    if not yes and not typer.confirm(f"Se borrarán todos los datos de {aj.pgdata}. ¿Continuar?"):
        typer.echo("Cancelado: no se ha borrado nada.")
        raise typer.Exit(code=1)
    rehacer(url())
    typer.echo("Base de datos vaciada y migrada de nuevo.")


def _pgdata():
    from nucleo.ajustes import ajustes

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
            from agente.servicio.operador.proceso import embebido

            lineas.append("Lo usan los procesos: " + ", ".join(map(embebido.describir_proceso, est.usuarios)))
        elif est.mantener:
            lineas.append("Arrancado con «agente db start»: sigue en marcha hasta «agente db stop».")
        else:
            lineas.append("No lo usa ningún proceso: «agente db stop» lo para.")
    return lineas


@db.command("start")
@errores_en_una_linea
def db_start() -> None:
    """Arranca el PostgreSQL embebido y lo deja en marcha hasta «agente db stop».

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.proceso import embebido

    pgdata = _pgdata()
    embebido.arrancar(pgdata, mantener=True)
    embebido.soltar()  # este proceso se va; la marca lo mantiene en marcha
    typer.echo("\n".join(_describir(embebido.estado(pgdata))))


@db.command("stop")
@errores_en_una_linea
def db_stop(
    forzar: bool = typer.Option(False, "--forzar", help="Pararlo aunque otro proceso lo esté usando."),
) -> None:
    """Para el PostgreSQL embebido (si ningún proceso lo está usando).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.proceso import embebido

    pgdata = _pgdata()
    antes = embebido.estado(pgdata)
    despues = embebido.detener(pgdata, forzar=forzar)
    if antes.en_marcha and not despues.en_marcha:
        typer.echo(f"PostgreSQL embebido parado (datos en {despues.pgdata}).")
    elif despues.en_marcha:
        raise ErrorDominio(f"el PostgreSQL embebido de {despues.pgdata} sigue en marcha")
    else:
        typer.echo(f"El PostgreSQL embebido ya estaba parado (datos en {despues.pgdata}).")


@db.command("status")
@errores_en_una_linea
def db_status() -> None:
    """Dónde están los datos del PostgreSQL embebido y si está en marcha.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.operador.proceso import embebido

    typer.echo("\n".join(_describir(embebido.estado(_pgdata()))))
