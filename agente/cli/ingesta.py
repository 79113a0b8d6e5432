"""Órdenes de la ingesta del back office: ``agente claves crear|listar|revocar`` (claves de
API con alcances) y ``agente importar FICHERO`` (un lote en JSON lines, en flujo).

Hablan con la base con una conexión corta, sin construir el agente.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from agente.cli.comun import conexion as conectar
from agente.cli.comun import errores_en_una_linea, tabla

__all__ = ["claves", "importar"]

claves = typer.Typer(help="Claves de API del back office de una tienda, con alcances (órdenes locales de operador).", no_args_is_help=True)
ALCANCES_AYUDA = "clientes, productos, stock, pedidos o estados (repetible)"


@claves.command("crear")
@errores_en_una_linea
def crear(
    tienda: Annotated[str, typer.Option("--tienda", help="Tienda de la clave.")],
    alcance: Annotated[list[str], typer.Option("--alcance", help=ALCANCES_AYUDA)],
    nombre: Annotated[str, typer.Option("--nombre", help="Para reconocerla (p. ej. «ERP»).")] = "back office",
    autor: Annotated[str, typer.Option("--autor", help="Nota de quién la pide (queda apuntada; informativa: la orden es local de operador).")] = "cli",
) -> None:
    """Crea una clave y la enseña UNA vez: guárdala ya (la base solo guarda su hash).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.tienda.ingesta import crear_clave

    with conectar() as c:
        creada = crear_clave(c, tienda=tienda, nombre=nombre, alcances=alcance, creada_por=autor)
    typer.echo(f"Clave {creada.clave.prefijo} para {tienda} ({', '.join(creada.clave.alcances)}):")
    typer.echo(creada.secreto)
    typer.echo("No se volverá a mostrar. Va en la cabecera X-Clave-API.", err=True)


@claves.command("listar")
@errores_en_una_linea
def listar(tienda: Annotated[str | None, typer.Option("--tienda", help="Solo las de esta tienda.")] = None) -> None:
    """Las claves (sin el secreto): prefijo, tienda, alcances, creación, último uso y revocación.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.tienda.ingesta import listar_claves

    with conectar() as c:
        filas = listar_claves(c, tienda)
    tabla("Claves de API", ["Prefijo", "Tienda", "Nombre", "Alcances", "Creada", "Usada", "Revocada"],
          [[k.prefijo, k.tienda, k.nombre, ", ".join(k.alcances), f"{k.creada:%Y-%m-%d %H:%M} ({k.creada_por})",
            f"{k.usada:%Y-%m-%d %H:%M}" if k.usada else "", f"{k.revocada:%Y-%m-%d %H:%M}" if k.revocada else ""]
           for k in filas], enteras=("Prefijo",))


@claves.command("revocar")
@errores_en_una_linea
def revocar(prefijo: Annotated[str, typer.Argument(help="El prefijo de la clave (o la clave entera).")]) -> None:
    """Revoca la clave al momento: la siguiente petición con ella es 401.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.tienda.ingesta import revocar_clave

    with conectar() as c:
        k = revocar_clave(c, prefijo)
    typer.echo(f"Clave {k.prefijo} ({k.tienda}) revocada el {k.revocada:%Y-%m-%d %H:%M:%S}.")


@errores_en_una_linea
def importar(
    fichero: Annotated[Path, typer.Argument(help="JSON lines: un registro por línea («-»: la entrada estándar).")],
    tienda: Annotated[str, typer.Option("--tienda", help="La tienda de los registros.")],
) -> None:
    """Aplica un lote en JSON lines (en flujo, por tramos): los registros válidos se aplican
    y cada inválido sale con su línea; termina con código 1 si hubo alguno.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona.
    """
    from agente.servicio.tienda.ingesta import importar

    inicio = time.perf_counter()

    def al_fallar(f) -> None:
        typer.echo(f"línea {f.linea}: {f.estado_http} {f.mensaje}", err=True)

    with conectar() as c:
        informe = importar(c, fichero, tienda=tienda, al_fallar=al_fallar)
    segundos = time.perf_counter() - inicio
    aplicados = informe.creados + informe.actualizados + informe.sin_cambios
    typer.echo(f"{informe.lineas} líneas: {informe.creados} creados, {informe.actualizados} actualizados, "
               f"{informe.sin_cambios} sin cambios, {informe.invalidos} inválidos "
               f"({segundos:.1f} s, {aplicados / segundos if segundos else 0:.0f} registros/s).")
    if informe.invalidos:
        raise typer.Exit(code=1)
