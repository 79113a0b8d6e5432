"""La ayuda de la CLI en español (``agente --help``).

Typer 0.29 lleva su propia copia de click (``typer._click``) con los textos fijos en inglés
(«Usage:», «Show this message and exit.») y calcula al importar los títulos de sus paneles
(«Options», «Commands») con ``gettext``, sin catálogos: en inglés. ``en_espanol`` cambia
esos títulos, el prefijo del uso y el texto de ``--help`` (idempotente).
"""

from __future__ import annotations

__all__ = ["AYUDA", "TIPOS", "TRADUCCIONES", "en_espanol"]

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


def en_espanol() -> None:
    from typer import core as typer_core
    from typer import rich_utils
    from typer._click import core, formatting

    for constante, original in _CONSTANTES_TYPER.items():
        setattr(rich_utils, constante, _traducir(original))
    rich_utils._ = _traducir  # «Missing command.», «No such command...» se piden al fallar
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
