"""La CLI como cliente de un servidor de verdad: la app servida en un hilo (uvicorn) y una
``CliRunner`` con su propia carpeta de configuración (``XDG_CONFIG_HOME``) y ``AGENTE_URL``.

``Terminal``: una persona en su terminal; ``entrar(persona)`` hace ``agente entrar --demo``.
``EnlaceDelCorreo``: la persona que, en ``agente entrar --correo``, pega el enlace en cuanto
le llega al SMTP de la prueba.

``cli_en_proceso`` y ``CliEnProceso``: lo mismo que ``cli_con_base`` y ``CliConServidor`` de
``tests/apoyo/procesos.py`` (la CLI sobre la base del test, y la que habla con un servidor de
verdad como quien ha entrado), en este proceso: sin pagar el arranque de un intérprete por
orden. Devuelven ``Salida`` (``returncode``, ``stdout``, ``stderr``, como un subproceso); una
excepción sin capturar sale como en un proceso: código 1 y la traza en ``stderr``. Las dos
pruebas de humo de ``tests/procesos/test_cli.py`` siguen lanzando el programa de verdad.
"""

from __future__ import annotations

import re
import time
import traceback
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner, Result

__all__ = ["CliEnProceso", "EnlaceDelCorreo", "Salida", "Terminal", "cli_en_proceso"]


@dataclass
class Terminal:
    servidor: str
    config: Path

    def __call__(self, *args: str, entrada=None, **entorno: str) -> Result:
        from agente.cli import app

        env = {"XDG_CONFIG_HOME": str(self.config), "AGENTE_URL": self.servidor, **entorno}
        return CliRunner().invoke(app, list(args), env=env, input=entrada, prog_name="agente")

    @property
    def fichero(self) -> Path:
        return self.config / "agente" / "sesion.json"

    def entrar(self, persona: str) -> Result:
        r = self("entrar", "--demo", persona)
        assert r.exit_code == 0, r.output
        return r


class EnlaceDelCorreo:
    """Lo que la persona pega en ``agente entrar --correo`` cuando se le pide el enlace: el
    del último correo que llegó a ``para`` (se espera a que llegue). Sustituye a
    ``typer.prompt`` (la ``CliRunner`` de Typer solo admite una entrada fija)."""

    def __init__(self, smtp, para: str, limite: float = 30) -> None:
        self.smtp, self.para, self.limite = smtp, para, limite
        self.preguntas: list[str] = []

    def __call__(self, texto: str, **_opciones) -> str:
        self.preguntas.append(texto)
        fin = time.monotonic() + self.limite
        while time.monotonic() < fin:
            correos = [c for c in self.smtp.correos if c.para == [self.para]]
            if correos:
                return re.search(r"https://\S+", correos[-1].texto).group(0)
            time.sleep(0.05)
        raise AssertionError(f"no llegó el correo de entrada a {self.para}")


@dataclass
class Salida:
    """Lo que deja una orden, con los nombres de ``subprocess.CompletedProcess``."""

    returncode: int
    stdout: str
    stderr: str


def _invocar(args: tuple[str, ...], env: dict[str, str], entrada: str | None) -> Salida:
    from agente.cli import app
    from nucleo.ajustes import ajustes

    # Cada orden lee su entorno, como un proceso nuevo (los ajustes se guardan al leerlos).
    ajustes.cache_clear()
    try:
        r = CliRunner().invoke(app, list(args), env=env, input=entrada, prog_name="agente")
    finally:
        ajustes.cache_clear()
    stderr = r.stderr
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        # Como el intérprete: la traza a stderr y código 1 (una prueba que mira que no haya
        # «Traceback» en stderr sigue pudiendo fallar).
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(r.exception))
    return Salida(r.exit_code, r.stdout, stderr)


def cli_en_proceso(bd_url: str, *args: str, entrada: str | None = None, **entorno: str) -> Salida:
    """``agente ARGS`` en este proceso contra la base del test (``DATABASE_URL``), con ``entrada`` por stdin."""
    return _invocar(args, {"DATABASE_URL": bd_url, **entorno}, entrada)


class CliEnProceso:
    """La app de verdad servida en un hilo (uvicorn, modo demo) sobre la base del test y la CLI
    en este proceso que le habla (``AGENTE_URL``), con su propia carpeta de configuración (la
    sesión de ``agente entrar``). ``entrar(persona)``: ``agente entrar --demo persona``."""

    def __init__(self, bd_url: str, config: Path) -> None:
        self.bd_url, self.config = bd_url, config
        self._pila = ExitStack()

    def __enter__(self) -> CliEnProceso:
        from agente.web.app import crear_app
        from tests.apoyo.web_util import ajustes_web, servidor_en_hilo

        self.base = self._pila.enter_context(servidor_en_hilo(crear_app(ajustes_web(self.bd_url))))
        return self

    def __exit__(self, *_exc) -> None:
        self._pila.close()

    def __call__(self, *args: str, entrada: str | None = None, **entorno: str) -> Salida:
        env = {"DATABASE_URL": self.bd_url, "AGENTE_URL": self.base, "XDG_CONFIG_HOME": str(self.config), **entorno}
        return _invocar(args, env, entrada)

    def entrar(self, persona: str) -> Salida:
        r = self("entrar", "--demo", persona)
        assert r.returncode == 0, r.stderr
        return r
