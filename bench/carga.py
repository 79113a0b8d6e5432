"""Carga: dos servidores ``agente serve`` de verdad que solo comparten PostgreSQL.

Dos procesos en dos puertos de 127.0.0.1 sobre la misma base (modelo offline,
``AGENTE_DEMO=1``). Cada petición de un cliente va al servidor siguiente (turno
rotatorio por cliente), así que una conversación creada en uno sigue en el otro y la
decisión del encargado puede llegar a un tercero: nada vive en un proceso.

- 32 clientes a la vez (asyncio + httpx), cada uno con sus pedidos nuevos creados en SQL,
  repiten los escenarios de la demo: consultar un pedido, devolver uno pequeño y devolver
  uno grande (que espera firma);
- 4 encargados (dos por tienda) leen su bandeja y deciden lo que aparece: aprueban,
  editan el importe o rechazan con motivo;
- acotado en tiempo y en número de turnos; al final los encargados vacían las bandejas.

Después se comprueban los invariantes (auditoría, pausas, pagos dobles, pasarela) y se
lee el pico de memoria (VmHWM) de cada servidor.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jwt
import psycopg

from bench import util

SECRETO = "bench-" + "x" * 40
CLIENTES = 32
ENCARGADOS = {  # dos por tienda; los de demo y uno más en cada una
    "enc-talavera": "talavera",
    "enc-bench-talavera": "talavera",
    "enc-madrid-centro": "madrid-centro",
    "enc-bench-madrid": "madrid-centro",
}
PARES_POR_CLIENTE = 60  # pedidos de sobra: ningún cliente se queda sin qué devolver
TIMEOUT_HTTP = 120.0

INSERT_ENCARGADOS_SQL = """
INSERT INTO encargados (id, tienda, nombre, activo) VALUES
    ('enc-bench-talavera', 'talavera', 'Encargada de bench (Talavera)', true),
    ('enc-bench-madrid', 'madrid-centro', 'Encargado de bench (Madrid)', true)
ON CONFLICT (id) DO NOTHING
"""

# --- Invariantes ---------------------------------------------------------------------------

# Toda pausa (escritura __interrupt__ en el último checkpoint) tiene su fila en la cola.
PAUSAS_SIN_COLA_SQL = """
SELECT count(*) FROM (
    SELECT DISTINCT w.thread_id
    FROM checkpoint_writes w
    WHERE w.channel = '__interrupt__' AND w.checkpoint_ns = ''
      AND w.checkpoint_id = (SELECT max(k.checkpoint_id) FROM checkpoints k
                             WHERE k.thread_id = w.thread_id AND k.checkpoint_ns = '')
      AND NOT EXISTS (SELECT 1 FROM checkpoint_writes r
                      WHERE r.thread_id = w.thread_id AND r.checkpoint_ns = ''
                        AND r.checkpoint_id = w.checkpoint_id AND r.channel = '__resume__')
      AND NOT EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = w.thread_id)
) x
"""
# Todo hilo que alguna vez se pausó está decidido o sigue en la cola.
PAUSADOS_SIN_DESTINO_SQL = """
SELECT count(*) FROM (
    SELECT DISTINCT w.thread_id FROM checkpoint_writes w WHERE w.channel = '__interrupt__'
) p
WHERE NOT EXISTS (SELECT 1 FROM decisiones_encargado d WHERE d.thread_id = p.thread_id)
  AND NOT EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = p.thread_id)
"""
DECISIONES_SIN_APLICAR_SQL = "SELECT count(*) FROM decisiones_encargado WHERE aplicada IS NULL"
REEMBOLSOS_DOBLES_SQL = """
SELECT count(*) FROM (
    SELECT thread_id, tool_call_id FROM reembolsos GROUP BY thread_id, tool_call_id HAVING count(*) > 1
) x
"""
PASARELA_SQL = """
SELECT (SELECT count(*) FROM pasarela_movimientos) AS movimientos,
       (SELECT coalesce(sum(importe), 0) FROM pasarela_movimientos) AS importe_movimientos,
       (SELECT count(*) FROM reembolsos WHERE estado = 'emitido') AS emitidos,
       (SELECT coalesce(sum(importe), 0) FROM reembolsos WHERE estado = 'emitido') AS importe_emitidos,
       (SELECT count(*) FROM reembolsos WHERE estado = 'pendiente') AS pendientes,
       (SELECT count(*) FROM reembolsos r WHERE r.estado = 'emitido' AND NOT EXISTS
           (SELECT 1 FROM pasarela_movimientos m WHERE m.referencia = r.numero
                                                   AND m.importe = r.importe)) AS emitidos_sin_movimiento
"""
RECUENTOS_SQL = """
SELECT (SELECT count(*) FROM reembolsos) AS reembolsos,
       (SELECT count(*) FROM decisiones_encargado) AS decisiones,
       (SELECT count(*) FROM aprobaciones_pendientes) AS en_cola,
       (SELECT count(*) FROM consultas_asistente) AS conversaciones,
       (SELECT count(*) FROM mensajes_conversacion) AS mensajes
"""


def token(datos: dict[str, str]) -> str:
    return jwt.encode(
        {**datos, "exp": datetime.now(UTC) + timedelta(hours=2)}, SECRETO, algorithm="HS256"
    )


# --- Servidores ---------------------------------------------------------------------------


def _orden_servidor() -> list[str]:
    """``agente serve`` si la CLI ya lo tiene; si no, lo mismo que hace: uvicorn con la fábrica."""
    try:
        from agente.cli import app

        nombres = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    except Exception:
        nombres = set()
    if "serve" in nombres:
        return [sys.executable, "-m", "agente.cli", "serve", "--workers", "1"]
    return [sys.executable, "-m", "uvicorn", "agente.web.app:app_desde_entorno", "--factory",
            "--workers", "1", "--log-level", "warning"]


class Servidor:
    def __init__(self, url_bd: str, puerto: int, entorno: dict[str, str]) -> None:
        self.puerto = puerto
        self.base = f"http://127.0.0.1:{puerto}"
        self.log = tempfile.NamedTemporaryFile(prefix="bench-serve-", suffix=".log", delete=False)
        env = {**os.environ, **entorno, "DATABASE_URL": url_bd}
        for clave in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR"):
            env.pop(clave, None)
        self.orden = [*_orden_servidor(), "--host", "127.0.0.1", "--port", str(puerto)]
        self.proceso = subprocess.Popen(
            self.orden, cwd=util.RAIZ, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def esperar(self, limite: float = 90.0) -> None:
        fin = time.monotonic() + limite
        while time.monotonic() < fin:
            if self.proceso.poll() is not None:
                raise RuntimeError(f"el servidor {self.base} terminó: {self.texto_log()[-3000:]}")
            try:
                if httpx.get(f"{self.base}/readyz", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"{self.base} no respondió a tiempo")

    def memoria(self) -> dict[str, Any]:
        import psutil

        proceso = psutil.Process(self.proceso.pid)
        hijos = proceso.children(recursive=True)
        return {
            "pid": self.proceso.pid,
            "procesos_hijos": len(hijos),
            "vmhwm_mib": round((util.vmhwm_kib(self.proceso.pid) or 0) / 1024, 1),
            "rss_mib": round(proceso.memory_info().rss / 2**20, 1),
        }

    def texto_log(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(encoding="utf-8", errors="replace")

    def parar(self) -> None:
        self.proceso.terminate()
        try:
            self.proceso.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
            self.proceso.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)


# --- Conductores ---------------------------------------------------------------------------


class Medidas:
    def __init__(self) -> None:
        self.tiempos: dict[str, list[float]] = defaultdict(list)
        self.estados: dict[str, Counter] = defaultdict(Counter)
        self.errores: list[str] = []
        self.esperados: Counter = Counter()  # 404/409 de dos encargados con la misma fila
        self.turnos = 0
        self.por_servidor: Counter = Counter()

    async def peticion(self, cliente: httpx.AsyncClient, nombre: str, metodo: str, url: str,
                       esperados: tuple[int, ...] = (), **kw) -> httpx.Response | None:
        t0 = time.perf_counter()
        try:
            r = await cliente.request(metodo, url, timeout=TIMEOUT_HTTP, **kw)
        except httpx.HTTPError as exc:
            self.errores.append(f"{nombre}: {type(exc).__name__} {exc}")
            return None
        ms = (time.perf_counter() - t0) * 1000
        self.estados[nombre][r.status_code] += 1
        self.por_servidor[url.split("/api/")[0]] += 1
        if r.status_code in esperados:
            self.esperados[f"{nombre} {r.status_code}"] += 1
            return None
        if r.status_code >= 400:
            self.errores.append(f"{nombre}: HTTP {r.status_code} {r.text[:200]}")
            return None
        self.tiempos[nombre].append(ms)
        return r


async def _cliente(i: int, c: util.ClienteBench, bases: list[str], medidas: Medidas,
                   fin: float, max_turnos: int, http: httpx.AsyncClient) -> None:
    cab = {"Authorization": "Bearer " + token({"rol": "cliente", "cliente_id": c.cliente_id,
                                                 "tienda": c.tienda})}
    n = i  # turno rotatorio que empieza en un servidor distinto para cada cliente
    pequenos, grandes = iter(c.pedidos_pequenos), iter(c.pedidos_grandes)

    def base() -> str:
        nonlocal n
        n += 1
        return bases[n % len(bases)]

    escenarios = [
        ("consulta", lambda: f"¿Dónde está mi pedido {c.pedido_pequeno}?"),
        ("reembolso_pequeno", lambda: f"Quiero devolver la sartén del pedido {next(pequenos)} porque se raya"),
        ("reembolso_grande", lambda: f"Quiero devolver la cafetera del pedido {next(grandes)} porque gotea"),
    ]
    k = i % len(escenarios)
    while time.monotonic() < fin and medidas.turnos < max_turnos:
        escenario, texto = escenarios[k % len(escenarios)]
        k += 1
        try:
            mensaje = texto()
        except StopIteration:
            return
        r = await medidas.peticion(http, "POST /api/conversaciones", "POST",
                                   f"{base()}/api/conversaciones", headers=cab)
        if r is None:
            continue
        hilo = r.json()["thread_id"]
        r = await medidas.peticion(http, f"POST mensajes ({escenario})", "POST",
                                   f"{base()}/api/conversaciones/{hilo}/mensajes",
                                   headers=cab, json={"texto": mensaje})
        if r is not None:
            medidas.turnos += 1
            medidas.estados[f"turno {escenario}"][r.json()["estado"]] += 1


async def _encargado(encargado_id: str, tienda: str, bases: list[str], medidas: Medidas,
                     fin_clientes: asyncio.Event, azar: random.Random, http: httpx.AsyncClient,
                     limite_drenaje: float) -> None:
    cab = {"Authorization": "Bearer " + token({"rol": "encargado", "encargado_id": encargado_id,
                                                 "tienda": tienda})}
    n = azar.randrange(len(bases))
    while True:
        n += 1
        r = await medidas.peticion(http, "GET /api/aprobaciones", "GET",
                                   f"{bases[n % len(bases)]}/api/aprobaciones?limite=20", headers=cab)
        filas = [f for f in (r.json() if r is not None else []) if f["estado"] == "pendiente"]
        if not filas:
            if fin_clientes.is_set() or time.monotonic() > limite_drenaje:
                return
            await asyncio.sleep(0.2)
            continue
        azar.shuffle(filas)
        for fila in filas[:5]:
            n += 1
            await medidas.peticion(
                http, "POST decision", "POST",
                f"{bases[n % len(bases)]}/api/aprobaciones/{fila['thread_id']}/decision",
                # 409: otro encargado la está decidiendo; 404: otro ya la decidió y el hilo siguió.
                esperados=(404, 409), headers=cab, json={"decisiones": decisiones_de_encargado(fila, azar)},
            )


def decisiones_de_encargado(fila: dict[str, Any], azar: random.Random) -> list[dict[str, Any]]:
    """Lo que decide un encargado simulado: casi siempre aprueba; a veces edita o rechaza."""
    decisiones = []
    for accion in fila["acciones"]:
        tirada = azar.random()
        if "respond" in accion["decisiones_permitidas"]:
            decisiones.append({"type": "respond", "message": "Sí, lo tenemos el jueves"})
        elif tirada < 0.1 and "reject" in accion["decisiones_permitidas"]:
            decisiones.append({"type": "reject", "message": "El producto no se puede devolver"})
        elif tirada < 0.2 and "edit" in accion["decisiones_permitidas"]:
            args = {**accion["args"], "importe": "10.00"}
            decisiones.append({"type": "edit", "edited_action": {"name": accion["nombre"], "args": args}})
        else:
            decisiones.append({"type": "approve"})
    return decisiones


async def _conducir(clientes, bases, duracion: float, max_turnos: int, semilla: int) -> tuple[Medidas, float]:
    medidas = Medidas()
    azar = random.Random(semilla)
    fin_clientes = asyncio.Event()
    limites = httpx.Limits(max_connections=200, max_keepalive_connections=100)
    async with httpx.AsyncClient(limits=limites) as http:
        inicio = time.monotonic()
        fin = inicio + duracion
        encargados = [
            asyncio.create_task(_encargado(e, t, bases, medidas, fin_clientes, random.Random(azar.random()),
                                           http, fin + 90))
            for e, t in ENCARGADOS.items()
        ]
        await asyncio.gather(*[
            _cliente(i, c, bases, medidas, fin, max_turnos, http) for i, c in enumerate(clientes)
        ])
        segundos_clientes = time.monotonic() - inicio
        fin_clientes.set()  # los encargados vacían sus bandejas y terminan
        await asyncio.gather(*encargados)
    return medidas, segundos_clientes


# --- Invariantes y orquestación ------------------------------------------------------------


def _invariantes(url: str, entorno: dict[str, str]) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as c:
        def uno(consulta: str) -> Any:
            return c.execute(consulta).fetchone()[0]

        pasarela = dict(zip(
            ("movimientos", "importe_movimientos", "emitidos", "importe_emitidos", "pendientes",
             "emitidos_sin_movimiento"),
            c.execute(PASARELA_SQL).fetchone(), strict=True))
        recuentos = dict(zip(("reembolsos", "decisiones", "en_cola", "conversaciones", "mensajes"),
                             c.execute(RECUENTOS_SQL).fetchone(), strict=True))
        invariantes = {
            "pausas_sin_fila_en_cola": uno(PAUSAS_SIN_COLA_SQL),
            "hilos_pausados_ni_decididos_ni_en_cola": uno(PAUSADOS_SIN_DESTINO_SQL),
            "decisiones_sin_aplicar": uno(DECISIONES_SIN_APLICAR_SQL),
            "reembolsos_dobles_por_tool_call_id": uno(REEMBOLSOS_DOBLES_SQL),
        }
    auditoria = subprocess.run(
        [sys.executable, "-m", "agente.cli", "auditoria"], cwd=util.RAIZ, capture_output=True,
        text=True, timeout=300, env={**os.environ, **entorno, "DATABASE_URL": url},
    )
    linea = next((ln for ln in auditoria.stdout.splitlines() if "sin la firma requerida:" in ln), "")
    invariantes["auditoria_sin_firma"] = int(linea.rsplit(":", 1)[1]) if linea else None
    invariantes["auditoria_codigo_salida"] = auditoria.returncode
    pasarela = {k: (str(v) if not isinstance(v, int) else v) for k, v in pasarela.items()}
    invariantes["pasarela"] = pasarela
    invariantes["pasarela_igual_a_emitidos"] = (
        pasarela["movimientos"] == pasarela["emitidos"]
        and pasarela["importe_movimientos"] == pasarela["importe_emitidos"]
        and pasarela["emitidos_sin_movimiento"] == 0
    )
    invariantes["todo_en_orden"] = (
        invariantes["pausas_sin_fila_en_cola"] == 0
        and invariantes["hilos_pausados_ni_decididos_ni_en_cola"] == 0
        and invariantes["decisiones_sin_aplicar"] == 0
        and invariantes["reembolsos_dobles_por_tool_call_id"] == 0
        and invariantes["auditoria_sin_firma"] == 0
        and invariantes["auditoria_codigo_salida"] == 0  # firmas y libro (unidades, pasarela...)
        and invariantes["pasarela_igual_a_emitidos"]
    )
    return {"invariantes": invariantes, "recuentos": recuentos}


def comprobar(url: str, entorno: dict[str, str]) -> dict[str, Any]:
    """Invariantes; si algo falla, ``agente reconciliar`` (lo que haría el cron) y otra vez."""
    resultado = _invariantes(url, entorno)
    if not resultado["invariantes"]["todo_en_orden"]:
        reconciliar = subprocess.run(
            [sys.executable, "-m", "agente.cli", "reconciliar"], cwd=util.RAIZ, capture_output=True,
            text=True, timeout=600, env={**os.environ, **entorno, "DATABASE_URL": url},
        )
        resultado["reconciliar_salida"] = (reconciliar.stdout + reconciliar.stderr)[-1500:]
        resultado["tras_reconciliar"] = _invariantes(url, entorno)
    return resultado


def una_carga(url_admin: str, nombre: str, extra: dict[str, str], duracion: float,
              max_turnos: int) -> dict[str, Any]:
    url = util.crear_base(url_admin, nombre)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(INSERT_ENCARGADOS_SQL)
        clientes = (
            util.crear_clientes(c, "LT-", CLIENTES // 2, base=80_000_000, tienda="talavera",
                                pares=PARES_POR_CLIENTE)
            + util.crear_clientes(c, "LM-", CLIENTES // 2, base=81_000_000, tienda="madrid-centro",
                                  pares=PARES_POR_CLIENTE)
        )
    entorno = {
        "AGENTE_DEMO": "1",
        "AGENTE_SECRETO": SECRETO,
        "AGENTE_MODELO": "offline",
        # El freno de 20 mensajes/minuto por cliente cortaría la prueba: aquí no se mide.
        "AGENTE_MENSAJES_POR_MINUTO": "1000000",
        **extra,
    }
    with ExitStack() as pila:
        servidores = []
        for _ in range(2):
            s = Servidor(url, puerto_libre(), entorno)
            pila.callback(s.parar)
            servidores.append(s)
        for s in servidores:
            s.esperar()
        bases = [s.base for s in servidores]
        memoria_antes = [s.memoria() for s in servidores]
        medidas, segundos = asyncio.run(_conducir(clientes, bases, duracion, max_turnos, semilla=3))
        memoria = [s.memoria() for s in servidores]
        logs = [s.texto_log() for s in servidores]
        orden = servidores[0].orden
    comprobacion = comprobar(url, entorno)
    por_endpoint = {n: util.resumen(ms) for n, ms in sorted(medidas.tiempos.items())}
    trazas_en_logs = sum(log.count("Traceback") for log in logs)
    primera_traza = next((ultima_linea_de_traza(log) for log in logs if "Traceback" in log), None)
    resultado = {
        "configuracion": {k: v for k, v in entorno.items() if k != "AGENTE_SECRETO"},
        "ejecuciones_simultaneas_por_servidor": ejecuciones_simultaneas(entorno),
        "orden_servidor": "python " + " ".join(orden[1:-4]),
        "servidores": len(bases),
        "clientes": CLIENTES,
        "encargados": len(ENCARGADOS),
        "duracion_clientes_s": round(segundos, 1),
        "turnos": medidas.turnos,
        "turnos_por_segundo": round(medidas.turnos / segundos, 2),
        "por_endpoint": por_endpoint,
        "estados_http": {k: dict(v) for k, v in sorted(medidas.estados.items())},
        "peticiones_por_servidor": list(medidas.por_servidor.values()),
        "errores": len(medidas.errores),
        "ejemplos_errores": medidas.errores[:5],
        "conflictos_esperados": dict(medidas.esperados),
        "trazas_en_logs": trazas_en_logs,
        "primera_traza": primera_traza,
        "memoria_antes": memoria_antes,
        "memoria_despues": memoria,
        **comprobacion,
    }
    print(f"  {medidas.turnos} turnos en {segundos:.1f} s = {resultado['turnos_por_segundo']} turnos/s; "
          f"errores {len(medidas.errores)} ({primera_traza or 'sin trazas en el log'}); invariantes en orden: "
          f"{comprobacion['invariantes']['todo_en_orden']}"
          + (f", tras reconciliar: {comprobacion['tras_reconciliar']['invariantes']['todo_en_orden']}"
             if "tras_reconciliar" in comprobacion else ""), flush=True)
    for n, r in por_endpoint.items():
        print(f"    {n:<40} n {r['n']:>5}  p50 {r['p50_ms']:>8.1f} ms  p99 {r['p99_ms']:>8.1f} ms", flush=True)
    print("    memoria (VmHWM) por servidor: " + ", ".join(f"{m['vmhwm_mib']} MiB" for m in memoria),
          flush=True)
    return resultado


# Primero tal cual (todos los turnos que recibe cada servidor, 16, a la vez: el límite de
# serie es 100); después con 4 ejecuciones a la vez por proceso, lo que dejaba la web
# cuando el candado del hilo ocupaba una conexión del pool: con un modelo que es CPU,
# ¿cambia algo?
CONFIGURACIONES = (
    ("por_defecto", {}),
    ("ejecuciones_4", {"AGENTE_EJECUCIONES_MAX": "4"}),
)


def ejecutar(url_admin: str) -> dict[str, Any]:
    duracion = util.segun_modo(45.0, 10.0)
    max_turnos = util.segun_modo(6000, 600)
    resultado: dict[str, Any] = {}
    # La pasada de humo solo prueba la configuración por defecto.
    for nombre, extra in CONFIGURACIONES[:1] if util.rapido() else CONFIGURACIONES:
        print(f"[carga] {nombre}: 2 servidores, {CLIENTES} clientes y {len(ENCARGADOS)} encargados "
              f"durante {duracion:.0f} s (máximo {max_turnos} turnos)…", flush=True)
        resultado[nombre] = una_carga(url_admin, f"bench_carga_{nombre}", extra, duracion, max_turnos)
    return resultado


def ejecuciones_simultaneas(entorno: dict[str, str]) -> int | None:
    """Cuántas ejecuciones del agente deja correr a la vez cada proceso con ese entorno."""
    from nucleo.ajustes import Ajustes

    campos = Ajustes.model_fields
    if "ejecuciones_max" in campos:  # el límite es del servicio (AGENTE_EJECUCIONES_MAX)
        return int(entorno.get("AGENTE_EJECUCIONES_MAX", campos["ejecuciones_max"].default))
    try:  # versiones anteriores: la web lo derivaba del pool
        from agente.web.en_vivo.directo import ejecuciones_simultaneas as antes
    except ImportError:
        return None
    return antes(int(entorno.get("AGENTE_POOL_MAX", campos["pool_max"].default)))


def ultima_linea_de_traza(log: str) -> str:
    """La excepción final de la primera traza del log (la línea que dice qué falló)."""
    resto = log[log.index("Traceback"):].splitlines()
    for linea in resto[1:]:
        if linea and not linea.startswith((" ", "Traceback", "During", "The above")):
            return linea[:300]
    return resto[-1][:300] if resto else ""


def puerto_libre() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
