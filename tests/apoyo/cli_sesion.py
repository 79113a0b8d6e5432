"""La CLI como cliente de un servidor de verdad: la app servida en un hilo (uvicorn) y una
``CliRunner`` con su propia carpeta de configuración (``XDG_CONFIG_HOME``) y ``AGENTE_URL``.

``Terminal``: una persona en su terminal; ``entrar(persona)`` hace ``agente entrar --demo``.
``EnlaceDelCorreo``: la persona que, en ``agente entrar --correo``, pega el enlace en cuanto
le llega al SMTP de la prueba.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner, Result

__all__ = ["EnlaceDelCorreo", "Terminal"]


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
