"""La aplicación ``agente``: cada orden y cada grupo, en el orden en que los lista ``--help``.

Cada orden vive en el módulo de su grupo (``agente.cli.*``) y usa ``agente.cli.comun`` para
la base, el servicio y los errores; este módulo solo las reúne (nadie lo importa salvo el
paquete y ``python -m``).
"""

from __future__ import annotations

import typer

from agente.cli import (
    alta,
    bandeja,
    conversacion,
    entrada,
    evaluar,
    ingesta,
    mantenimiento,
    servidor,
)
from agente.cli.ayuda import en_espanol
from agente.cli.db import db
from agente.cli.politica import politica

__all__ = ["app", "main"]

ORDENES = (
    ("entrar", entrada.entrar),
    ("salir", entrada.salir),
    ("chat", conversacion.chat),
    ("aprobaciones", bandeja.aprobaciones),
    ("decidir", bandeja.decidir),
    ("hilo", conversacion.hilo),
    ("reconciliar", mantenimiento.reconciliar),
    ("auditoria", mantenimiento.auditoria),
    ("movimientos", mantenimiento.movimientos),
    ("serve", servidor.serve),
    ("demo", servidor.demo),
    ("limpiar", mantenimiento.limpiar),
    ("secreto", mantenimiento.secreto),
    ("evaluar", evaluar.evaluar),
    ("importar", ingesta.importar),
)
AYUDA = (
    "Agente de atención al cliente para tiendas.\n\n"
    "Lo que hace una persona (decidir, proponer, firmar o rechazar un cambio de política) lo hace "
    "como quien ha entrado con «agente entrar», a través del servidor (AGENTE_URL); «agente salir» "
    "cierra la sesión. Las demás órdenes son locales de operador: usan la base directamente y no "
    "actúan como ninguna persona."
)
GRUPOS = (("db", db), ("token", servidor.token_app), ("politica", politica), ("claves", ingesta.claves),
          ("tiendas", alta.tiendas), ("regiones", alta.regiones), ("personas", alta.personas))



def _montar() -> typer.Typer:
    en_espanol()
    # Sin --install-completion/--show-completion: sus textos son de Typer, en inglés.
    montada = typer.Typer(help=AYUDA, no_args_is_help=True,
                          add_completion=False)
    for nombre, orden in ORDENES:
        montada.command(nombre)(orden)
    for nombre, grupo in GRUPOS:
        montada.add_typer(grupo, name=nombre)
    return montada


app = _montar()


def main() -> None:  # pragma: no cover - punto de entrada de ``python -m agente``
    app(prog_name="agente")
