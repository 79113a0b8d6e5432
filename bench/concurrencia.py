"""Concurrencia dentro de un worker: ¿limita el cerrojo del PostgresSaver el rendimiento?

``PostgresSaver`` serializa todas las sentencias de una instancia tras un
``threading.Lock`` aunque trabaje sobre un pool. El servicio crea un saver por proceso,
así que N turnos a la vez en un worker (el pool de hilos de la web) hacen cola ante ese
cerrojo para cada lectura y escritura de checkpoint. Tres variantes, intercaladas:

- ``compartido``: lo que hace ``crear_servicio`` hoy (un saver para todo el proceso);
- ``por_peticion``: un ``PostgresSaver(pool)`` nuevo en cada ejecución, pasado en la config;
- ``sin_cerrojo``: el saver compartido con su cerrojo sustituido por uno nulo (seguro solo
  sobre un pool y sin ``pipe``: cada sentencia toma su propia conexión).

N hilos ejecutan conversaciones completas (consulta, reembolso pequeño, reembolso grande
y su aprobación) con clientes distintos. Se mide turnos por segundo y, en la variante
compartida, cuánto esperan los turnos al cerrojo del saver.

Aparte: cuántas conexiones necesita un turno y qué pasa cuando hay tantos turnos a la vez
como conexiones en el pool (el candado del hilo retiene una conexión todo el turno).
"""

from __future__ import annotations

import random
import threading
import time
import types
from contextlib import nullcontext
from typing import Any

import psycopg

from bench import util
from bench.turnos import CasoServicio, ajustes_de

VARIANTES = ("compartido", "por_peticion", "sin_cerrojo")


class CerrojoMedido:
    """``threading.Lock`` que cuenta cuántas veces estaba tomado al pedirlo y cuánto se esperó.

    La espera incluye volver a coger el GIL tras soltarse el cerrojo: es una cota superior.
    """

    def __init__(self) -> None:
        self._cerrojo = threading.Lock()
        self.veces = 0
        self.ocupado = 0
        self.espera_ns = 0

    def __enter__(self):
        self.veces += 1
        if not self._cerrojo.acquire(blocking=False):
            t0 = time.perf_counter_ns()
            self._cerrojo.acquire()
            self.ocupado += 1  # dentro del cerrojo: sin carreras
            self.espera_ns += time.perf_counter_ns() - t0
        return self

    def __exit__(self, *exc) -> None:
        self._cerrojo.release()


def _servicio(url: str, variante: str, pool_max: int):
    from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.servicio.fabrica import crear_servicio

    ajustes = ajustes_de(url)
    ajustes.pool_max = pool_max
    servicio = crear_servicio(ajustes, url=url)
    saver = servicio.agente.checkpointer
    cerrojo = None
    if variante == "compartido":
        cerrojo = CerrojoMedido()
        saver.lock = cerrojo
    elif variante == "sin_cerrojo":
        saver.lock = nullcontext()
    elif variante == "por_peticion":
        def _invocar(self, entrada, config, ctx):
            config = {**config, "configurable": {
                **config["configurable"], CONFIG_KEY_CHECKPOINTER: PostgresSaver(self.pool)}}
            return self.agente.invoke(entrada, config, context=ctx, durability="sync", version="v2")

        servicio.ejecutor.invocar_grafo = types.MethodType(_invocar, servicio.ejecutor)
    return servicio, cerrojo


def _ronda(url: str, variante: str, hilos: int, clientes: list[util.ClienteBench], pool_max: int) -> dict:
    servicio, cerrojo = _servicio(url, variante, pool_max)
    caso = CasoServicio(variante, servicio)
    tiempos: list[float] = []
    errores: list[str] = []
    cerrojo_tiempos = threading.Lock()
    reparto = [clientes[i::hilos] for i in range(hilos)]
    barrera = threading.Barrier(hilos + 1)

    def trabajar(mios: list[util.ClienteBench]) -> None:
        barrera.wait()
        for cliente in mios:
            def medir(_escenario, funcion):
                t0 = time.perf_counter_ns()
                resultado = funcion()
                with cerrojo_tiempos:
                    tiempos.append((time.perf_counter_ns() - t0) / 1e6)
                return resultado

            try:
                caso.conversacion(cliente, medir)
            except Exception as exc:  # se cuenta y se sigue: el bench no debe colgarse
                errores.append(f"{type(exc).__name__}: {exc}")

    trabajadores = [threading.Thread(target=trabajar, args=(m,)) for m in reparto]
    for t in trabajadores:
        t.start()
    barrera.wait()
    inicio = time.perf_counter()
    for t in trabajadores:
        t.join()
    segundos = time.perf_counter() - inicio
    servicio.cerrar()
    turnos = len(tiempos)
    resultado = {
        "turnos": turnos,
        "segundos": round(segundos, 2),
        "turnos_por_segundo": round(turnos / segundos, 2) if segundos else None,
        "p50_ms": util.resumen(tiempos)["p50_ms"],
        "p99_ms": util.resumen(tiempos)["p99_ms"],
        "errores": len(errores),
    }
    if cerrojo is not None:
        resultado["saver_llamadas_por_turno"] = round(cerrojo.veces / max(turnos, 1), 1)
        resultado["saver_cerrojo_ocupado_pct"] = round(100 * cerrojo.ocupado / max(cerrojo.veces, 1), 1)
        resultado["saver_espera_ms_por_turno"] = round(cerrojo.espera_ns / 1e6 / max(turnos, 1), 2)
    return resultado


def medir(url: str, *, hilos: tuple[int, ...], conversaciones_por_hilo: int, rondas: int,
          pool_max: int = 24) -> dict:
    """Cada ronda pasa por todos los tamaños y variantes (orden al azar); se da la mediana."""
    necesarios = sum(hilos) * conversaciones_por_hilo * len(VARIANTES) * rondas
    with psycopg.connect(url, autocommit=True) as c:
        clientes = iter(util.crear_clientes(c, "K-", necesarios, base=70_000_000))
    azar = random.Random(5)
    medidas: dict[tuple[int, str], list[dict]] = {}
    for _ in range(rondas):
        for n in hilos:
            orden = list(VARIANTES)
            azar.shuffle(orden)
            for variante in orden:
                lote = [next(clientes) for _ in range(n * conversaciones_por_hilo)]
                medidas.setdefault((n, variante), []).append(_ronda(url, variante, n, lote, pool_max))
    filas = []
    for n in hilos:
        fila: dict[str, Any] = {"hilos": n}
        for variante in VARIANTES:
            rondas_v = medidas[(n, variante)]
            mediana = sorted(rondas_v, key=lambda r: r["turnos_por_segundo"] or 0)[len(rondas_v) // 2]
            fila[variante] = {**mediana, "turnos_por_segundo_rondas": [r["turnos_por_segundo"] for r in rondas_v]}
        base = fila["compartido"]["turnos_por_segundo"]
        fila["por_peticion/compartido"] = util.cociente(fila["por_peticion"]["turnos_por_segundo"], base)
        fila["sin_cerrojo/compartido"] = util.cociente(fila["sin_cerrojo"]["turnos_por_segundo"], base)
        filas.append(fila)
        print(f"  {n} hilos: " + "  ".join(
            f"{v} {fila[v]['turnos_por_segundo']} turnos/s (p50 {fila[v]['p50_ms']} ms)" for v in VARIANTES
        ) + f"  cerrojo del saver ocupado {fila['compartido'].get('saver_cerrojo_ocupado_pct')} % de las "
              f"veces, espera {fila['compartido'].get('saver_espera_ms_por_turno')} ms/turno",
            flush=True)
    return {"pool_max": pool_max, "conversaciones_por_hilo": conversaciones_por_hilo, "rondas": rondas,
            "filas": filas}


def pool_agotado(url: str, *, pool_max: int = 4, espera_pool: float = 5.0) -> dict:
    """Tantos turnos a la vez como conexiones: cada uno retiene la del candado del hilo y
    espera otra para el checkpointer, que no llega hasta ``PoolTimeout``."""
    from agente.servicio.fabrica import crear_servicio

    with psycopg.connect(url, autocommit=True) as c:
        clientes = util.crear_clientes(c, "Z-", pool_max + 1, base=71_000_000)
    resultados: dict[str, Any] = {}
    for n in (pool_max - 1, pool_max):
        ajustes = ajustes_de(url)
        ajustes.pool_max = pool_max
        servicio = crear_servicio(ajustes, url=url)
        servicio.pool.timeout = espera_pool
        errores: list[str] = []
        barrera = threading.Barrier(n)

        def turno(cliente: util.ClienteBench, servicio=servicio, barrera=barrera, errores=errores) -> None:
            ctx = cliente.contexto()
            hilo = servicio.iniciar_conversacion(ctx)
            barrera.wait()
            try:
                servicio.conversar(hilo, util.texto_consulta(cliente), ctx)
            except Exception as exc:
                errores.append(type(exc).__name__)

        inicio = time.perf_counter()
        hilos = [threading.Thread(target=turno, args=(c,)) for c in clientes[:n]]
        for h in hilos:
            h.start()
        for h in hilos:
            h.join()
        resultados[f"{n}_turnos_con_pool_{pool_max}"] = {
            "errores": sorted(errores), "segundos": round(time.perf_counter() - inicio, 2)}
        servicio.cerrar()
    return {"pool_max": pool_max, "espera_pool_s": espera_pool, **resultados}


def ejecutar(url: str) -> dict:
    hilos = util.segun_modo((1, 4, 8), (1, 4))
    print(f"[concurrencia] saver compartido / por petición / sin cerrojo con {hilos} hilos…", flush=True)
    resultado = medir(url, hilos=hilos, conversaciones_por_hilo=util.segun_modo(3, 2),
                      rondas=util.segun_modo(2, 1))
    print("[concurrencia] turnos a la vez = conexiones del pool…", flush=True)
    resultado["pool_agotado"] = pool_agotado(url)
    print(f"  {resultado['pool_agotado']}", flush=True)
    return resultado
