"""Capacidad con la latencia de un modelo real: cuántas conversaciones aguanta un proceso.

Un ``agente serve`` de verdad (uvicorn en otro proceso) con ``AGENTE_MODELO=openai:...``
contra :mod:`tests.apoyo.proveedor_latencia` (1,2 s hasta el primer token y 40 tokens/s por
defecto), conducido por el cliente real ``langchain-openai``. Por nivel (25, 50, 100 y 200
clientes simultáneos) una base nueva y un servidor nuevo:

- cada cliente abre una conversación, pregunta por un pedido y después devuelve uno
  (alternando el pequeño, que sale solo, y el grande, que espera firma); nada más recibir
  la respuesta manda el siguiente mensaje; pide la respuesta en directo (SSE), como la
  página del chat;
- cuatro encargados (dos por tienda) leen su bandeja y deciden por la API lo que aparece,
  varias decisiones a la vez;
- se mide durante ``duracion`` segundos tras un calentamiento: turnos/s, p50/p99 del
  turno y del turno menos su tiempo de modelo (el proveedor anota cada petición con la
  marca ``[ref ...]`` que el cliente pone en su mensaje), errores, conexiones a la base
  (sondeo de ``pg_stat_activity``) y pico de memoria (VmHWM);
- el ideal es clientes ÷ tiempo de modelo por turno, con el tope de lo que da la CPU
  (la misma carga con el modelo offline, sin latencia, medida en la misma ejecución); R
  es turnos/s ÷ ideal;
- después de cada nivel, los invariantes de ``bench.carga`` (auditoría, pausas, pasarela).

Los niveles de 25, 50 y 100 se miden dos veces (la segunda vuelta tras todos los demás). Después,
dos servidores sobre una base con 200 clientes (cada petición al siguiente) y la capacidad por
núcleo de :mod:`bench.nucleo`: B con el mismo proveedor, el nivel en que el proceso usa el 70 %
de un núcleo y la regla de dimensionado comprobada con dos procesos.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import threading
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

from bench import carga, nucleo, util
from bench.perfil import espiar_servidor
from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnProceso

NIVELES = (25, 50, 100, 200)
REPETIDOS = (25, 50, 100)  # dos pasadas cada uno (200 ya satura el núcleo: una)
CLIENTES_DOS_PROCESOS = 200
CLIENTES_CPU = 25  # con el modelo offline la CPU se satura con pocos clientes
PARES_POR_CLIENTE = 30
ESPERA_TURNO_S = 120.0  # lo que espera un cliente sin recibir nada antes de darlo por perdido
DRENAJE_S = 150.0  # tras la ventana: turnos en curso y bandejas hasta vaciarse
ANOTA = "[ref {marca}]"
ESPERA_BANDEJA_S = 2.0  # bandeja vacía: otra lectura en 2 s (la página del encargado refresca cada 4 s)

SONDEO_CONEXIONES_SQL = """
SELECT count(*) AS total, count(*) FILTER (WHERE state <> 'idle') AS activas
FROM pg_stat_activity
WHERE datname = %(base)s AND backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND application_name <> %(propia)s
"""
PROPIA = "bench-capacidad"  # las conexiones del propio bench no cuentan como del servidor
CANDADOS_HILO_SQL = """
SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %(espacio)s
"""


@dataclass
class Turno:
    marca: str
    escenario: str
    inicio: float
    fin: float
    estado: str
    primer_token: float | None


@dataclass
class Decision:
    thread_id: str
    inicio: float
    fin: float


@dataclass
class Datos:
    turnos: list[Turno] = field(default_factory=list)
    decisiones: list[Decision] = field(default_factory=list)
    marca_de_hilo: dict[str, str] = field(default_factory=dict)  # hilo en pausa -> marca del turno
    errores: list[str] = field(default_factory=list)
    esperados: Counter = field(default_factory=Counter)
    saturados: int = 0  # 503 con Retry-After: el cliente espera y reintenta (no es un error)
    estados: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))


# --- Conductores ---------------------------------------------------------------------------


class _Reintentar(Exception):
    def __init__(self, segundos: float) -> None:
        self.segundos = segundos


async def _turno(http: httpx.AsyncClient, url: str, cab: dict[str, str], texto: str,
                 escenario: str, marca: str, datos: Datos) -> Turno | None:
    """Un mensaje en directo (SSE) hasta el evento ``estado``, como la página del chat.
    Un 503 lanza ``_Reintentar`` con su ``Retry-After``."""
    inicio = time.time()
    primer_token = None
    estado = None
    try:
        async with http.stream("POST", url, headers={**cab, "Accept": "text/event-stream"},
                               json={"texto": texto}, timeout=ESPERA_TURNO_S) as r:
            if r.status_code == 503 and "retry-after" in r.headers:
                datos.saturados += 1
                raise _Reintentar(float(r.headers["retry-after"]))
            if r.status_code != 200:
                cuerpo = (await r.aread()).decode(errors="replace")
                datos.errores.append(f"turno {escenario}: HTTP {r.status_code} {cuerpo[:200]}")
                return None
            evento = None
            async for linea in r.aiter_lines():
                if linea.startswith("event:"):
                    evento = linea[6:].strip()
                elif linea.startswith("data:"):
                    if evento == "token" and primer_token is None:
                        primer_token = time.time() - inicio
                    elif evento == "estado":
                        estado = json.loads(linea[5:])["estado"]
                    elif evento == "error":
                        datos.errores.append(f"turno {escenario}: evento error {linea[5:200]}")
                        return None
    except httpx.HTTPError as exc:
        datos.errores.append(f"turno {escenario}: {type(exc).__name__} {exc}")
        return None
    if estado is None:
        datos.errores.append(f"turno {escenario}: el flujo terminó sin evento estado")
        return None
    turno = Turno(marca, escenario, inicio, time.time(), estado, primer_token)
    datos.turnos.append(turno)
    datos.estados[escenario][estado] += 1
    return turno


async def _cliente(i: int, c: util.ClienteBench, bases: list[str], datos: Datos, fin: float,
                   http: httpx.AsyncClient) -> None:
    cab = {"Authorization": "Bearer " + carga.token({"rol": "cliente", "cliente_id": c.cliente_id,
                                                      "tienda": c.tienda})}
    pequenos, grandes = iter(c.pedidos_pequenos), iter(c.pedidos_grandes)
    n = i  # cada petición al servidor siguiente, empezando por uno distinto en cada cliente
    # La mitad empieza por el reembolso grande: con muchos clientes y turnos lentos, cada
    # uno solo llega a una o dos conversaciones en la ventana, y las pausas deben estar.
    k = i % 2

    def base() -> str:
        nonlocal n
        n += 1
        return bases[n % len(bases)]

    while time.time() < fin:
        try:
            r = await http.post(f"{base()}/api/conversaciones", headers=cab, timeout=ESPERA_TURNO_S)
            r.raise_for_status()
        except httpx.HTTPError as exc:
            datos.errores.append(f"POST /api/conversaciones: {type(exc).__name__} {exc}")
            await asyncio.sleep(1)
            continue
        hilo = r.json()["thread_id"]
        k += 1
        try:
            devolucion = (
                ("reembolso_pequeno", f"Quiero devolver la sartén del pedido {next(pequenos)} porque se raya")
                if k % 2 else
                ("reembolso_grande", f"Quiero devolver la cafetera del pedido {next(grandes)} porque gotea")
            )
        except StopIteration:
            return
        for escenario, texto in (("consulta", f"¿Dónde está mi pedido {c.pedido_pequeno}?"), devolucion):
            if time.time() >= fin:
                return
            marca = f"c{i}-{k}-{escenario[:3]}"
            while True:
                try:
                    turno = await _turno(http, f"{base()}/api/conversaciones/{hilo}/mensajes", cab,
                                         f"{texto} {ANOTA.format(marca=marca)}", escenario, marca, datos)
                    break
                except _Reintentar as r:  # como la página del chat: espera y vuelve a mandarlo
                    await asyncio.sleep(r.segundos)
            if turno is None:
                await asyncio.sleep(1)
                break
            if turno.estado == "esperando_aprobacion":
                datos.marca_de_hilo[hilo] = marca
                break


async def _encargado(encargado_id: str, tienda: str, bases: list[str], datos: Datos,
                     fin_clientes: asyncio.Event, azar: random.Random, http: httpx.AsyncClient,
                     limite: float) -> None:
    """Lee la bandeja y decide hasta diez a la vez; al acabar los clientes, la vacía."""
    cab = {"Authorization": "Bearer " + carga.token({"rol": "encargado", "encargado_id": encargado_id,
                                                      "tienda": tienda})}
    n = azar.randrange(len(bases))

    async def decidir(fila: dict[str, Any], base: str) -> None:
        inicio = time.time()
        try:
            r = await http.post(f"{base}/api/aprobaciones/{fila['thread_id']}/decision", headers=cab,
                                json={"decisiones": carga.decisiones_de_encargado(fila, azar)},
                                timeout=ESPERA_TURNO_S)
        except httpx.HTTPError as exc:
            datos.errores.append(f"POST decision: {type(exc).__name__} {exc}")
            return
        if r.status_code in (404, 409):  # otro encargado la decidió o la está decidiendo
            datos.esperados[f"POST decision {r.status_code}"] += 1
        elif r.status_code == 503 and "retry-after" in r.headers:
            datos.saturados += 1  # sigue en la bandeja: se decide en otra vuelta
        elif r.status_code != 200:
            datos.errores.append(f"POST decision: HTTP {r.status_code} {r.text[:200]}")
        else:
            datos.decisiones.append(Decision(fila["thread_id"], inicio, time.time()))

    while time.time() < limite:
        n += 1
        try:
            r = await http.get(f"{bases[n % len(bases)]}/api/aprobaciones?limite=20", headers=cab,
                               timeout=ESPERA_TURNO_S)
            r.raise_for_status()
            filas = [f for f in r.json() if f["estado"] == "pendiente"]
        except httpx.HTTPError as exc:
            datos.errores.append(f"GET /api/aprobaciones: {type(exc).__name__} {exc}")
            filas = []
        if not filas:
            if fin_clientes.is_set():
                return
            await asyncio.sleep(ESPERA_BANDEJA_S)
            continue
        azar.shuffle(filas)
        await asyncio.gather(*[decidir(f, bases[(n + j) % len(bases)]) for j, f in enumerate(filas[:10])])


async def _conducir(clientes: list[util.ClienteBench], bases: list[str], fin: float,
                    semilla: int) -> Datos:
    datos = Datos()
    azar = random.Random(semilla)
    fin_clientes = asyncio.Event()
    # keepalive_expiry muy por debajo del AGENTE_KEEPALIVE del servidor (75 s), por si con la
    # carga el bucle del conductor tarda segundos en leer el final de una respuesta. El
    # ReadError de vez en cuando con dos procesos no viene de ahí: el A/B con 5 s y con 75 s
    # no los distingue (docs/rendimiento.md).
    limites = httpx.Limits(max_connections=1000, max_keepalive_connections=500, keepalive_expiry=3.0)
    async with httpx.AsyncClient(limits=limites) as http:
        encargados = [
            asyncio.create_task(_encargado(e, t, bases, datos, fin_clientes,
                                           random.Random(azar.random()), http, fin + DRENAJE_S))
            for e, t in carga.ENCARGADOS.items()
        ]
        await asyncio.gather(*[_cliente(i, c, bases, datos, fin, http) for i, c in enumerate(clientes)])
        fin_clientes.set()
        await asyncio.gather(*encargados)
    return datos


# --- Sondeos -------------------------------------------------------------------------------


class SondeoConexiones:
    """Máximo de conexiones de clientes a una base (todas y no ociosas), cada 50 ms."""

    def __init__(self, url_admin: str, base: str) -> None:
        self.url_admin, self.base = url_admin, base
        self.maximo = self.maximo_activas = 0
        self._parar = threading.Event()
        self._hilo = threading.Thread(target=self._bucle, name="sondeo-conexiones", daemon=True)

    def _bucle(self) -> None:
        with psycopg.connect(self.url_admin, autocommit=True) as c:
            while not self._parar.wait(0.05):
                total, activas = c.execute(SONDEO_CONEXIONES_SQL,
                                           {"base": self.base, "propia": PROPIA}).fetchone()
                self.maximo = max(self.maximo, total)
                self.maximo_activas = max(self.maximo_activas, activas)

    def __enter__(self) -> SondeoConexiones:
        self._hilo.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._parar.set()
        self._hilo.join(timeout=5)


def _esperar_reposo(url: str, limite: float) -> bool:
    """Espera a que ningún hilo tenga su candado (no queda ninguna ejecución en curso)."""
    from nucleo.claves_candado import ESPACIO_HILOS

    fin = time.monotonic() + limite
    with psycopg.connect(url, autocommit=True, application_name=PROPIA) as c:
        while time.monotonic() < fin:
            if c.execute(CANDADOS_HILO_SQL, {"espacio": ESPACIO_HILOS}).fetchone()[0] == 0:
                return True
            time.sleep(0.5)
    return False


# --- Cuentas -------------------------------------------------------------------------------


def _modelo_en(peticiones: dict[str, list[tuple[float, float]]], marca: str, desde: float,
               hasta: float) -> float:
    """Segundos de modelo de las peticiones con esa marca que empezaron en la ventana."""
    return sum(d for inicio, d in peticiones.get(marca, ()) if desde - 0.05 <= inicio <= hasta)


def _ms(muestras_s: list[float]) -> dict[str, float | None]:
    r = util.resumen([s * 1000 for s in muestras_s])
    return {"n": r["n"], "p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"]}


def _cuentas(datos: Datos, estadisticas: dict[str, Any] | None, desde: float, hasta: float,
             clientes: int) -> dict[str, Any]:
    peticiones: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for marca, inicio, duracion in (estadisticas or {}).get("peticiones", []):
        if marca:
            peticiones[marca].append((inicio, duracion))
    en_ventana = [t for t in datos.turnos if desde <= t.fin <= hasta]
    # Latencias: todo turno terminado tras el calentamiento, también en el drenaje (con una
    # cola larga, los que terminan dentro de la ventana serían solo los afortunados).
    medidos = [t for t in datos.turnos if t.fin >= desde]
    turnos_s = [t.fin - t.inicio for t in medidos]
    modelo_s = [_modelo_en(peticiones, t.marca, t.inicio, t.fin) for t in medidos]
    decisiones = [d for d in datos.decisiones if d.fin >= desde]
    decision_modelo = [
        _modelo_en(peticiones, datos.marca_de_hilo.get(d.thread_id, ""), d.inicio, d.fin)
        for d in decisiones
    ]
    segundos = hasta - desde
    modelo_medio = statistics.fmean(modelo_s) if modelo_s else 0.0
    return {
        "turnos": len(en_ventana),
        "turnos_por_segundo": round(len(en_ventana) / segundos, 2),
        "decisiones": len([d for d in decisiones if d.fin <= hasta]),
        "decisiones_por_segundo": round(len([d for d in decisiones if d.fin <= hasta]) / segundos, 2),
        "modelo_por_turno_s": round(modelo_medio, 3),
        "ideal_sin_tope": round(clientes / modelo_medio, 2) if modelo_medio else None,
        "turno": _ms(turnos_s),
        "turno_menos_modelo": _ms([t - m for t, m in zip(turnos_s, modelo_s, strict=True)]),
        "primer_token": _ms([t.primer_token for t in en_ventana if t.primer_token is not None]),
        "decision": _ms([d.fin - d.inicio for d in decisiones]),
        "decision_menos_modelo": _ms([d.fin - d.inicio - m for d, m in
                                      zip(decisiones, decision_modelo, strict=True)]),
        "llamadas_modelo_por_turno": round(
            sum(len([1 for i, _ in peticiones.get(t.marca, ()) if t.inicio - 0.05 <= i <= t.fin])
                for t in medidos) / len(medidos), 2) if medidos and peticiones else None,
    }


# --- Un nivel ------------------------------------------------------------------------------


def _preparar_base(url_admin: str, nombre: str, clientes: int) -> tuple[str, list[util.ClienteBench]]:
    url = util.crear_base(url_admin, nombre)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(carga.INSERT_ENCARGADOS_SQL)
        mitad = clientes // 2
        lista = (
            util.crear_clientes(c, "KT-", mitad, base=70_000_000, tienda="talavera",
                                pares=PARES_POR_CLIENTE)
            + util.crear_clientes(c, "KM-", clientes - mitad, base=71_000_000, tienda="madrid-centro",
                                  pares=PARES_POR_CLIENTE)
        )
    return url, lista


def _calentar(bases: list[str]) -> None:
    """Un turno por servidor antes de medir (importaciones perezosas, primeras conexiones)."""
    cab = {"Authorization": "Bearer " + carga.token({"rol": "cliente", "cliente_id": "C-0004",
                                                      "tienda": "madrid-centro"})}
    for base in bases:
        hilo = httpx.post(f"{base}/api/conversaciones", headers=cab, timeout=60).json()["thread_id"]
        httpx.post(f"{base}/api/conversaciones/{hilo}/mensajes", headers=cab, timeout=120,
                   json={"texto": "¿Dónde está mi pedido P-20260925-0150?"}).raise_for_status()


def un_nivel(url_admin: str, nombre: str, clientes: int, *, servidores: int, duracion: float,
             calentamiento: float, proveedor: ProveedorEnProceso | None,
             extra: dict[str, str] | None = None) -> dict[str, Any]:
    url, lista = _preparar_base(url_admin, nombre, clientes)
    entorno = {
        "AGENTE_DEMO": "1",
        "AGENTE_SECRETO": carga.SECRETO,
        "AGENTE_MENSAJES_POR_MINUTO": "1000000",  # el freno por cliente no es lo que se mide
        "AGENTE_MODELO": "offline" if proveedor is None else "openai:latencia",
        **({"AGENTE_MODELO_BASE_URL": proveedor.url} if proveedor else {}),
        **(extra or {}),
    }
    with ExitStack() as pila:
        procesos = []
        for _ in range(servidores):
            s = carga.Servidor(url, carga.puerto_libre(), entorno)
            pila.callback(s.parar)
            procesos.append(s)
        for s in procesos:
            s.esperar()
        bases = [s.base for s in procesos]
        _calentar(bases)
        if proveedor is not None:
            proveedor.reiniciar()
        memoria_antes = [s.memoria() for s in procesos]
        perfil = espiar_servidor(procesos[0].proceso.pid, nombre, calentamiento, duracion)
        cpu = nucleo.CpuVentana([s.proceso.pid for s in procesos], calentamiento, duracion,
                                proveedor.proceso.pid if proveedor is not None else None, url_admin, nombre)
        with SondeoConexiones(url_admin, nombre) as sondeo:
            inicio = time.time()
            fin = inicio + calentamiento + duracion
            datos = asyncio.run(_conducir(lista, bases, fin, semilla=clientes))
            reposo = _esperar_reposo(url, DRENAJE_S)
        memoria = [s.memoria() for s in procesos]
        logs = [s.texto_log() for s in procesos]
        if perfil is not None:
            perfil.wait(timeout=60)
    estadisticas = proveedor.estadisticas() if proveedor is not None else None
    comprobacion = carga.comprobar(url, entorno)
    resultado = {
        "clientes": clientes,
        "servidores": servidores,
        "modelo": entorno["AGENTE_MODELO"],
        "ejecuciones_simultaneas_por_servidor": carga.ejecuciones_simultaneas(entorno),
        "duracion_s": duracion,
        "calentamiento_s": calentamiento,
        **_cuentas(datos, estadisticas, inicio + calentamiento, fin, clientes),
        "turnos_totales": len(datos.turnos),
        "decisiones_totales": len(datos.decisiones),
        "estados_por_escenario": {k: dict(v) for k, v in sorted(datos.estados.items())},
        "errores": len(datos.errores),
        "saturados_503": datos.saturados,
        "ejemplos_errores": datos.errores[:5],
        "conflictos_esperados": dict(datos.esperados),
        **cpu.resumen(),
        "conexiones_max": sondeo.maximo,
        "conexiones_activas_max": sondeo.maximo_activas,
        "reposo_tras_drenaje": reposo,
        "errores_proveedor": (estadisticas or {}).get("errores"),
        "trazas_en_logs": sum(log.count("Traceback") for log in logs),
        "primera_traza": next((carga.ultima_linea_de_traza(log) for log in logs if "Traceback" in log), None),
        "memoria_antes": memoria_antes,
        "memoria_despues": memoria,
        **comprobacion,
    }
    if resultado.get("cpu_servidores_s") and resultado["turnos"]:
        resultado["cpu_ms_por_turno"] = round(1000 * resultado["cpu_servidores_s"] / resultado["turnos"], 1)
    nucleo.por_ejecucion(resultado)
    _imprimir(nombre, resultado)
    return resultado


def _imprimir(nombre: str, r: dict[str, Any]) -> None:
    print(f"  {nombre}: {r['turnos']} turnos, {r['turnos_por_segundo']} turnos/s "
          f"(modelo {r['modelo_por_turno_s']} s/turno); turno p50 {r['turno']['p50_ms']} ms p99 "
          f"{r['turno']['p99_ms']} ms; sin modelo p50 {r['turno_menos_modelo']['p50_ms']} p99 "
          f"{r['turno_menos_modelo']['p99_ms']} ms; errores {r['errores']} {r['ejemplos_errores'][:2]}; 503 {r['saturados_503']}; "
          f"conexiones máx {r['conexiones_max']} (activas {r['conexiones_activas_max']}); VmHWM "
          + ", ".join(f"{m['vmhwm_mib']} MiB" for m in r["memoria_despues"])
          + f"; invariantes {r['invariantes']['todo_en_orden']}; CPU servidores "
          f"{r.get('cpu_servidores_nucleos')} núcleos ({r.get('cpu_ms_por_turno')} ms/turno), proveedor "
          f"{r.get('cpu_proveedor_nucleos')}, conductor {r.get('cpu_conductor_nucleos')}, carga {r.get('carga_maquina_1min')}", flush=True)


# --- Orquestación --------------------------------------------------------------------------


def ejecutar(url_admin: str, niveles: tuple[int, ...] | None = None, *, tope: float | None = None,
             dos_procesos: bool = True, por_nucleo: bool = True) -> dict[str, Any]:
    """Todo el bench de capacidad. ``tope``: turnos/s de CPU ya medidos (se salta esa medida).

    Los niveles de ``REPETIDOS`` se miden dos veces, la segunda tras todos los demás (así las dos
    pasadas de un nivel no comparten el mismo rato de la máquina)."""
    # 12 s por nivel y 5 de calentamiento (antes 20 y 8): con los pares dentro, make bench
    # pasaba de 20 min desde un clon nuevo (1201,6 s el 2026-12-07 más la instalación); a
    # 1,2 s por llamada al modelo, 12 s siguen siendo 70 turnos o más por nivel desde 25 clientes.
    duracion = util.segun_modo(12.0, 6.0)
    calentamiento = util.segun_modo(5.0, 4.0)
    niveles = niveles or util.segun_modo(NIVELES, (25, 50))
    latencia = Latencia()
    resultado: dict[str, Any] = {
        "latencia": {"primer_token_s": latencia.primer_token, "tokens_por_segundo": latencia.tokens_por_segundo},
        "niveles": {},
        "segundas": {},
    }
    if tope is None:
        print(f"[capacidad] tope de CPU: {CLIENTES_CPU} clientes con el modelo offline…", flush=True)
        cpu = un_nivel(url_admin, "bench_cap_cpu", CLIENTES_CPU, servidores=1, duracion=duracion,
                       calentamiento=calentamiento, proveedor=None)
        resultado["cpu"] = cpu
        tope = cpu["turnos_por_segundo"]
    with ProveedorEnProceso(latencia) as proveedor:

        def medir(nombre: str, clientes: int, servidores: int = 1, rotulo: str | None = None) -> dict[str, Any]:
            print(f"[capacidad] {clientes} clientes, {servidores} servidor(es), latencia "
                  f"{latencia.primer_token} s + {latencia.tokens_por_segundo:g} tokens/s…", flush=True)
            r = un_nivel(url_admin, nombre, clientes, servidores=servidores, duracion=duracion,
                         calentamiento=calentamiento, proveedor=proveedor)
            ideal = min(x for x in (r["ideal_sin_tope"], tope * servidores) if x)
            r["ideal"] = round(ideal, 2)
            r["R"] = round(r["turnos_por_segundo"] / ideal, 3) if ideal else None
            r["rotulo"] = rotulo or str(clientes)
            print(f"    ideal {r['ideal']} turnos/s → R = {100 * (r['R'] or 0):.0f} %", flush=True)
            return r

        for vuelta in (1, 2):
            for n in niveles:
                if vuelta == 1:
                    resultado["niveles"][str(n)] = medir(f"bench_cap_{n}", n)
                elif n in REPETIDOS:
                    resultado["segundas"][str(n)] = medir(f"bench_cap_{n}_2", n, rotulo=f"{n} (2.ª)")
        if dos_procesos:
            clientes = util.segun_modo(CLIENTES_DOS_PROCESOS, 50)
            resultado["dos_procesos"] = medir(f"bench_cap_dos_{clientes}", clientes, 2)
        if por_nucleo:
            resultado["nucleo"] = _por_nucleo(url_admin, proveedor.url, medir, resultado, duracion, calentamiento)
    return resultado


def _por_nucleo(url_admin: str, proveedor_url: str, medir, resultado: dict[str, Any], duracion: float,
                calentamiento: float) -> dict[str, Any]:
    """B con el mismo proveedor, el nivel del 70 % de un núcleo y la regla comprobada con dos procesos."""
    # B con tantos hilos como clientes tiene el nivel más bajo: se compara con ese nivel.
    menor = min(resultado["niveles"], key=int)
    print(f"[capacidad] B (create_agent + PostgresSaver) con el mismo proveedor, {menor} hilos…", flush=True)
    b = nucleo.medir_b(url_admin, proveedor_url, duracion=duracion, calentamiento=calentamiento, hilos=int(menor))
    print(f"    B: {b}", flush=True)
    corridas = [*resultado["niveles"].values(), *resultado["segundas"].values()]
    busqueda = nucleo.buscar_70(lambda n: medir(f"bench_cap_70_{n}", n, rotulo=f"{n} (≤ 70 %)"), corridas,
                                util.segun_modo(2, 1))
    e = busqueda["elegida"]
    dispersiones = [nucleo.dispersion(resultado["niveles"][k]["turnos_por_segundo"], r["turnos_por_segundo"])
                    for k, r in resultado["segundas"].items()]
    dos = None
    if e is not None:
        dos = medir("bench_cap_dos_70", 2 * e["clientes"], 2, rotulo=f"{2 * e['clientes']} (2 × nivel del 70 %)")
    return {
        "b": b,
        "busqueda": busqueda,
        "referencia": nucleo.referencia([resultado["niveles"][menor],
                                         *([resultado["segundas"][menor]] if menor in resultado["segundas"] else [])]),
        "regla": nucleo.regla(e, [d for d in dispersiones if d is not None], dos) if e else None,
        "dos_70": dos,
    }


# --- Documento -----------------------------------------------------------------------------


def linea_capacidad(r: dict[str, Any], latencia: dict[str, float], segunda: dict[str, Any] | None = None) -> str:
    donde = "por proceso" if r["servidores"] == 1 else f"en {r['servidores']} procesos sobre una base"
    linea = (f"Capacidad: {r['clientes']} conversaciones simultáneas {donde} con latencia de modelo "
             f"{nucleo.coma(latencia['primer_token_s'])} s: {nucleo.coma(r['turnos_por_segundo'], 2)} turnos/s "
             f"({nucleo.coma(100 * r['R'], 0)} % del ideal), errores {r['errores']}, conexiones máx {r['conexiones_max']}")
    if segunda is None:
        return linea
    d = nucleo.dispersion(r["turnos_por_segundo"], segunda["turnos_por_segundo"])
    return (f"{linea}; segunda pasada {nucleo.coma(segunda['turnos_por_segundo'], 2)} turnos/s "
            f"({nucleo.coma(100 * segunda['R'], 0)} % del ideal), errores {segunda['errores']}; dispersión "
            f"{nucleo.coma(100 * d if d is not None else None, 0)} %")


def markdown(c: dict[str, Any], tabla, invariantes_md, objetivo_p99_ms: float = 250.0) -> list[str]:
    """La sección del documento (``tabla``, ``invariantes_md`` y el objetivo son de ``bench.__main__``)."""
    lat = c["latencia"]
    cpu = c["cpu"]
    segundas = c.get("segundas", {})
    n = c.get("nucleo") or {}
    filas_r = [*c["niveles"].values(), *segundas.values(), *n.get("busqueda", {}).get("buscados", []),
               *([c["dos_procesos"]] if "dos_procesos" in c else []), *([n["dos_70"]] if n.get("dos_70") else [])]
    lineas = [
        "## 7. Capacidad con la latencia de un modelo real",
        "",
        f"Un `agente serve` (uvicorn, otro proceso) con `AGENTE_MODELO=openai:latencia` contra "
        f"`tests/apoyo/proveedor_latencia.py` ({nucleo.coma(lat['primer_token_s'])} s hasta el primer token, "
        f"{lat['tokens_por_segundo']:g} tokens/s) por el cliente real `langchain-openai`. Cada cliente "
        "abre una conversación, consulta un pedido y devuelve uno (pequeño sin firma o grande con "
        "firma, alternando), en directo (SSE) y sin pausa entre mensajes; cuatro encargados deciden "
        f"por la API. {cpu['duracion_s']:g} s medidos por nivel tras {cpu['calentamiento_s']:g} s de "
        "calentamiento; base y servidor nuevos en cada nivel. *Sin modelo*: el turno menos el tiempo "
        "que el proveedor tardó en las peticiones de ese turno (marca `[ref …]` en el mensaje). "
        f"*Ideal*: clientes ÷ tiempo de modelo por turno, con el tope de la CPU: "
        f"**{nucleo.coma(cpu['turnos_por_segundo'], 2)} turnos/s** con el modelo offline y {cpu['clientes']} "
        f"clientes (errores {cpu['errores']}, conexiones máx {cpu['conexiones_max']}).",
        "",
        *[f"- {linea_capacidad(r, lat, segundas.get(k))}" for k, r in c["niveles"].items()],
        *[f"- {linea_capacidad(r, lat)}" for r in filas_r[len(c["niveles"]) + len(segundas):]],
        "",
    ]
    filas = []
    for r in filas_r:
        filas.append([
            r.get("rotulo", r["clientes"]), r["servidores"], r.get("ejecuciones_simultaneas_por_servidor") or "—",
            r["turnos"], r["turnos_por_segundo"], r["modelo_por_turno_s"], r["ideal"],
            f"{100 * r['R']:.0f} %", f"{r['turno']['p50_ms']:.0f} / {r['turno']['p99_ms']:.0f}",
            f"{r['turno_menos_modelo']['p50_ms']:.0f} / {r['turno_menos_modelo']['p99_ms']:.0f}",
            f"{r['decision_menos_modelo']['p50_ms'] or 0:.0f} / {r['decision_menos_modelo']['p99_ms'] or 0:.0f}",
            r["errores"], r["saturados_503"], f"{r['conexiones_max']} ({r['conexiones_activas_max']})",
            ", ".join(f"{m['vmhwm_mib']:.0f}" for m in r["memoria_despues"]),
            "sí" if r["invariantes"]["todo_en_orden"] else "**NO**",
        ])
    lineas += tabla(["clientes", "procesos", "ejecuciones a la vez", "turnos", "turnos/s",
                     "modelo s/turno", "ideal", "R", "turno p50 / p99 ms", "sin modelo p50 / p99 ms",
                     "decisión sin modelo p50 / p99 ms", "errores", "503 (reintentados)",
                     "conexiones máx (activas)",
                     "VmHWM MiB", "invariantes"], filas)
    for r in filas_r:
        if r["errores"] or r["primera_traza"]:
            lineas.append(f"- {r['clientes']} clientes × {r['servidores']}: errores {r['ejemplos_errores'][:3]}"
                          + (f"; primera traza del log: `{r['primera_traza']}`" if r["primera_traza"] else ""))
    lineas += ["", f"Invariantes del nivel de {filas_r[-1]['clientes']} clientes en {filas_r[-1]['servidores']} "
               "procesos:", ""]
    lineas += invariantes_md(filas_r[-1]["invariantes"], filas_r[-1]["recuentos"])
    return lineas + (nucleo.markdown(c, tabla, objetivo_p99_ms) if n else [])


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.capacidad 100 200 --tope 12``: niveles sueltos (sin el documento)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.capacidad", description=main.__doc__)
    parser.add_argument("niveles", nargs="*", type=int)
    parser.add_argument("--tope", type=float, help="turnos/s de CPU ya medidos (no se miden)")
    parser.add_argument("--dos-procesos", action="store_true")
    args = parser.parse_args(argv)
    with util.postgres_temporal() as url_admin:
        r = ejecutar(url_admin, tuple(args.niveles) or None, tope=args.tope, dos_procesos=args.dos_procesos)
    destino = util.RAIZ / "bench" / "capacidad-parcial.json"
    destino.write_text(json.dumps(r, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    print(f"Resultados: {destino.relative_to(util.RAIZ)}")


if __name__ == "__main__":
    main()
