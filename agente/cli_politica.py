"""Órdenes ``agente politica ver|fijar``: umbrales y matriz de autoridad de una tienda.

Las registra ``agente.cli`` (``registrar(app)``). Cada ``fijar`` es una versión nueva con
quién (``--autor``: un gerente de la tienda o un regional de su región) y cuándo; lo que
ya espera se decide con la versión con la que se pausó.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated

import typer

from agente.cli_errores import errores_en_una_linea
from agente.nucleo.errores import DecisionNoValida

__all__ = ["registrar"]

politica = typer.Typer(help="Política de una tienda: umbrales y matriz de autoridad, versionados.",
                       no_args_is_help=True)
SIN_LIMITE = ("sin", "sin-limite", "ninguno", "nunca")


@contextmanager
def _conexion():
    import psycopg

    from agente.cli import _url
    from agente.migraciones import migrar
    from agente.nucleo.bd import KWARGS_CONEXION

    url = _url()
    migrar(url)
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        yield conexion


def _eur(valor: str | None, vacio: str) -> str:
    from agente.nucleo import dinero

    return vacio if valor is None else dinero.eur(valor)


def _imprimir(datos: dict) -> None:
    typer.echo(f"Tienda {datos['tienda']} · umbrales v{datos['version']}")
    for nombre, valor in datos["umbrales"].items():
        typer.echo(f"  {nombre}: {valor}")
    for v in datos["historial"]:
        typer.echo(f"  v{v['version']} {v['creada']:%Y-%m-%d %H:%M} por {v['creada_por']}"
                   + (f" ({v['motivo']})" if v.get("motivo") else ""))
    matriz = datos["matriz"]
    origen = "propia" if matriz["propia"] else "por defecto"
    typer.echo(f"Matriz de autoridad v{matriz['version']} ({origen}, {matriz['creada_por']})")
    for regla, contenido in matriz["reglas"].items():
        limites = ", ".join(f"{rol} {_eur(contenido['limites'].get(rol), 'sin límite')}"
                            for rol in matriz["roles"] if rol in contenido["limites"])
        doble = _eur(contenido["dos_firmas_por_encima"], "nunca")
        typer.echo(f"  {regla}: {limites}; dos firmas por encima de: {doble}")
    for v in datos["historial_matriz"]:
        typer.echo(f"  v{v['version']} {v['creada']:%Y-%m-%d %H:%M} por {v['creada_por']}"
                   + (f" ({v['motivo']})" if v.get("motivo") else ""))


def _pares(valores: list[str], opcion: str) -> dict[str, str | None]:
    pares = {}
    for valor in valores:
        clave, igual, importe = valor.partition("=")
        if not igual or not clave.strip():
            raise DecisionNoValida(f"{opcion} espera clave=valor: «{valor}»")
        importe = importe.strip()
        pares[clave.strip()] = None if importe.lower() in SIN_LIMITE else importe
    return pares


@politica.command("ver")
@errores_en_una_linea
def ver(tienda: str = typer.Option(..., "--tienda", help="Id de la tienda.")) -> None:
    """Umbrales y matriz de autoridad vigentes, con sus versiones (quién y cuándo)."""
    from agente.servicio import politica_tienda

    with _conexion() as conexion:
        _imprimir(politica_tienda.ver(conexion, tienda))


@politica.command("fijar")
@errores_en_una_linea
def fijar(
    tienda: str = typer.Option(..., "--tienda", help="Id de la tienda."),
    autor: str = typer.Option(..., "--autor", help="Gerente de la tienda o regional de su región."),
    umbral: Annotated[list[str] | None, typer.Option(
        "--umbral", help="nombre=valor (p. ej. limite_reembolso=80).")] = None,
    limite: Annotated[list[str] | None, typer.Option(
        "--limite", help="regla.rol=importe o «sin» (p. ej. reembolso.encargado=400).")] = None,
    dos_firmas: Annotated[list[str] | None, typer.Option(
        "--dos-firmas", help="regla=importe o «nunca» (p. ej. reembolso=800).")] = None,
    motivo: str | None = typer.Option(None, "--motivo", help="Por qué (queda en la versión)."),
) -> None:
    """Versión nueva de umbrales y/o matriz de autoridad (parte de la vigente)."""
    from agente.servicio import politica_tienda

    limites: dict[str, dict[str, str | None]] = {}
    for clave, valor in _pares(limite or [], "--limite").items():
        regla, punto, rol = clave.partition(".")
        if not punto or not rol:
            raise DecisionNoValida(f"--limite espera regla.rol=importe: «{clave}»")
        limites.setdefault(regla, {})[rol] = valor
    umbrales = _pares(umbral or [], "--umbral")
    if any(v is None for v in umbrales.values()):
        raise DecisionNoValida("--umbral necesita un valor")
    with _conexion() as conexion:
        datos = politica_tienda.fijar(
            conexion, tienda=tienda, autor=autor, umbrales=umbrales or None, limites=limites or None,
            dos_firmas=_pares(dos_firmas or [], "--dos-firmas") or None, motivo=motivo,
        )
    typer.echo("Política cambiada (versión nueva):")
    _imprimir(datos)


def registrar(app: typer.Typer) -> None:
    app.add_typer(politica, name="politica")
