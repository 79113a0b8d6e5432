"""Lo que cuesta cada forma de hablar con PostgreSQL en una conexión del pool.

``.venv/bin/python -m bench.transacciones``: sobre un PostgreSQL temporal (el del bench),
en una conexión en autocommit del pool, mide por repetición: una sentencia sola, la misma
en una transacción, en modo pipeline, en los dos, tres sentencias (lectura, escritura,
lectura) con y sin pipeline, un savepoint y una sentencia con CTE que escribe.

Sirve para decidir cómo agrupar las sentencias del servicio: en el socket local un viaje
de ida y vuelta cuesta menos que la maquinaria de pipeline de psycopg (entrar, sincronizar
y salir), así que el servicio usa transacciones normales y junta escrituras en CTE.
Cocientes en una sola ejecución, como el resto del bench; nada se compara con un reloj fijo.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from bench import util

__all__ = ["medir"]

CREAR_SQL = "CREATE TEMP TABLE bench_transacciones (x int)"
LEER_SQL = "SELECT 1"
ESCRIBIR_SQL = "INSERT INTO bench_transacciones VALUES (1)"
CTE_SQL = "WITH escrita AS (INSERT INTO bench_transacciones VALUES (1)) SELECT 1"


def _microsegundos(funcion: Callable[[], object], repeticiones: int) -> float:
    for _ in range(max(repeticiones // 20, 10)):  # calentamiento (sentencias preparadas)
        funcion()
    inicio = time.perf_counter()
    for _ in range(repeticiones):
        funcion()
    return round((time.perf_counter() - inicio) / repeticiones * 1e6, 1)


def medir(url: str, *, repeticiones: int = 2000) -> dict[str, float]:
    """µs por repetición de cada forma, en la misma conexión y la misma ejecución."""
    pool = util.abrir_pool(url)
    try:
        with pool.connection() as c:
            c.execute(CREAR_SQL)

            def leer():
                return c.execute(LEER_SQL).fetchone()

            def transaccion():
                with c.transaction():
                    leer()

            def pipeline():
                with c.pipeline():
                    leer()

            def pipeline_y_transaccion():
                with c.pipeline(), c.transaction():
                    leer()

            def tres():
                with c.transaction():
                    leer()
                    c.execute(ESCRIBIR_SQL)
                    leer()

            def tres_en_pipeline():
                with c.pipeline(), c.transaction():
                    leer()
                    c.execute(ESCRIBIR_SQL)
                    leer()

            def savepoint():
                with c.transaction(), c.transaction():
                    c.execute(ESCRIBIR_SQL)

            def cte():
                return c.execute(CTE_SQL).fetchone()

            formas = {
                "sentencia": leer,
                "transaccion(sentencia)": transaccion,
                "pipeline(sentencia)": pipeline,
                "pipeline+transaccion(sentencia)": pipeline_y_transaccion,
                "transaccion(3 sentencias)": tres,
                "pipeline+transaccion(3 sentencias)": tres_en_pipeline,
                "transaccion(savepoint(escritura))": savepoint,
                "una sentencia con CTE que escribe": cte,
            }
            return {nombre: _microsegundos(f, repeticiones) for nombre, f in formas.items()}
    finally:
        pool.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.transacciones", description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="repeticiones por forma")
    args = parser.parse_args(argv)
    with util.postgres_temporal() as url_admin:
        url = util.crear_base(url_admin, "transacciones", demo=False)
        resultado = medir(url, repeticiones=args.n)
    base = resultado["sentencia"]
    for nombre, us in resultado.items():
        print(f"  {nombre:<38} {us:8.1f} µs  ({us / base:.2f}× una sentencia)")
    print(json.dumps(resultado, ensure_ascii=False))


if __name__ == "__main__":
    main()
