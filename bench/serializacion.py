"""Lo que cuesta la política serializable por turno (issue 38), medido y no supuesto.

``.venv/bin/python -m bench.serializacion [-n 25]`` (no forma parte de ``make bench``)
intercala, como el bench de turnos, las mismas conversaciones con:

- B: ``create_agent`` pelado con ``PostgresSaver`` (la referencia);
- C: el producto tal cual: cada efecto toma el candado del cliente y vuelve a decidir su
  regla en su transacción (``politicas.revalidacion``);
- C-sin-revalidar: el mismo producto con la revalidación sustituida por una que no hace
  nada. No es un modo del producto: es la medida de lo que cuesta la garantía.

Después, fuera del cronómetro, una pasada de recuento de sentencias por turno de C y
C-sin-revalidar (``util.RegistroSentencias``). Escribe ``bench/serializacion.json``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from typing import Any

import psycopg

from bench import util
from bench.turnos import ESCENARIOS, CasoPelado, CasoServicio, agente_pelado, ajustes_de

CASOS = ("B", "C", "C-sin-revalidar")


@contextmanager
def _sin_revalidar():
    """La revalidación de los efectos, nula mientras dura el bloque (un solo hilo: el bench)."""
    from politicas.aprobacion import PoliticaAprobacion

    original = PoliticaAprobacion.revalidar
    PoliticaAprobacion.revalidar = lambda self, conexion, **_: None
    try:
        yield
    finally:
        PoliticaAprobacion.revalidar = original


class _Caso:
    def __init__(self, caso, *, sin_revalidar: bool) -> None:
        self.caso = caso
        self.sin_revalidar = sin_revalidar

    def conversacion(self, cliente, medir) -> None:
        with _sin_revalidar() if self.sin_revalidar else ExitStack():
            self.caso.conversacion(cliente, medir)


def medir(n: int, calentamiento: int = 2, recuento: int = 4) -> dict[str, Any]:
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.servicio.fabrica import crear_servicio

    with util.postgres_temporal() as url_admin, ExitStack() as pila:
        url = util.crear_base(url_admin, "serializacion")
        total = n + calentamiento
        with psycopg.connect(url, autocommit=True) as c:
            clientes = {caso: util.crear_clientes(c, f"S{k}-", total + recuento, base=60_000_000 + k * 100_000)
                        for k, caso in enumerate(CASOS)}
        pool = util.abrir_pool(url)
        pila.callback(pool.close)
        servicio = crear_servicio(ajustes_de(url), url=url)
        pila.callback(servicio.cerrar)
        instancias = {
            "B": _Caso(CasoPelado("B", agente_pelado(pool, PostgresSaver(pool))), sin_revalidar=False),
            "C": _Caso(CasoServicio("C", servicio), sin_revalidar=False),
            "C-sin-revalidar": _Caso(CasoServicio("C-sin-revalidar", servicio), sin_revalidar=True),
        }
        muestras: dict[str, dict[str, list[float]]] = {caso: defaultdict(list) for caso in CASOS}
        orden = list(CASOS)
        azar = random.Random(38)
        for i in range(total):
            azar.shuffle(orden)
            for caso in orden:
                destino = muestras[caso] if i >= calentamiento else defaultdict(list)

                def cronometro(escenario, funcion, destino=destino):
                    t0 = time.perf_counter_ns()
                    resultado = funcion()
                    destino[escenario].append((time.perf_counter_ns() - t0) / 1e6)
                    return resultado

                instancias[caso].conversacion(clientes[caso][i], cronometro)
        sentencias = _contar(instancias, clientes, desde=total, n=recuento)
    p50 = {caso: {e: round(statistics.median(muestras[caso][e]), 2) for e in ESCENARIOS} for caso in CASOS}
    suma = {caso: sum(p50[caso].values()) for caso in CASOS}
    return {
        "fecha": util.maquina_breve(),
        "conversaciones": n,
        "p50_ms_por_escenario": p50,
        "conversacion_p50_ms": {caso: round(v, 1) for caso, v in suma.items()},
        "coste_ms_por_escenario": {e: round(p50["C"][e] - p50["C-sin-revalidar"][e], 2) for e in ESCENARIOS},
        "C_frente_a_B": round(suma["C"] / suma["B"], 3),
        "C_sin_revalidar_frente_a_B": round(suma["C-sin-revalidar"] / suma["B"], 3),
        "sentencias_por_escenario": sentencias,
    }


def _contar(instancias: dict, clientes: dict, *, desde: int, n: int) -> dict[str, Any]:
    """Sentencias por turno de C y C-sin-revalidar, y las que solo tiene C (su origen)."""
    registro = util.RegistroSentencias()
    por_caso: dict[str, dict[str, Counter]] = {}
    with registro.instalar():
        for caso in ("C", "C-sin-revalidar"):
            por_escenario: dict[str, Counter] = defaultdict(Counter)

            def contar(escenario, funcion, por_escenario=por_escenario):
                with registro.contar() as cuenta:
                    resultado = funcion()
                por_escenario[escenario].update(cuenta)
                return resultado

            for i in range(desde, desde + n):
                instancias[caso].conversacion(clientes[caso][i], contar)
            por_caso[caso] = por_escenario
    salida: dict[str, Any] = {}
    for e in ESCENARIOS:
        con, sin = por_caso["C"][e], por_caso["C-sin-revalidar"][e]
        salida[e] = {
            "C": round(sum(con.values()) / n, 2),
            "C-sin-revalidar": round(sum(sin.values()) / n, 2),
            "solo_en_C": {f"{origen} | {sql}": round((con[(origen, sql)] - sin[(origen, sql)]) / n, 2)
                          for (origen, sql) in sorted(con) if con[(origen, sql)] > sin[(origen, sql)]},
        }
    return salida


def main(argv: list[str] | None = None) -> None:
    util.main_de_conversaciones(argv, modulo="bench.serializacion", descripcion=__doc__.splitlines()[0], medir=medir,
                                destino="serializacion.json")


if __name__ == "__main__":
    main()
