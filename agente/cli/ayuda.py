"""La ayuda de la CLI en español (``agente --help``).

Typer 0.29 lleva su propia copia de click (``typer._click``) con los textos fijos en inglés
(«Usage:», «Show this message and exit.») y calcula al importar los títulos de sus paneles
(«Options», «Commands») con ``gettext``, sin catálogos: en inglés. ``en_espanol`` cambia
esos títulos, el prefijo del uso y el texto de ``--help`` (idempotente).

Los errores de uso (un valor que no es del tipo, una opción que no existe, un argumento que
falta) los arma esa copia de click con f-strings en inglés, y los de tipo vienen de pydantic
(«Input should be a valid integer»): ``mensaje_de_validacion`` dice en español el error de
pydantic y ``error_en_espanol`` traduce el mensaje entero antes de enseñarlo (issue 39).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["AYUDA", "TIPOS", "TRADUCCIONES", "en_espanol", "error_en_espanol", "mensaje_de_validacion"]

TRADUCCIONES = {
    "Usage:": "Uso:",
    "Usage: ": "Uso: ",
    "Show this message and exit.": "Muestra esta ayuda y sale.",
    "Options": "Opciones",
    "Arguments": "Argumentos",
    "Commands": "Órdenes",
    "Error": "Error",
    "required": "obligatorio",
    "[required]": "[obligatorio]",
    "default: {default}": "por defecto: {default}",
    "[default: {}]": "[por defecto: {}]",
    "env var: {var}": "variable: {var}",
    "[env var: {}]": "[variable: {}]",
    "(deprecated) ": "(obsoleta) ",
    "(dynamic)": "(dinámico)",
    "Aborted!": "Cancelado.",
    "Aborted.": "Cancelado.",
    "Try [blue]'{command_path} {help_option}'[/] for help.":
        "Prueba [blue]'{command_path} {help_option}'[/] para ver la ayuda.",
    "Try '{command} {option}' for help.": "Prueba '{command} {option}' para ver la ayuda.",
    "Missing argument": "Falta el argumento",
    "Missing option": "Falta la opción",
    "Missing parameter": "Falta el parámetro",
    "Missing {param_type}": "Falta {param_type}",
    "Missing {param_type} '{param_hint}'.": "Falta {param_type} «{param_hint}».",
    "argument": "el argumento",
    "option": "la opción",
    "parameter": "el parámetro",
    "No such option: {name}": "No existe la opción {name}",
    "No such command {name!r}.": "No existe la orden {name!r}.",
    "Did you mean {possibility}?": "¿Querías decir {possibility}?",
    "Invalid value: {message}": "Valor no válido: {message}",
    "Invalid value for {param_hint}: {message}": "Valor no válido para {param_hint}: {message}",
    "Got unexpected extra argument ({args})": "Sobra un argumento ({args})",
    "Got unexpected extra arguments ({args})": "Sobran argumentos ({args})",
    "Option {name!r} requires an argument.": "La opción {name!r} necesita un valor.",
    "{value!r} is not a valid {number_type}.": "{value!r} no es un {number_type} válido.",
    "integer": "número entero",
    "float": "número",
    "{value!r} does not match the format {format}.": "{value!r} no tiene el formato {format}.",
    "{value!r} does not match the formats {formats}.": "{value!r} no tiene ninguno de los formatos {formats}.",
    "{value} is not in the range {range}.": "{value} no está en el intervalo {range}.",
    "{value!r} is not one of {choices}.": "{value!r} no es ninguno de estos: {choices}.",
    "{value!r} is not {choice}.": "{value!r} no es {choice}.",
}

_CONSTANTES_TYPER = {
    "ARGUMENTS_PANEL_TITLE": "Arguments", "OPTIONS_PANEL_TITLE": "Options",
    "COMMANDS_PANEL_TITLE": "Commands", "ERRORS_PANEL_TITLE": "Error",
    "REQUIRED_LONG_STRING": "[required]", "DEFAULT_STRING": "[default: {}]",
    "ENVVAR_STRING": "[env var: {}]", "DEPRECATED_STRING": "(deprecated) ",
    "ABORTED_TEXT": "Aborted.", "RICH_HELP": "Try [blue]'{command_path} {help_option}'[/] for help.",
}
AYUDA = TRADUCCIONES["Show this message and exit."]


def _traducir(mensaje: str) -> str:
    return TRADUCCIONES.get(mensaje, mensaje)


# Las etiquetas de tipo que Typer pone junto a cada opción («<str>», «<int range>»).
TIPOS = {"str": "texto", "int": "entero", "int range": "entero", "float": "número", "float range": "número",
         "datetime": "fecha", "path": "ruta", "file": "fichero", "list[str]": "textos", "uuid": "uuid"}


def _tipo_en_espanol(etiqueta: str | None, es_marca: bool) -> str | None:
    if etiqueta is None or es_marca:  # una marca (--help, --historial) no lleva valor: sin tipo
        return None if es_marca else etiqueta
    sin_puntos = etiqueta.removesuffix("...")
    puntos = etiqueta[len(sin_puntos):]
    if sin_puntos.startswith("<") and sin_puntos.endswith(">"):
        interior = sin_puntos[1:-1]
        return f"<{TIPOS.get(interior, interior)}>{puntos}"
    return etiqueta


def _tipo_traducido(original):
    def display_type_rich(self, ctx):
        return _tipo_en_espanol(original(self, ctx), bool(getattr(self, "is_flag", False)))

    return display_type_rich


# Lo que dice pydantic de un valor de la línea de órdenes, por su tipo de error.
_VALIDACION = {
    "int_parsing": "debe ser un número entero",
    "int_type": "debe ser un número entero",
    "int_from_float": "debe ser un número entero",
    "float_parsing": "debe ser un número",
    "float_type": "debe ser un número",
    "decimal_parsing": "debe ser un número",
    "bool_parsing": "debe ser sí o no (true/false)",
    "datetime_parsing": "debe ser una fecha (AAAA-MM-DD o AAAA-MM-DD HH:MM:SS)",
    "datetime_from_date_parsing": "debe ser una fecha (AAAA-MM-DD o AAAA-MM-DD HH:MM:SS)",
    "date_parsing": "debe ser una fecha (AAAA-MM-DD)",
    "uuid_parsing": "debe ser un uuid",
    "string_type": "debe ser un texto",
}


def mensaje_de_validacion(exc: Any) -> str:
    """El primer error de un ``ValidationError`` de pydantic, en español."""
    errores = exc.errors()
    if not errores:
        return "valor no válido"
    error = errores[0]
    tipo, ctx = error.get("type", ""), error.get("ctx") or {}
    if tipo in _VALIDACION:
        return _VALIDACION[tipo]
    if tipo in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        comparacion = {"greater_than_equal": "mayor o igual que", "greater_than": "mayor que",
                       "less_than_equal": "menor o igual que", "less_than": "menor que"}[tipo]
        limite = next(iter(ctx.values()), "")
        return f"debe ser {comparacion} {limite}"
    if tipo in ("literal_error", "enum"):
        return f"debe ser uno de estos: {ctx.get('expected', '')}".replace(" or ", " o ")
    return "valor no válido"


# Los mensajes de error de uso de la copia de click de Typer, en orden (el primero que casa).
_ERRORES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.DOTALL), r) for p, r in (
    (r"^Invalid value for (.+?): (.*)$", r"Valor no válido para \1: \2"),
    (r"^Invalid value: (.*)$", r"Valor no válido: \1"),
    (r"^Missing argument (.*?)\.?$", r"Falta el argumento \1."),
    (r"^Missing option (.*?)\.?$", r"Falta la opción \1."),
    (r"^Missing parameter:? ?(.*?)\.?$", r"Falta el parámetro \1."),
    (r"^Missing command\.?$", "Falta la orden."),
    (r"^No such option: (\S+) \(Possible options: (.*)\)$", r"No existe la opción \1 (¿querías decir \2?)"),
    (r"^No such option: (\S+)(.*)$", r"No existe la opción \1\2"),
    (r"^No such command (.+?)\.? ?Did you mean (.*)\?$", r"No existe la orden \1. ¿Querías decir \2?"),
    (r"^No such command (.+?)\.?$", r"No existe la orden \1."),
    (r"^Option (.+?) requires an argument\.$", r"La opción \1 necesita un valor."),
    (r"^Option (.+?) requires (\d+) arguments\.$", r"La opción \1 necesita \2 valores."),
    (r"^Got unexpected extra arguments?(?:\(s\))? \((.*)\)$", r"Sobran argumentos: \1"),
    (r"^Value (.+?) is not a valid (.+?)\.$", r"\1 no es un valor válido."),
    (r"^Could not open file (.+?): (.*)$", r"No se pudo abrir el fichero \1: \2"),
))
_PIEZAS = (
    (re.compile(r"^(File|Directory|Path) (.+?) does not exist\.$"), r"\2 no existe."),
    (re.compile(r"^(File|Directory|Path) (.+?) is a directory\.$"), r"\2 es una carpeta."),
    (re.compile(r"^(File|Directory|Path) (.+?) is a file\.$"), r"\2 es un fichero."),
    (re.compile(r"^Input should be .*$", re.DOTALL), "valor no válido"),
)


def error_en_espanol(mensaje: str) -> str:
    """Un error de uso de la CLI (el de ``format_message``), en español; lo que no reconoce,
    tal cual (los mensajes del propio producto ya lo están)."""
    for patron, reemplazo in _ERRORES:
        if patron.match(mensaje):
            mensaje = patron.sub(reemplazo, mensaje, count=1)
            break
    cabeza, dos_puntos, detalle = mensaje.partition(": ")
    for patron, reemplazo in _PIEZAS:
        if dos_puntos and patron.match(detalle):
            return cabeza + dos_puntos + patron.sub(reemplazo, detalle, count=1)
        if patron.match(mensaje):
            return patron.sub(reemplazo, mensaje, count=1)
    return mensaje


def _traducir_errores() -> None:
    """``format_message`` de cada error de uso pasa por ``error_en_espanol`` al enseñarse."""
    from typer import _coercion, _param_types
    from typer import exceptions as excepciones_typer
    from typer._click import exceptions

    if getattr(excepciones_typer.TyperException.format_message, "_en_espanol", False):
        return
    _coercion.get_error_msg = mensaje_de_validacion
    _param_types.get_error_msg = mensaje_de_validacion
    for clase in (excepciones_typer.TyperException, exceptions.BadParameter, exceptions.MissingParameter,
                  exceptions.NoSuchOption, exceptions.FileError):
        original = vars(clase).get("format_message")
        if original is None:
            continue

        def format_message(self, _original=original) -> str:
            return error_en_espanol(_original(self))

        format_message._en_espanol = True
        clase.format_message = format_message  # rich_format_error y show lo llaman al enseñarlo


def en_espanol() -> None:
    from typer import core as typer_core
    from typer import rich_utils
    from typer._click import core, formatting

    for constante, original in _CONSTANTES_TYPER.items():
        setattr(rich_utils, constante, _traducir(original))
    rich_utils._ = _traducir  # «Missing command.», «No such command...» se piden al fallar
    _traducir_errores()
    if getattr(core.Command.get_help_option, "_en_espanol", False):
        return
    opcion_original = core.Command.get_help_option
    uso_original = formatting.HelpFormatter.write_usage

    def get_help_option(self, ctx):
        opcion = opcion_original(self, ctx)
        if opcion is not None:
            opcion.help = AYUDA
        return opcion

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        args = args.replace("[OPTIONS]", "[OPCIONES]").replace("COMMAND [ARGS]...", "ORDEN [ARGUMENTOS]...")
        uso_original(self, prog, args, "Uso: " if prefix is None else prefix)

    for clase in (typer_core._TyperParameter, typer_core.TyperOption, typer_core.TyperArgument):
        if "display_type_rich" in vars(clase):
            clase.display_type_rich = _tipo_traducido(vars(clase)["display_type_rich"])
    get_help_option._en_espanol = True
    core.Command.get_help_option = get_help_option
    formatting.HelpFormatter.write_usage = write_usage
