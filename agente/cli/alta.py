"""Órdenes del alta: ``agente tiendas``, ``agente regiones`` y ``agente personas``.

Crear, cambiar, desactivar y listar actúan como quien ha entrado (``agente entrar``), por la
API del servidor (``/api/tiendas``, ``/api/regiones``, ``/api/personas``): la separación de
funciones la aplica el servicio con esa identidad. ``agente personas primera`` es la única
local de operador: crea el primer administrador en una base sin ninguno e imprime su enlace
de entrada (``docs/empezar-tienda.md``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from agente.cli.cliente import como_persona
from agente.cli.comun import conexion as conectar
from agente.cli.comun import errores_en_una_linea, tabla

__all__ = ["personas", "regiones", "tiendas"]

tiendas = typer.Typer(help="Tiendas: darlas de alta, cambiarlas, desactivarlas y listarlas (como quien ha entrado).",
                      no_args_is_help=True)
regiones = typer.Typer(help="Regiones: darlas de alta, cambiarlas, desactivarlas y listarlas (como quien ha entrado).",
                       no_args_is_help=True)
personas = typer.Typer(help="Personas de la tienda: encargados, gerentes, regionales y administradores "
                            "(como quien ha entrado; «primera», local de operador).", no_args_is_help=True)

Nombre = Annotated[str | None, typer.Option("--nombre", help="Nombre visible.")]
Zona = Annotated[str | None, typer.Option("--zona-horaria", help="Zona horaria IANA (por defecto Europe/Madrid).")]
Calle = Annotated[str | None, typer.Option("--calle", help="Calle y número.")]
Codigo = Annotated[str | None, typer.Option("--codigo-postal", help="Código postal (la provincia sale de él).")]
Localidad = Annotated[str | None, typer.Option("--localidad", help="Localidad.")]
Provincia = Annotated[str | None, typer.Option("--provincia", help="Provincia (si se da, tiene que ser la del código postal).")]
Region = Annotated[str | None, typer.Option("--region", help="Id de la región.")]


def _sin_nulos(**valores: Any) -> dict[str, Any]:
    return {k: v for k, v in valores.items() if v is not None}


def _pedir(metodo: str, ruta: str, **opciones: Any) -> Any:
    with como_persona() as cliente:
        return cliente.pedir(metodo, ruta, **opciones)


def _tienda(t: dict[str, Any]) -> str:
    direccion = ", ".join(x for x in (t.get("calle"), t.get("codigo_postal"), t.get("localidad"),
                                      t.get("provincia")) if x)
    return (f"{t['nombre']} ({t['id']}), {t['zona_horaria']}"
            f"{', región ' + t['region'] if t.get('region') else ''}{'; ' + direccion if direccion else ''}"
            f"{'' if t['activa'] else '; desactivada'}")


# -- tiendas ---------------------------------------------------------------------------------

@tiendas.command("crear")
@errores_en_una_linea
def crear_tienda(
    id: Annotated[str, typer.Argument(help="Id de la tienda: minúsculas, cifras y guiones (p. ej. mi-tienda).")],
    nombre: Annotated[str, typer.Option("--nombre", help="Nombre visible.")],
    zona_horaria: Zona = None, calle: Calle = None, codigo_postal: Codigo = None, localidad: Localidad = None,
    provincia: Provincia = None, region: Region = None,
) -> None:
    """Da de alta una tienda (un regional, en su región; un administrador, en cualquiera).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    t = _pedir("POST", "/api/tiendas", json=_sin_nulos(
        id=id, nombre=nombre, zona_horaria=zona_horaria, calle=calle, codigo_postal=codigo_postal,
        localidad=localidad, provincia=provincia, region=region))
    typer.echo(f"Tienda creada: {_tienda(t)}.")


@tiendas.command("editar")
@errores_en_una_linea
def editar_tienda(
    id: Annotated[str, typer.Argument(help="Id de la tienda.")],
    nombre: Nombre = None, zona_horaria: Zona = None, calle: Calle = None, codigo_postal: Codigo = None,
    localidad: Localidad = None, provincia: Provincia = None, region: Region = None,
) -> None:
    """Cambia lo que se dé de una tienda; lo demás queda igual.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    t = _pedir("PATCH", f"/api/tiendas/{id}", json=_sin_nulos(
        nombre=nombre, zona_horaria=zona_horaria, calle=calle, codigo_postal=codigo_postal,
        localidad=localidad, provincia=provincia, region=region))
    typer.echo(f"Tienda cambiada: {_tienda(t)}.")


@tiendas.command("desactivar")
@errores_en_una_linea
def desactivar_tienda(id: Annotated[str, typer.Argument(help="Id de la tienda.")]) -> None:
    """Desactiva una tienda: deja de contar en su región.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    t = _pedir("POST", f"/api/tiendas/{id}/desactivar")
    typer.echo(f"Tienda desactivada: {_tienda(t)}.")


@tiendas.command("listar")
@errores_en_una_linea
def listar_tiendas() -> None:
    """Las tiendas que gestionas (o la tuya).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    filas = _pedir("GET", "/api/tiendas")
    tabla("Tiendas", ["Id", "Nombre", "Región", "Zona", "Dirección", "Activa"],
          [[t["id"], t["nombre"], t.get("region") or "", t["zona_horaria"],
            ", ".join(x for x in (t.get("calle"), t.get("codigo_postal"), t.get("localidad"), t.get("provincia")) if x),
            "sí" if t["activa"] else "no"] for t in filas], enteras=("Id",))


# -- regiones --------------------------------------------------------------------------------

@regiones.command("crear")
@errores_en_una_linea
def crear_region(
    id: Annotated[str, typer.Argument(help="Id de la región: minúsculas, cifras y guiones (p. ej. centro).")],
    nombre: Annotated[str, typer.Option("--nombre", help="Nombre visible.")],
) -> None:
    """Da de alta una región (solo un administrador).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    r = _pedir("POST", "/api/regiones", json={"id": id, "nombre": nombre})
    typer.echo(f"Región creada: {r['nombre']} ({r['id']}).")


@regiones.command("editar")
@errores_en_una_linea
def editar_region(id: Annotated[str, typer.Argument(help="Id de la región.")],
                  nombre: Annotated[str, typer.Option("--nombre", help="Nombre visible.")]) -> None:
    """Cambia el nombre de una región (solo un administrador).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    r = _pedir("PATCH", f"/api/regiones/{id}", json={"nombre": nombre})
    typer.echo(f"Región cambiada: {r['nombre']} ({r['id']}).")


@regiones.command("desactivar")
@errores_en_una_linea
def desactivar_region(id: Annotated[str, typer.Argument(help="Id de la región.")]) -> None:
    """Desactiva una región sin tiendas activas (solo un administrador).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    r = _pedir("POST", f"/api/regiones/{id}/desactivar")
    typer.echo(f"Región desactivada: {r['nombre']} ({r['id']}).")


@regiones.command("listar")
@errores_en_una_linea
def listar_regiones() -> None:
    """Las regiones que gestionas, con sus tiendas activas.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    filas = _pedir("GET", "/api/regiones")
    tabla("Regiones", ["Id", "Nombre", "Tiendas", "Activa"],
          [[r["id"], r["nombre"], ", ".join(r["tiendas"]), "sí" if r["activa"] else "no"] for r in filas],
          enteras=("Id",))


# -- personas --------------------------------------------------------------------------------

def _persona(p: dict[str, Any]) -> str:
    donde = ", ".join(x for x in (f"tienda {p['tienda']}" if p.get("tienda") else "",
                                  f"región {p['region']}" if p.get("region") else "") if x)
    rol = "administrador" if p.get("administrador") else p["rol"]
    return (f"{p['nombre']} ({p['id']}, {rol}{', ' + donde if donde else ''}), {p['email']}"
            f"{'' if p['activo'] else '; de baja'}")


Rol = Annotated[str | None, typer.Option("--rol", help="encargado, gerente o regional.")]
Tienda = Annotated[str | None, typer.Option("--tienda", help="Id de su tienda (encargado y gerente).")]
Email = Annotated[str | None, typer.Option("--email", help="El correo con el que entra.")]


@personas.command("crear")
@errores_en_una_linea
def crear_persona(
    id: Annotated[str, typer.Argument(help="Id de la persona (p. ej. enc-mi-tienda).")],
    nombre: Annotated[str, typer.Option("--nombre", help="Nombre y apellidos.")],
    email: Annotated[str, typer.Option("--email", help="El correo con el que entra.")],
    rol: Annotated[str, typer.Option("--rol", help="encargado, gerente o regional.")],
    tienda: Tienda = None, region: Region = None,
    administrador: Annotated[bool, typer.Option("--administrador", help="Administrador (solo lo da otro administrador).")] = False,
) -> None:
    """Da de alta a una persona, nunca con un rol más alto que el tuyo ni fuera de lo que gestionas.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    p = _pedir("POST", "/api/personas", json=_sin_nulos(
        id=id, nombre=nombre, email=email, rol=rol, tienda=tienda, region=region, administrador=administrador))
    typer.echo(f"Persona creada: {_persona(p)}. Entra con su correo (en /encargado o con «agente entrar»).")


@personas.command("editar")
@errores_en_una_linea
def editar_persona(
    id: Annotated[str, typer.Argument(help="Id de la persona.")],
    nombre: Nombre = None, email: Email = None, rol: Rol = None, tienda: Tienda = None, region: Region = None,
    activar: Annotated[bool, typer.Option("--activar", help="Vuelve a darla de alta.")] = False,
) -> None:
    """Cambia lo que se dé de una persona (nadie se cambia a sí mismo el rol ni las tiendas).

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    p = _pedir("PATCH", f"/api/personas/{id}", json=_sin_nulos(
        nombre=nombre, email=email, rol=rol, tienda=tienda, region=region, activo=True if activar else None))
    typer.echo(f"Persona cambiada: {_persona(p)}.")


@personas.command("desactivar")
@errores_en_una_linea
def desactivar_persona(id: Annotated[str, typer.Argument(help="Id de la persona.")]) -> None:
    """Da de baja a una persona: no entra ni firma, y suelta lo que tenía reclamado.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    p = _pedir("POST", f"/api/personas/{id}/desactivar")
    typer.echo(f"Persona dada de baja: {_persona(p)}.")


@personas.command("listar")
@errores_en_una_linea
def listar_personas() -> None:
    """Las personas que gestionas.

    Actúa como quien ha entrado con «agente entrar», a través del servidor."""
    filas = _pedir("GET", "/api/personas")
    tabla("Personas", ["Id", "Nombre", "Correo", "Rol", "Tienda", "Región", "Activa"],
          [[p["id"], p["nombre"], p.get("email") or "", "administrador" if p["administrador"] else p["rol"],
            p.get("tienda") or "", p.get("region") or "", "sí" if p["activo"] else "no"] for p in filas],
          enteras=("Id", "Correo"))


@personas.command("primera")
@errores_en_una_linea
def primera(
    nombre: Annotated[str, typer.Option("--nombre", help="Nombre y apellidos del primer administrador.")],
    email: Annotated[str, typer.Option("--email", help="Su correo (con él entrará después).")],
    id: Annotated[str, typer.Option("--id", help="Su id.")] = "admin",
) -> None:
    """Crea el primer administrador en una base sin ninguno (una sola vez) e imprime su enlace
    de entrada (un uso, 15 minutos) en la salida estándar.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.alta.primera import primera_persona
    from nucleo.ajustes import ajustes

    with conectar() as c:
        enlace = primera_persona(c, nombre=nombre, email=email, id=id)
    typer.echo(f"{enlace.nombre} ({id}) es el primer administrador. Su enlace de entrada vale 15 minutos "
               "y un solo uso: ábrelo en el navegador o pásaselo a «agente entrar --enlace».", err=True)
    typer.echo(enlace.url(ajustes().avisos_base_url))
