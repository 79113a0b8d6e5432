"""A/B del canal ``messages``: ``DeltaChannel`` (lo que usa el producto) frente al de serie.

``.venv/bin/python -m bench.delta [--turnos 150]`` (no forma parte de ``make bench``): dos
hilos largos de consultas, intercalados turno a turno, con ``create_agent`` + ``PostgresSaver``
y ``durability="sync"`` (el caso B del bench de turnos) y una sola diferencia, el esquema
del estado: el ``AgentState`` de serie (``messages`` con ``add_messages``: cada checkpoint
guarda la conversación entera) o ``agente.construir.EstadoAgente`` (``DeltaChannel``: cada
checkpoint guarda lo que añade su paso y una foto cada ``FOTO_CADA``). En cada marca, la
mediana de los últimos turnos (reloj y CPU del proceso) y los bytes del hilo en las tablas
del checkpointer; al final, lo que tarda ``get_state`` (la ficha y la reanudación lo leen).
Escribe ``bench/delta.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import psycopg

from bench import util

MARCAS = (10, 50, 100, 150)
VENTANA = 9


def _agentes(pool):
    import langchain.agents as la
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.construir import EstadoAgente
    from bench.turnos import agente_pelado

    original = la.create_agent
    serie = agente_pelado(pool, PostgresSaver(pool))
    la.create_agent = lambda *a, **k: original(*a, **{**k, "state_schema": EstadoAgente})
    try:
        delta = agente_pelado(pool, PostgresSaver(pool))
    finally:
        la.create_agent = original
    return {"serie": serie, "delta": delta}


def medir(turnos: int = max(MARCAS)) -> dict[str, Any]:
    from langchain_core.messages import HumanMessage

    from bench.crecimiento import _bytes_hilo

    marcas = tuple(m for m in MARCAS if m <= turnos) or (turnos,)
    with util.postgres_temporal() as url_admin:
        url = util.crear_base(url_admin, "delta")
        with psycopg.connect(url, autocommit=True) as c:
            clientes = util.crear_clientes(c, "DL-", 2, base=94_000_000)
        pool = util.abrir_pool(url)
        try:
            agentes = _agentes(pool)
            casos = {k: (agentes[k], clientes[i]) for i, k in enumerate(("serie", "delta"))}
            reloj: dict[str, list[float]] = {k: [] for k in casos}
            cpu: dict[str, list[float]] = {k: [] for k in casos}
            hilos = {k: f"bench-delta-{k}-{time.time_ns()}" for k in casos}
            filas = []
            with psycopg.connect(url, autocommit=True) as c:
                for turno in range(1, max(marcas) + 1):
                    for k in (list(casos) if turno % 2 else list(reversed(casos))):
                        agente, cliente = casos[k]
                        pedido = cliente.pedido_pequeno if turno % 2 else cliente.pedido_grande
                        t0, c0 = time.perf_counter(), time.process_time()
                        agente.invoke({"messages": [HumanMessage(f"¿Dónde está mi pedido {pedido}?")]},
                                      {"configurable": {"thread_id": hilos[k]}}, context=cliente.contexto(),
                                      durability="sync", version="v2")
                        reloj[k].append((time.perf_counter() - t0) * 1000)
                        cpu[k].append((time.process_time() - c0) * 1000)
                    if turno in marcas:
                        fila: dict[str, Any] = {"turnos": turno}
                        for k in casos:
                            fila[k] = {"p50_ms": round(statistics.median(reloj[k][-VENTANA:]), 1),
                                       "cpu_ms": round(statistics.median(cpu[k][-VENTANA:]), 1),
                                       "kib": round(_bytes_hilo(c, hilos[k])["bytes_total"] / 1024)}
                        filas.append(fila)
                        print(f"  {turno:>4} turnos  " + "  ".join(
                            f"{k}: p50 {fila[k]['p50_ms']} ms, CPU {fila[k]['cpu_ms']} ms, {fila[k]['kib']} KiB"
                            for k in casos), flush=True)
            lectura = {}
            for k, (agente, _) in casos.items():
                config = {"configurable": {"thread_id": hilos[k]}}
                t0 = time.perf_counter()
                for _ in range(20):
                    estado = agente.get_state(config)
                lectura[k] = {"get_state_ms": round((time.perf_counter() - t0) / 20 * 1000, 1),
                              "mensajes": len(estado.values["messages"])}
            if lectura["serie"]["mensajes"] != lectura["delta"]["mensajes"]:
                raise RuntimeError(f"los dos hilos no tienen los mismos mensajes: {lectura}")
            print("  get_state: " + ", ".join(f"{k} {v['get_state_ms']} ms ({v['mensajes']} mensajes)"
                                              for k, v in lectura.items()), flush=True)
        finally:
            pool.close()
    return {"maquina": util.maquina_breve(), "ventana": VENTANA, "marcas": filas, "lectura": lectura}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turnos", type=int, default=max(MARCAS))
    parser.add_argument("--salida", type=Path, default=util.RAIZ / "bench" / "delta.json",
                        help="dónde escribir el JSON (por defecto bench/delta.json)")
    args = parser.parse_args(argv)
    resultado = medir(args.turnos)
    args.salida.write_text(json.dumps(resultado, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"Resultados: {args.salida}")


if __name__ == "__main__":
    main()
