"""CLI ``agente``: la misma capa de servicio que usa la API HTTP, con salida en español."""

from __future__ import annotations

import sys
from functools import wraps

import typer

from agente.ajustes import ajustes
from agente.errores import ErrorDominio

app = typer.Typer(help="Agente de atención al cliente para tiendas.", no_args_is_help=True)
db = typer.Typer(help="Base de datos: migraciones, datos de demo, URL, reinicio.", no_args_is_help=True)
app.add_typer(db, name="db")


def _errores_en_una_linea(funcion):
    @wraps(funcion)
    def envoltura(*args, **kwargs):
        try:
            return funcion(*args, **kwargs)
        except ErrorDominio as exc:
            typer.echo(f"Error: {exc.mensaje}", err=True)
            raise typer.Exit(code=2) from None

    return envoltura


def _url() -> str:
    from agente.bd import comprobar_conexion, url_basedatos

    aj = ajustes()
    url = url_basedatos(aj)
    comprobar_conexion(url, ajuste="DATABASE_URL" if aj.database_url else "AGENTE_PGDATA")
    return url


@db.command("migrate")
@_errores_en_una_linea
def db_migrate() -> None:
    """Aplica las migraciones pendientes de sql/ (idempotente)."""
    from agente.migraciones import migrar

    aplicadas = migrar(_url())
    if aplicadas:
        typer.echo("Migraciones aplicadas: " + ", ".join(aplicadas))
    else:
        typer.echo("El esquema ya estaba al día: nada que aplicar.")


@db.command("demo")
@_errores_en_una_linea
def db_demo() -> None:
    """Carga (o refresca) el catálogo de demostración."""
    import psycopg

    from agente.bd import KWARGS_CONEXION
    from agente.demo import cargar_demo
    from agente.migraciones import migrar

    url = _url()
    migrar(url)
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        recuentos = cargar_demo(conexion)
    typer.echo(
        "Demo cargada: "
        + ", ".join(f"{n} {nombre}" for nombre, n in recuentos.items())
    )


@db.command("url")
@_errores_en_una_linea
def db_url() -> None:
    """Muestra la URL de conexión (arranca el embebido si hace falta)."""
    typer.echo(_url())


@db.command("reset")
@_errores_en_una_linea
def db_reset(
    yes: bool = typer.Option(False, "--yes", help="No pedir confirmación."),
) -> None:
    """Borra TODOS los datos del PostgreSQL embebido y vuelve a migrar."""
    import psycopg

    from agente.bd import KWARGS_CONEXION
    from agente.migraciones import migrar

    aj = ajustes()
    if aj.database_url:
        raise ErrorDominio("db reset solo funciona con el PostgreSQL embebido (DATABASE_URL está definido)")
    if not yes and not typer.confirm(f"Se borrarán todos los datos de {aj.pgdata}. ¿Continuar?"):
        typer.echo("Cancelado: no se ha borrado nada.")
        raise typer.Exit(code=1)
    url = _url()
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        conexion.execute("DROP SCHEMA public CASCADE")
        conexion.execute("CREATE SCHEMA public")
    migrar(url)
    typer.echo("Base de datos vaciada y migrada de nuevo.")


def main() -> None:  # pragma: no cover - punto de entrada alternativo
    app(prog_name="agente")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
