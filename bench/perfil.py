"""Perfil con py-spy de las conversaciones del bench de turnos, por caso.

``.venv/bin/python -m bench.perfil B C D -n 20``: para cada caso arranca un proceso hijo
que prepara su PostgreSQL y sus datos y, ya listo, ejecuta N conversaciones (consulta,
reembolso pequeño, reembolso grande y su aprobación) mientras ``py-spy record`` lo
muestrea. py-spy ve TODOS los hilos (LangGraph ejecuta nodos y escrituras de checkpoint
en hilos de fondo: un perfilador de un solo hilo como pyinstrument no los ve) y descarta
las muestras de hilos en espera, así que lo que cuenta es CPU.

Reparte las muestras por paquete de dos formas: *propio* (el marco de arriba de la pila)
e *incluido* (el paquete aparece en algún punto de la pila). Necesita ``pip install
py-spy`` (no es dependencia del producto) y permiso de ptrace sobre el hijo.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench import util

GRUPOS = (
    ("/langfuse/", "langfuse"),
    ("/opentelemetry/", "opentelemetry"),
    ("/langgraph/checkpoint/", "langgraph checkpoint (serde + saver)"),
    ("/langgraph/", "langgraph (bucle, canales)"),
    ("/langchain_core/", "langchain_core"),
    ("/langchain/", "langchain (create_agent, middleware)"),
    ("/langsmith/", "langsmith (decoradores traceable)"),
    ("/psycopg_pool/", "psycopg_pool"),
    ("/psycopg/", "psycopg"),
    ("/pydantic", "pydantic"),
    ("/ormsgpack", "ormsgpack"),
    ("/agente/modelo_offline/", "modelo offline"),
    ("/agente/servicio/", "agente/servicio"),
    ("/agente/middleware/", "agente/middleware"),
    ("/agente/trazas/", "agente/trazas"),
    ("/main/herramientas/", "herramientas"),
    ("/main/caja/", "caja"),
    ("/main/nucleo/", "nucleo"),
    ("/main/politicas/", "politicas"),
    ("/main/bench/", "bench"),
    ("/json/", "json"),
    ("/uuid.py", "uuid"),
    ("/copy.py", "copy (deepcopy)"),
    ("/threading.py", "threading"),
    ("/concurrent/", "concurrent.futures"),
    ("/contextlib.py", "contextlib"),
    ("/inspect.py", "inspect"),
    ("/typing", "typing"),
)


def _grupo(marco: str) -> str:
    marco = marco.rsplit(" (", 1)[-1]  # "funcion (/ruta/fichero.py:123)" -> la ruta
    for marca, nombre in GRUPOS:
        if marca in marco:
            return nombre
    return "otros"


def repartir(ruta: Path) -> dict:
    """Lee el formato ``raw`` de py-spy (pila;pila;... N) y reparte por grupo."""
    propio: Counter = Counter()
    incluido: Counter = Counter()
    total = 0
    for linea in ruta.read_text(encoding="utf-8", errors="replace").splitlines():
        pila, _, n = linea.rpartition(" ")
        if not pila or not n.isdigit():
            continue
        n = int(n)
        marcos = pila.split(";")
        total += n
        propio[_grupo(marcos[-1])] += n
        for grupo in {_grupo(m) for m in marcos}:
            incluido[grupo] += n
    return {
        "muestras": total,
        "propio_pct": {g: round(100 * v / total, 1) for g, v in propio.most_common() if v / total >= 0.01},
        "incluido_pct": {g: round(100 * v / total, 1) for g, v in incluido.most_common() if v / total >= 0.02},
    }


def hijo(caso: str, n: int) -> None:
    """Prepara todo, avisa ``LISTO``, espera ``EMPIEZA``, ejecuta, avisa ``FIN`` y espera."""
    import logging

    import langfuse.logger  # noqa: F401
    import psycopg

    from bench import turnos

    logging.getLogger("langfuse").setLevel(logging.ERROR)
    with util.postgres_temporal() as url_admin, util.ReceptorEnProceso() as receptor:
        url = util.crear_base(url_admin, "perfil")
        with psycopg.connect(url, autocommit=True) as c:
            clientes = util.crear_clientes(c, f"F{caso}-", n + 2, base=60_000_000)
        with turnos.casos(url, receptor.url) as instancias:
            for cliente in clientes[:2]:  # calentamiento
                instancias[caso].conversacion(cliente, lambda _e, f: f())
            print("LISTO", flush=True)
            sys.stdin.readline()
            t0 = time.perf_counter()
            for cliente in clientes[2:]:
                instancias[caso].conversacion(cliente, lambda _e, f: f())
            print(f"FIN {time.perf_counter() - t0:.3f}", flush=True)
            sys.stdin.readline()


def perfilar(caso: str, n: int, frecuencia: int) -> dict:
    pyspy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(pyspy).exists():
        raise SystemExit("falta py-spy: .venv/bin/pip install py-spy")
    proceso = subprocess.Popen(
        [sys.executable, "-m", "bench.perfil", "--hijo", caso, "-n", str(n)], cwd=util.RAIZ,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(util.RAIZ)},
    )
    while (linea := proceso.stdout.readline()) and not linea.startswith("LISTO"):
        pass
    salida = Path(tempfile.mkstemp(prefix=f"perfil-{caso}-", suffix=".txt")[1])
    espia = subprocess.Popen(
        [pyspy, "record", "--pid", str(proceso.pid), "--format", "raw", "--rate", str(frecuencia),
         "--output", str(salida), "--nonblocking", "--full-filenames", "--gil"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # que py-spy se enganche antes de empezar
    proceso.stdin.write("EMPIEZA\n")
    proceso.stdin.flush()
    segundos = None
    while linea := proceso.stdout.readline():
        if linea.startswith("FIN"):
            segundos = float(linea.split()[1])
            break
    espia.send_signal(signal.SIGINT)
    espia.wait(timeout=60)
    proceso.stdin.write("SAL\n")
    proceso.stdin.flush()
    proceso.wait(timeout=120)
    reparto = repartir(salida)
    return {"conversaciones": n, "segundos": segundos,
            "ms_por_conversacion": round(1000 * segundos / n, 1) if segundos else None,
            "perfil_raw": str(salida), **reparto}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.perfil", description=__doc__.splitlines()[0])
    parser.add_argument("casos", nargs="*", default=["B", "C", "D"])
    parser.add_argument("-n", type=int, default=20, help="conversaciones por caso")
    parser.add_argument("--frecuencia", type=int, default=200, help="muestras por segundo")
    parser.add_argument("--hijo", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.hijo:
        hijo(args.hijo, args.n)
        return
    resultado = {caso: perfilar(caso, args.n, args.frecuencia) for caso in args.casos}
    print(json.dumps(resultado, indent=1, ensure_ascii=False))


def espiar_servidor(pid: int, nombre: str, calentamiento: float, duracion: float):
    """``BENCH_PERFIL=carpeta``: py-spy (``pip install py-spy``) sobre el primer servidor
    durante la ventana (solo el hilo que tiene el GIL: lo que gasta el núcleo del proceso), formato
    *collapsed* en ``carpeta/<nivel>.txt``."""
    carpeta = os.environ.get("BENCH_PERFIL")
    espia = shutil.which("py-spy") or str(util.RAIZ / ".venv" / "bin" / "py-spy")
    if not carpeta or not os.path.exists(espia):
        return None
    os.makedirs(carpeta, exist_ok=True)
    orden = [espia, "record", "--pid", str(pid), "--rate", "100", "--gil", "--format", "raw",
             "--duration", str(int(duracion)), "--nonblocking", "-o", f"{carpeta}/{nombre}.txt"]
    return subprocess.Popen(["sh", "-c", f"sleep {calentamiento}; exec " + " ".join(orden)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
