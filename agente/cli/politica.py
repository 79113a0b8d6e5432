"""Órdenes ``agente politica ver|fijar|solicitudes|firmar|rechazar``: umbrales y matriz de
autoridad de una tienda, y los cambios que esperan firma.

Cada ``fijar`` es una versión nueva con quién (``--autor``: un gerente de la tienda o un
regional de su región) y cuándo; lo que ya espera se decide con la versión con la que se
pausó.
"""

from __future__ import annotations

from typing import Annotated

import typer

from agente.cli.comun import conexion as conectar
from agente.cli.comun import errores_en_una_linea
from agente.nucleo.errores import DecisionNoValida

__all__ = ["politica"]

politica = typer.Typer(help="Política de una tienda: umbrales y matriz de autoridad, versionados.",
                       no_args_is_help=True)
SIN_LIMITE = ("sin", "sin-limite", "ninguno", "nunca")


def _eur(valor: str | None, vacio: str) -> str:
    from agente.nucleo import dinero

    return vacio if valor is None else dinero.eur(valor)


def _imprimir(datos: dict) -> None:
    typer.echo(f"Tienda {datos['tienda']} · umbrales v{datos['version']}")
    for nombre, valor in datos["umbrales"].items():
        typer.echo(f"  {nombre}: {valor}")
    for v in datos["historial"]:
        typer.echo(_linea_version(v))
    matriz = datos["matriz"]
    origen = "propia" if matriz["propia"] else "por defecto"
    typer.echo(f"Matriz de autoridad v{matriz['version']} ({origen}, {matriz['creada_por']})")
    for regla, contenido in matriz["reglas"].items():
        limites = ", ".join(f"{rol} {_eur(contenido['limites'].get(rol), 'sin límite')}"
                            for rol in matriz["roles"] if rol in contenido["limites"])
        doble = _eur(contenido["dos_firmas_por_encima"], "nunca")
        typer.echo(f"  {regla}: {limites}; dos firmas por encima de: {doble}")
    for v in datos["historial_matriz"]:
        typer.echo(_linea_version(v))


def _linea_version(v: dict) -> str:
    return (f"  v{v['version']} {v['creada']:%Y-%m-%d %H:%M} por {v['creada_por']}"
            + (f", firmada por {v['firmada_por']}" if v.get("firmada_por") else "")
            + (f" ({v['motivo']})" if v.get("motivo") else ""))


def _pares(valores: list[str], opcion: str) -> dict[str, str | None]:
    pares = {}
    for valor in valores:
        clave, igual, importe = valor.partition("=")
        if not igual or not clave.strip():
            raise DecisionNoValida(f"{opcion} espera clave=valor: «{valor}»")
        # El importe, tal cual: lo que la API no admite (" 20", "1e1") tampoco vale aquí.
        pares[clave.strip()] = None if importe.strip().lower() in SIN_LIMITE else _con_punto(importe)
    return pares


def _con_punto(valor: str) -> str:
    """«250,50» -> «250.50»: un importe escrito con coma decimal (o «1.234,50») vale igual."""
    if "," not in valor:
        return valor
    from agente.nucleo import dinero

    return dinero.texto(dinero.importe_escrito(valor))


@politica.command("ver")
@errores_en_una_linea
def ver(tienda: str = typer.Option(..., "--tienda", help="Id de la tienda.")) -> None:
    """Umbrales y matriz de autoridad vigentes, con sus versiones (quién y cuándo)."""
    from agente.servicio import politica_tienda

    with conectar() as conexion:
        _imprimir(politica_tienda.ver(conexion, tienda))


@politica.command("fijar")
@errores_en_una_linea
def fijar(
    tienda: str = typer.Option(..., "--tienda", help="Id de la tienda."),
    autor: str = typer.Option(..., "--autor", help="Gerente de la tienda o regional de su región."),
    umbral: Annotated[list[str] | None, typer.Option(
        "--umbral", help="nombre=valor (p. ej. limite_reembolso=80).")] = None,
    limite: Annotated[list[str] | None, typer.Option(
        "--limite", help="regla.rol=importe o «sin» (p. ej. reembolso.encargado=400,50).")] = None,
    dos_firmas: Annotated[list[str] | None, typer.Option(
        "--dos-firmas", help="regla=importe o «nunca» (p. ej. reembolso=800).")] = None,
    motivo: str | None = typer.Option(None, "--motivo", help="Por qué (queda en la versión)."),
) -> None:
    """Versión nueva de umbrales y/o matriz (parte de la vigente). Si amplía, queda como
    solicitud que firma alguien por encima de ti (con «agente politica firmar»)."""
    from agente.servicio import cambios_politica

    if not (umbral or limite or dos_firmas):
        raise DecisionNoValida("no hay nada que cambiar: usa --umbral, --limite o --dos-firmas")
    limites: dict[str, dict[str, str | None]] = {}
    for clave, valor in _pares(limite or [], "--limite").items():
        regla, punto, rol = clave.partition(".")
        if not punto or not rol:
            raise DecisionNoValida(f"--limite espera regla.rol=importe: «{clave}»")
        limites.setdefault(regla, {})[rol] = valor
    umbrales = _pares(umbral or [], "--umbral")
    if any(v is None for v in umbrales.values()):
        raise DecisionNoValida("--umbral necesita un valor")
    with conectar() as conexion:
        resultado = cambios_politica.proponer(
            conexion, tienda=tienda, autor=autor, umbrales=umbrales or None, limites=limites or None,
            dos_firmas=_pares(dos_firmas or [], "--dos-firmas") or None, motivo=motivo,
        )
    if resultado.solicitud is not None:
        typer.echo(f"El cambio amplía la política: no se aplica hasta que lo firme "
                   f"{resultado.solicitud['firman']}.")
        _imprimir_solicitud(resultado.solicitud)
        return
    if resultado.estado == "sin_cambios":
        typer.echo("Nada cambia: los valores pedidos ya son los vigentes.")
        return
    typer.echo("Política cambiada (versión nueva):")
    _imprimir(resultado.politica)


def _imprimir_solicitud(s: dict) -> None:
    typer.echo(f"Solicitud {s['id']} · {s['tienda']} · {s['estado']} · de {s['autor']} ({s['autor_rol']}), "
               f"{s['creada']:%Y-%m-%d %H:%M}; caduca {s['caduca']:%Y-%m-%d %H:%M}")
    for d in s["diferencias"]:
        typer.echo(f"  {d['texto']} ({'amplía' if d['sentido'] == 'amplia' else 'endurece'})")
    if s.get("motivo"):
        typer.echo(f"  Motivo: {s['motivo']}")
    if s.get("decidida_por"):
        typer.echo(f"  {s['estado'].capitalize()} por {s['decidida_por']} ({s['decidida_rol']})"
                   + (f": {s['motivo_decision']}" if s.get("motivo_decision") else ""))
    elif s["estado"] == "pendiente":
        typer.echo(f"  Firma: {s['firman']} (agente politica firmar {s['id']} --firmante ...)")


@politica.command("solicitudes")
@errores_en_una_linea
def solicitudes(
    firmante: str = typer.Option(..., "--firmante", help="Gerente o regional: ve las de sus tiendas."),
    tienda: str | None = typer.Option(None, "--tienda", help="Solo esta tienda."),
    todas: bool = typer.Option(False, "--todas", help="También las ya decididas o caducadas."),
) -> None:
    """Solicitudes de cambio de política que esperan firma (las de tus tiendas)."""
    from agente.servicio import cambios_politica, gestion_autoridad, politica_tienda

    with conectar() as conexion:
        tiendas = [tienda] if tienda else list(gestion_autoridad.ambito_firmante(conexion, firmante).tiendas)
        for t in tiendas:
            politica_tienda.comprobar_tienda(conexion, t)
            politica_tienda.comprobar_administrador(conexion, firmante, t)
        filas = cambios_politica.listar(conexion, tiendas, estado=None if todas else "pendiente")
    if not filas:
        typer.echo("No hay solicitudes de cambio de política" + ("" if todas else " pendientes") + ".")
    for fila in filas:
        _imprimir_solicitud(fila)


def _decidir(solicitud: int, firmante: str, aprobar: bool, motivo: str | None) -> None:
    from agente.servicio import cambios_politica

    with conectar() as conexion:
        hecha = cambios_politica.decidir(
            conexion, solicitud_id=solicitud, firmante=firmante, aprobar=aprobar, motivo=motivo)
    typer.echo("Cambio firmado y aplicado:" if aprobar else "Cambio rechazado:")
    _imprimir_solicitud(hecha)


@politica.command("firmar")
@errores_en_una_linea
def firmar(
    solicitud: int = typer.Argument(..., help="Id de la solicitud."),
    firmante: str = typer.Option(..., "--firmante", help="Alguien por encima del autor (un regional)."),
) -> None:
    """Firma una solicitud de cambio que amplía la política: se aplica como versión nueva."""
    _decidir(solicitud, firmante, True, None)


@politica.command("rechazar")
@errores_en_una_linea
def rechazar(
    solicitud: int = typer.Argument(..., help="Id de la solicitud."),
    firmante: str = typer.Option(..., "--firmante", help="Alguien por encima del autor (un regional)."),
    motivo: str = typer.Option(..., "--motivo", help="Por qué no (lo lee el autor)."),
) -> None:
    """Rechaza una solicitud de cambio de política, con un motivo."""
    _decidir(solicitud, firmante, False, motivo)

