"""¿Cuánto darían los cambios que propone docs/rendimiento.md? Se miden, no se suponen.

``.venv/bin/python -m bench.variantes [-n 25]`` (no forma parte de ``make bench``)
intercala, como el bench de turnos, las mismas conversaciones con:

- B: ``create_agent`` pelado con ``PostgresSaver`` (la referencia);
- C y D: el producto sin y con trazas, tal cual;
- C-sin-cerrojo y D-sin-cerrojo: lo mismo con el cerrojo de instancia del
  ``PostgresSaver`` sustituido por uno nulo (seguro sobre un pool sin pipeline: cada
  sentencia toma su propia conexión). Es una medida de lo que se ganaría, no el cambio.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import defaultdict
from contextlib import ExitStack

import psycopg

from bench import util
from bench.turnos import ESCENARIOS, CasoPelado, CasoServicio, agente_pelado, ajustes_de

CASOS = ("B", "C", "C-sin-cerrojo", "D", "D-sin-cerrojo")


def _servicio(url: str, receptor: str | None, *, sin_cerrojo: bool):
    from contextlib import nullcontext

    from agente.servicio.fabrica import crear_servicio

    servicio = crear_servicio(ajustes_de(url, receptor=receptor), url=url)
    if sin_cerrojo:
        servicio.agente.checkpointer.lock = nullcontext()
    return servicio


def medir(n: int, calentamiento: int = 2) -> dict:
    from langgraph.checkpoint.postgres import PostgresSaver

    with util.postgres_temporal() as url_admin, util.ReceptorEnProceso() as receptor, ExitStack() as pila:
        url = util.crear_base(url_admin, "variantes")
        with psycopg.connect(url, autocommit=True) as c:
            clientes = {caso: util.crear_clientes(c, f"V{k}-", n + calentamiento, base=50_000_000 + k * 100_000)
                        for k, caso in enumerate(CASOS)}
        pool = util.abrir_pool(url)
        pila.callback(pool.close)
        instancias = {"B": CasoPelado("B", agente_pelado(pool, PostgresSaver(pool)))}
        for caso, rec, sin in (("C", None, False), ("C-sin-cerrojo", None, True), ("D", receptor.url, False),
                               ("D-sin-cerrojo", receptor.url, True)):
            servicio = _servicio(url, rec, sin_cerrojo=sin)
            pila.callback(servicio.cerrar)
            instancias[caso] = CasoServicio(caso, servicio)
        muestras = {caso: defaultdict(list) for caso in CASOS}
        orden = list(CASOS)
        azar = random.Random(13)
        for i in range(n + calentamiento):
            azar.shuffle(orden)
            for caso in orden:
                destino = muestras[caso] if i >= calentamiento else defaultdict(list)

                def cronometro(escenario, funcion, destino=destino):
                    t0 = time.perf_counter_ns()
                    resultado = funcion()
                    destino[escenario].append((time.perf_counter_ns() - t0) / 1e6)
                    return resultado

                instancias[caso].conversacion(clientes[caso][i], cronometro)
    suma = {caso: sum(statistics.median(muestras[caso][e]) for e in ESCENARIOS) for caso in CASOS}
    return {
        "fecha": util.maquina_breve(),
        "conversaciones": n,
        "p50_ms_por_escenario": {caso: {e: round(statistics.median(muestras[caso][e]), 1) for e in ESCENARIOS}
                                 for caso in CASOS},
        "conversacion_p50_ms": {caso: round(v, 1) for caso, v in suma.items()},
        "frente_a_B": {caso: round(v / suma["B"], 2) for caso, v in suma.items()},
    }


def main(argv: list[str] | None = None) -> None:
    util.main_de_conversaciones(argv, modulo="bench.variantes", descripcion=__doc__.splitlines()[0], medir=medir,
                                destino="variantes.json")


if __name__ == "__main__":
    main()
