"""Los tres servidores de ``bench.pares``: el producto, aegra y langgraph-api (en memoria).

Los pares se instalan en su propio virtualenv bajo la caché del bench
(``~/.cache/agente-bench/pares/venv-<huella de bench/pares.lock>``, o bajo
``AGENTE_BENCH_CACHE``), nunca en las dependencias del producto: ``bench/pares.lock`` fija
cada versión. aegra 0.11 pide Python ≥ 3.12; el producto (3.11) corre en su venv y el
grafo de los pares (``bench/pares_grafo.py``) importa su código con ``PYTHONPATH``. Las
versiones de langgraph, langchain-core y del checkpointer de Postgres del lock son las
mismas que las de ``requirements.lock``: el mismo grafo en los tres.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench import carga, util

__all__ = ["LOCK", "Servidor", "arrancar_aegra", "arrancar_langgraph_api", "arrancar_producto", "instalar"]

LOCK = util.RAIZ / "bench" / "pares.lock"
GRAFO = util.RAIZ / "bench" / "pares_grafo.py"
EJECUCIONES = 256  # lo mismo para los tres: ninguno rechaza ni encola por su tope con 200 conversaciones


def _cache() -> Path:
    return Path(os.environ.get("AGENTE_BENCH_CACHE") or Path.home() / ".cache" / "agente-bench") / "pares"


def _python312() -> str:
    candidatos = [shutil.which(n) for n in ("python3.12", "python3.13")]
    candidatos += sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.1[2-9]*/bin/python")))
    candidatos += ["/usr/bin/python3.12", "/usr/bin/python3.13", "/usr/bin/python3"]
    for c in filter(None, candidatos):
        try:
            subprocess.run([c, "-c", "import sys, venv; assert sys.version_info >= (3, 12)"],
                           check=True, capture_output=True, timeout=30)
            return c
        except (OSError, subprocess.SubprocessError):
            continue
    raise RuntimeError("bench.pares necesita Python ≥ 3.12 para aegra-api 0.11 (python3.12 en el PATH)")


def instalar() -> Path:
    """El virtualenv de los pares, instalado desde ``bench/pares.lock`` si no lo estaba."""
    huella = hashlib.sha256(LOCK.read_bytes()).hexdigest()[:12]
    venv = _cache() / f"venv-{huella}"
    if (venv / ".instalado").exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    print(f"[pares] instalando aegra y langgraph-api en {venv} (bench/pares.lock)…", flush=True)
    subprocess.run([_python312(), "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                    "-r", str(LOCK)], check=True)
    (venv / ".instalado").write_text(huella)
    return venv


class Servidor:
    """Un proceso servidor y la URL que le da al ``langgraph-sdk``."""

    def __init__(self, nombre: str, orden: list[str], entorno: dict[str, str], *, puerto: int,
                 sdk: str, sano: str, bases: list[str], cwd: Path | None = None) -> None:
        self.nombre, self.puerto, self.bases = nombre, puerto, bases
        self.raiz = f"http://127.0.0.1:{puerto}"
        self.sdk, self._sano = self.raiz + sdk, self.raiz + sano
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-pares-{nombre}-", suffix=".log", delete=False)
        env = dict(os.environ)
        for clave in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "LANGFUSE_HOST", "PROMETHEUS_MULTIPROC_DIR",
                      "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
            env.pop(clave, None)  # nada de fuera: las trazas, solo si ``entorno`` las pide
        env.update(entorno)
        self.proceso = subprocess.Popen(orden, cwd=cwd or util.RAIZ, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def esperar(self, limite: float = 120.0) -> Servidor:
        fin = time.monotonic() + limite
        while time.monotonic() < fin:
            if self.proceso.poll() is not None:
                raise RuntimeError(f"{self.nombre} terminó al arrancar: {self.texto_log()[-3000:]}")
            try:
                if httpx.get(self._sano, timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"{self.nombre} no respondió en {limite} s: {self.texto_log()[-2000:]}")

    def _procesos(self) -> list[psutil.Process]:
        raiz = psutil.Process(self.proceso.pid)
        return [raiz, *raiz.children(recursive=True)]

    def cpu_s(self) -> float:
        """CPU (usuario + sistema) del proceso servidor y sus hijos, en segundos."""
        total = 0.0
        for p in self._procesos():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
        return total

    def memoria(self) -> dict[str, Any]:
        procesos = self._procesos()
        return {
            "procesos": len(procesos),
            "rss_mib": round(sum(p.memory_info().rss for p in procesos) / 2**20, 1),
            "vmhwm_mib": round(sum(util.vmhwm_kib(p.pid) or 0 for p in procesos) / 1024, 1),
        }

    def texto_log(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")

    def parar(self) -> None:
        if self.log.closed:  # ya parado
            return
        try:
            os.killpg(self.proceso.pid, 15)
        except ProcessLookupError:
            pass
        try:
            self.proceso.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proceso.pid, 9)
            self.proceso.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)


def _url_sqlalchemy(url_admin: str, base: str) -> str:
    """La URL de administración (``postgresql://postgres:@/postgres?host=...``) con otra base."""
    cabeza, _, consulta = url_admin.partition("?")
    return cabeza.rsplit("/", 1)[0] + f"/{base}" + (f"?{consulta}" if consulta else "")


def arrancar_producto(url: str, base: str, proveedor_url: str, trazas_url: str | None = None) -> Servidor:
    """El producto tal cual (``agente serve``); con ``trazas_url``, trazando a ese receptor de Langfuse."""
    puerto = carga.puerto_libre()
    orden = [*carga._orden_servidor(), "--host", "127.0.0.1", "--port", str(puerto)]
    entorno = {
        "DATABASE_URL": url, "AGENTE_DEMO": "1", "AGENTE_SECRETO": carga.SECRETO,
        "AGENTE_MENSAJES_POR_MINUTO": "1000000", "AGENTE_EJECUCIONES_MAX": str(EJECUCIONES),
        "AGENTE_MODELO": "openai:latencia", "AGENTE_MODELO_BASE_URL": proveedor_url,
        **({"LANGFUSE_PUBLIC_KEY": "pk-lf-bench", "LANGFUSE_SECRET_KEY": "sk-lf-bench",
            "LANGFUSE_HOST": trazas_url} if trazas_url else {}),
    }
    return Servidor("producto+trazas" if trazas_url else "producto", orden, entorno, puerto=puerto, sdk="/langgraph", sano="/readyz",
                    bases=[base])


def _entorno_par(venv: Path, negocio: str, proveedor_url: str) -> dict[str, str]:
    return {
        "PYTHONPATH": str(util.RAIZ), "AGENTE_PARES_BD": negocio, "AGENTE_MODELO_BASE_URL": proveedor_url,
        "AGENTE_PARES_HILOS": str(EJECUCIONES), "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(venv),
    }


def arrancar_aegra(venv: Path, carpeta: Path, url_admin: str, negocio: str, base_negocio: str,
                   base_aegra: str, proveedor_url: str) -> Servidor:
    """aegra con su PostgreSQL (``AsyncPostgresSaver``), ``durability`` ``sync`` como el producto."""
    config = carpeta / "aegra.json"
    config.write_text(json.dumps({"graphs": {"agente": f"{GRAFO}:graph"}}))
    puerto = carga.puerto_libre()
    entorno = {
        **_entorno_par(venv, negocio, proveedor_url),
        "DATABASE_URL": _url_sqlalchemy(url_admin, base_aegra), "AEGRA_CONFIG": str(config),
        "AEGRA_CHECKPOINT_DURABILITY": "sync", "LOG_LEVEL": "WARNING", "ENV_MODE": "PRODUCTION",
    }
    orden = [str(venv / "bin" / "python"), "-m", "uvicorn", "aegra_api.main:app", "--host", "127.0.0.1",
             "--port", str(puerto), "--log-level", "warning", "--no-access-log"]
    return Servidor("aegra", orden, entorno, puerto=puerto, sdk="", sano="/health",
                    bases=[base_negocio, base_aegra], cwd=carpeta)


def arrancar_langgraph_api(venv: Path, carpeta: Path, negocio: str, base_negocio: str,
                           proveedor_url: str) -> Servidor:
    """``langgraph dev`` (runtime en memoria), sin recarga ni navegador."""
    config = carpeta / "langgraph.json"
    config.write_text(json.dumps({"dependencies": ["."], "graphs": {"agente": f"{GRAFO}:graph"}}))
    puerto = carga.puerto_libre()
    orden = [str(venv / "bin" / "python"), "-c", "from langgraph_cli.cli import cli; cli()", "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
             "--port", str(puerto), "--config", str(config), "--n-jobs-per-worker", str(EJECUCIONES)]
    entorno = {**_entorno_par(venv, negocio, proveedor_url), "LOG_LEVEL": "WARNING"}
    return Servidor("langgraph-api", orden, entorno, puerto=puerto, sdk="", sano="/ok",
                    bases=[base_negocio], cwd=carpeta)
