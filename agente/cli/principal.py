"""La aplicación ``agente``: cada orden y cada grupo, en el orden en que los lista ``--help``.

Cada orden vive en el módulo de su grupo (``agente.cli.*``) y usa ``agente.cli.comun`` para
la base, el servicio y los errores; este módulo solo las reúne (nadie lo importa salvo el
paquete y ``python -m``).
"""

from __future__ import annotations

import typer

from agente.cli import bandeja, conversacion, evaluar, ingesta, operacion, servidor
from agente.cli.ayuda import en_espanol
from agente.cli.db import db
from agente.cli.politica import politica

__all__ = ["app", "main"]

ORDENES = (
    ("chat", conversacion.chat),
    ("aprobaciones", bandeja.aprobaciones),
    ("decidir", bandeja.decidir),
    ("hilo", conversacion.hilo),
    ("reconciliar", operacion.reconciliar),
    ("auditoria", operacion.auditoria),
    ("serve", servidor.serve),
    ("demo", servidor.demo),
    ("limpiar", operacion.limpiar),
    ("secreto", operacion.secreto),
    ("evaluar", evaluar.evaluar),
    ("importar", ingesta.importar),
)
GRUPOS = (("db", db), ("token", servidor.token_app), ("politica", politica), ("claves", ingesta.claves))



def _montar() -> typer.Typer:
    en_espanol()
    # Sin --install-completion/--show-completion: sus textos son de Typer, en inglés.
    montada = typer.Typer(help="Agente de atención al cliente para tiendas.", no_args_is_help=True,
                          add_completion=False)
    for nombre, orden in ORDENES:
        montada.command(nombre)(orden)
    for nombre, grupo in GRUPOS:
        montada.add_typer(grupo, name=nombre)
    return montada


app = _montar()


def main() -> None:  # pragma: no cover - punto de entrada de ``python -m agente``
    app(prog_name="agente")
