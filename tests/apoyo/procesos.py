"""Procesos de verdad para las pruebas de operación: la CLI en un subproceso, señales, esperas.

Las esperas son sobre condiciones (un puerto que responde, un proceso que termina), con un
límite generoso: bajo carga tardan más, pero no fallan por llegar tarde.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil

from .rutas import RAIZ
from .web_util import SECRETO, ServidorEnProceso, puerto_libre

SECRETO_FUERTE = SECRETO  # fuera del modo demo hace falta uno que pase nucleo.secretos
PYTHON_M = (sys.executable, "-m", "agente.cli")
# El guion de consola que instala pip (``.venv/bin/agente``): el proceso se llama «agente».
GUION_AGENTE = (str(Path(sys.executable).with_name("agente")),)


def entorno_embebido(pgdata: Path, **extra: str) -> dict[str, str]:
    """Entorno sin DATABASE_URL (el de CI la define): el proceso arranca su embebido."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR")}
    return {**env, "AGENTE_PGDATA": str(pgdata), "AGENTE_MODELO": "offline", **extra}


def cli(env: dict[str, str], *args: str, timeout: float = 120,
        programa: tuple[str, ...] = PYTHON_M) -> subprocess.CompletedProcess:
    return subprocess.run([*programa, *args], cwd=RAIZ, env=env,
                          capture_output=True, text=True, timeout=timeout)


def cli_con_base(bd_url: str, *args: str, entrada: str | None = None) -> subprocess.CompletedProcess:
    """``agente ARGS`` en un subproceso contra la base del test (``DATABASE_URL``), con ``entrada`` por stdin."""
    return subprocess.run(
        [*PYTHON_M, *args], cwd=RAIZ, input=entrada, capture_output=True,
        text=True, timeout=120, env={**os.environ, "DATABASE_URL": bd_url},
    )


def esperar(condicion: Callable[[], object], limite: float, que: str, cada: float = 0.1):
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        valor = condicion()
        if valor:
            return valor
        time.sleep(cada)
    raise TimeoutError(f"no llegó a tiempo ({limite} s): {que}")


class ProcesoCli:
    """``agente ARGS`` en un subproceso con su log; ``with`` garantiza que no queda vivo."""

    def __init__(self, env: dict[str, str], *args: str, programa: tuple[str, ...] = PYTHON_M) -> None:
        self.env, self.args, self.programa = env, args, programa
        self.puerto = puerto_libre()
        self.base = f"http://127.0.0.1:{self.puerto}"

    def __enter__(self) -> ProcesoCli:
        self.log = tempfile.NamedTemporaryFile(prefix="agente-cli-", suffix=".log", delete=False)
        self.proceso = subprocess.Popen(
            [*self.programa, *self.args, "--port", str(self.puerto)],
            cwd=RAIZ, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        return self

    def salida(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def responde(self, ruta: str = "/readyz") -> bool:
        if self.proceso.poll() is not None:
            raise RuntimeError(f"terminó con código {self.proceso.returncode}:\n{self.salida()}")
        try:
            return httpx.get(self.base + ruta, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def esperar_listo(self, limite: float = 90) -> str:
        esperar(self.responde, limite, f"{self.args} escuchando en {self.base}")
        return self.base

    def senal(self, senal: int = signal.SIGTERM, limite: float = 60) -> int:
        self.proceso.send_signal(senal)
        return self.proceso.wait(timeout=limite)

    def __exit__(self, *_exc) -> None:
        if self.proceso.poll() is None:
            self.proceso.kill()
            self.proceso.wait(timeout=10)
        self.log.close()
        os.unlink(self.log.name)


def pid_postgres(pgdata: Path) -> int | None:
    try:
        return int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def postgres_vivo(pid: int | None) -> bool:
    try:
        return pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def pids_anotados(pgdata: Path) -> list[int]:
    try:
        return json.loads((pgdata / ".handle_pids.json").read_text())
    except FileNotFoundError:
        return []


class CliConServidor:
    """``agente serve`` de verdad (en modo demo) sobre la base del test y la CLI en subprocesos
    que le habla (``AGENTE_URL``), con su propia carpeta de configuración (la sesión de
    ``agente entrar``). ``entrar(persona)``: ``agente entrar --demo persona``."""

    def __init__(self, bd_url: str, config: Path, **entorno: str) -> None:
        self.bd_url, self.config = bd_url, config
        self.servidor = ServidorEnProceso(bd_url, **entorno)
        self.servidor.env.update(entorno)  # también las claves de Langfuse, si la prueba las da

    def __enter__(self) -> CliConServidor:
        self.servidor.__enter__()
        try:
            self.base = self.servidor.esperar()
        except BaseException:
            self.servidor.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_exc) -> None:
        self.servidor.__exit__(None, None, None)

    def __call__(self, *args: str, entrada: str | None = None, **entorno: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "DATABASE_URL": self.bd_url, "AGENTE_URL": self.base,
               "XDG_CONFIG_HOME": str(self.config), **entorno}
        return subprocess.run([*PYTHON_M, *args], cwd=RAIZ, input=entrada, capture_output=True,
                              text=True, timeout=120, env=env)

    def entrar(self, persona: str) -> subprocess.CompletedProcess:
        r = self("entrar", "--demo", persona)
        assert r.returncode == 0, r.stderr
        return r
