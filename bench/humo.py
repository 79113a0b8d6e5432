"""``python -m bench.humo sentencias|explain URL``: en pequeño, lo del bench que toca el interior del producto.

``make bench`` no entra en ``make test`` (tarda minutos) y por eso se rompió dos veces sin que
nadie lo viera. La prueba ``tests/procesos/test_bench_humo.py`` lanza este módulo en un
subproceso sobre la base del test (las pruebas no importan ``bench/``: lo ejecutan como un
programa) y lee el JSON de la última línea que imprime:

- ``sentencias``: sentencias psycopg por caso (B, C) y escenario en una conversación sin
  calentamiento (``turnos.contar``: la fábrica del servicio con el pool trazado);
- ``explain``: el plan de la SQL de la bandeja (``crecimiento._explain``).
"""

from __future__ import annotations

import argparse
import json

__all__ = ["main"]


def sentencias(url: str) -> dict[str, dict[str, int]]:
    from bench import turnos

    recuento = turnos.contar(url, conversaciones=1, calentamiento=0)
    return {caso: {e: recuento[caso][e]["sentencias_psycopg"] for e in turnos.ESCENARIOS}
            for caso in ("B", "C")}


def explain(url: str) -> str:
    from bench import crecimiento

    return crecimiento._explain(url)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.humo", description=__doc__.splitlines()[0])
    parser.add_argument("parte", choices=("sentencias", "explain"))
    parser.add_argument("url")
    args = parser.parse_args(argv)
    resultado = sentencias(args.url) if args.parte == "sentencias" else explain(args.url)
    print(json.dumps(resultado, ensure_ascii=False))


if __name__ == "__main__":
    main()
