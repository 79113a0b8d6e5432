"""Órdenes ``agente politica ver|fijar|solicitudes|firmar|rechazar``: umbrales y matriz de
autoridad de una tienda, y los cambios que esperan firma.

``fijar``, ``solicitudes``, ``firmar`` y ``rechazar`` actúan como la persona que ha entrado
con ``agente entrar`` (un gerente de la tienda o un regional de su región), a través de la
API del servidor (``agente.cli.cliente``): proponer como una persona y firmar como otra
necesita dos personas que hayan entrado. ``--autor`` y ``--firmante`` solo acotan: si se
dan, tienen que ser quien ha entrado. ``ver`` es una orden local de operador: lee la base.

Cada ``fijar`` es una versión nueva con quién y cuándo; lo que ya espera se decide con la
versión con la que se pausó.
"""

from __future__ import annotations

from typing import Annotated

import typer

from agente.cli.cliente import como_persona
from agente.cli.comun import conexion as conectar
from agente.cli.comun import errores_en_una_linea
from nucleo.errores import DecisionNoValida

__all__ = ["politica"]

politica = typer.Typer(help="Política de una tienda: umbrales y matriz de autoridad, versionados. fijar, solicitudes, firmar y rechazar actúan como quien ha entrado con «agente entrar», a través del servidor; ver es local.",
                       no_args_is_help=True)
SIN_LIMITE = ("sin", "sin-limite", "ninguno", "nunca")


def _eur(valor: str | None, vacio: str) -> str:
    from nucleo import dinero

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


def _fecha(valor) -> str:
    """«2026-12-01 10:30» de una fecha de la base o de la API (ISO 8601)."""
    from datetime import datetime

    if isinstance(valor, str):
        valor = datetime.fromisoformat(valor)
    return f"{valor:%Y-%m-%d %H:%M}"


def _linea_version(v: dict) -> str:
    return (f"  v{v['version']} {_fecha(v['creada'])} por {v['creada_por']}"
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


def _como_en_la_api(nombre: str, valor: str) -> str | int:
    """Un umbral entero (días, devoluciones, horas) va como número; el dinero, como texto."""
    from agente.servicio.politica.dominio import VALORES

    declarado = VALORES.get(nombre)
    if declarado is not None and declarado.tipo == "entero" and valor.isdigit():
        return int(valor)
    return valor


def _con_punto(valor: str) -> str:
    """«250,50» -> «250.50»: un importe escrito con coma decimal (o «1.234,50») vale igual."""
    if "," not in valor:
        return valor
    from nucleo import dinero

    return dinero.texto(dinero.importe_escrito(valor))


@politica.command("ver")
@errores_en_una_linea
def ver(tienda: str = typer.Option(..., "--tienda", help="Id de la tienda.")) -> None:
    """Umbrales y matriz de autoridad vigentes, con sus versiones (quién y cuándo). Orden
    local de operador: lee la base, no actúa como nadie."""
    from agente.servicio.politica import politica_tienda

    with conectar() as conexion:
        _imprimir(politica_tienda.ver(conexion, tienda))


@politica.command("fijar")
@errores_en_una_linea
def fijar(
    tienda: str = typer.Option(..., "--tienda", help="Id de la tienda."),
    autor: str | None = typer.Option(None, "--autor", help="Solo acota: si lo das, tiene que ser quien ha entrado."),
    umbral: Annotated[list[str] | None, typer.Option(
        "--umbral", help="nombre=valor (p. ej. limite_reembolso=80).")] = None,
    limite: Annotated[list[str] | None, typer.Option(
        "--limite", help="regla.rol=importe o «sin» (p. ej. reembolso.encargado=400,50).")] = None,
    dos_firmas: Annotated[list[str] | None, typer.Option(
        "--dos-firmas", help="regla=importe o «nunca» (p. ej. reembolso=800).")] = None,
    motivo: str | None = typer.Option(None, "--motivo", help="Por qué (queda en la versión)."),
) -> None:
    """Versión nueva de umbrales y/o matriz (parte de la vigente), como quien ha entrado con
    «agente entrar», a través del servidor (un gerente de la tienda o un regional de su región). Si amplía, queda
    como solicitud que firma otra persona por encima de ti (con «agente politica firmar»)."""
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
    cuerpo = {"umbrales": {k: _como_en_la_api(k, v) for k, v in umbrales.items()} or None, "limites": limites or None,
              "dos_firmas": _pares(dos_firmas or [], "--dos-firmas") or None, "motivo": motivo}
    with como_persona() as yo:
        yo.comprobar_que_es(autor, "--autor")
        antes = yo.get(f"/api/politica/{tienda}")
        resultado = yo.post(f"/api/politica/{tienda}", json={k: v for k, v in cuerpo.items() if v is not None})
    if "diferencias" in resultado:  # 202: una solicitud
        typer.echo(f"El cambio amplía la política: no se aplica hasta que lo firme {resultado['firman']}.")
        _imprimir_solicitud(resultado)
        return
    if (resultado["version"], resultado["matriz"]["version"]) == (antes["version"], antes["matriz"]["version"]):
        typer.echo("Nada cambia: los valores pedidos ya son los vigentes.")
        return
    typer.echo("Política cambiada (versión nueva):")
    _imprimir(resultado)


def _imprimir_solicitud(s: dict) -> None:
    typer.echo(f"Solicitud {s['id']} · {s['tienda']} · {s['estado']} · de {s['autor']} ({s['autor_rol']}), "
               f"{_fecha(s['creada'])}; caduca {_fecha(s['caduca'])}")
    for d in s["diferencias"]:
        typer.echo(f"  {d['texto']} ({'amplía' if d['sentido'] == 'amplia' else 'endurece'})")
    if s.get("motivo"):
        typer.echo(f"  Motivo: {s['motivo']}")
    if s.get("decidida_por"):
        typer.echo(f"  {s['estado'].capitalize()} por {s['decidida_por']} ({s['decidida_rol']})"
                   + (f": {s['motivo_decision']}" if s.get("motivo_decision") else ""))
    elif s["estado"] == "pendiente":
        typer.echo(f"  Firma: {s['firman']} (quien firma entra con «agente entrar» y: agente politica firmar {s['id']})")


@politica.command("solicitudes")
@errores_en_una_linea
def solicitudes(
    firmante: str | None = typer.Option(None, "--firmante", help="Solo acota: si lo das, tiene que ser quien ha entrado."),
    tienda: str | None = typer.Option(None, "--tienda", help="Solo esta tienda."),
    todas: bool = typer.Option(False, "--todas", help="También las ya decididas o caducadas."),
) -> None:
    """Solicitudes de cambio de política que esperan firma en las tiendas de quien ha entrado
    (a través del servidor)."""
    with como_persona() as yo:
        yo.comprobar_que_es(firmante, "--firmante")
        params = {"estado": "todas" if todas else "pendiente", **({"tienda": tienda} if tienda else {})}
        filas = yo.get("/api/solicitudes-politica", params=params)
    if not filas:
        typer.echo("No hay solicitudes de cambio de política" + ("" if todas else " pendientes") + ".")
    for fila in filas:
        _imprimir_solicitud(fila)


def _decidir(solicitud: int, firmante: str | None, aprobar: bool, motivo: str | None) -> None:
    with como_persona() as yo:
        yo.comprobar_que_es(firmante, "--firmante")
        hecha = yo.post(f"/api/solicitudes-politica/{solicitud}/decision",
                        json={"decision": "aprobar" if aprobar else "rechazar",
                              **({"motivo": motivo} if motivo else {})})
    typer.echo("Cambio firmado y aplicado:" if aprobar else "Cambio rechazado:")
    _imprimir_solicitud(hecha)


@politica.command("firmar")
@errores_en_una_linea
def firmar(
    solicitud: int = typer.Argument(..., help="Id de la solicitud."),
    firmante: str | None = typer.Option(None, "--firmante", help="Solo acota: si lo das, tiene que ser quien ha entrado."),
) -> None:
    """Firma, como quien ha entrado y a través del servidor, una solicitud que amplía la política (alguien por encima
    del autor, nunca el autor): se aplica como versión nueva."""
    _decidir(solicitud, firmante, True, None)


@politica.command("rechazar")
@errores_en_una_linea
def rechazar(
    solicitud: int = typer.Argument(..., help="Id de la solicitud."),
    firmante: str | None = typer.Option(None, "--firmante", help="Solo acota: si lo das, tiene que ser quien ha entrado."),
    motivo: str = typer.Option(..., "--motivo", help="Por qué no (lo lee el autor)."),
) -> None:
    """Rechaza, como quien ha entrado y a través del servidor, una solicitud de cambio de política, con un motivo."""
    _decidir(solicitud, firmante, False, motivo)
