"""``python -m bench.humo sentencias|explain|ingesta|nucleo|serializable URL``: en pequeño, lo del bench que toca el interior del producto.

``make bench`` no entra en ``make test`` (tarda minutos) y por eso se rompió dos veces sin que
nadie lo viera. La prueba ``tests/procesos/test_bench_humo.py`` lanza este módulo en un
subproceso sobre la base del test (las pruebas no importan ``bench/``: lo ejecutan como un
programa) y lee el JSON de la última línea que imprime:

- ``sentencias``: sentencias psycopg por caso (B, C) y escenario en una conversación sin
  calentamiento (``turnos.contar``: la fábrica del servicio con el pool trazado);
- ``explain``: el plan de la SQL de la bandeja (``crecimiento._explain``);
- ``ingesta``: ``agente importar`` de 300 pedidos generados, dos veces (``ingesta._importar``);
- ``nucleo``: el caso B de la capacidad por núcleo (``nucleo.proceso_b``: ``create_agent`` +
  ``PostgresSaver`` en streaming contra el proveedor OpenAI simulado) con 2 hilos y un proveedor rápido;
- ``pares``: el guion de ``langgraph-sdk`` de ``bench.pares`` contra el producto (sin instalar
  ni arrancar aegra ni langgraph-api), una conversación, y las líneas del documento;
- ``serializable``: 3 semillas de 12 operaciones de las historias concurrentes
  (``serializable.tanda``), comprobadas.
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


def ingesta(url: str) -> dict:
    import tempfile
    from pathlib import Path

    from bench import ingesta as bench_ingesta

    with tempfile.TemporaryDirectory(prefix="humo-ingesta-") as carpeta:
        ruta = Path(carpeta) / "lote.jsonl"
        lineas = bench_ingesta.generar(ruta, 300)
        primera = bench_ingesta._importar(url, ruta)
        segunda = bench_ingesta._importar(url, ruta)
    return {"lineas": lineas, "primera": primera["resumen"], "segunda": segunda["resumen"],
            "pico_rss_mib": primera["pico_rss_mib"]}


def nucleo(url: str) -> dict:
    from bench import nucleo as bench_nucleo
    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnProceso

    with ProveedorEnProceso(Latencia(primer_token=0.05, tokens_por_segundo=2000)) as proveedor:
        return bench_nucleo.proceso_b(url, proveedor.url, duracion=3.0, calentamiento=0.5, hilos=2)


def serializable(url: str) -> dict:
    from bench import serializable as bench_serializable

    return bench_serializable.tanda(url, semillas=3, operaciones=12)


def pares(url: str) -> dict:
    from bench import pares as bench_pares

    return bench_pares.humo(url)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.humo", description=__doc__.splitlines()[0])
    parser.add_argument("parte", choices=("sentencias", "explain", "ingesta", "nucleo", "serializable",
                                                "pares"))
    parser.add_argument("url")
    args = parser.parse_args(argv)
    partes = {"sentencias": sentencias, "explain": explain, "ingesta": ingesta, "nucleo": nucleo,
              "serializable": serializable, "pares": pares}
    resultado = partes[args.parte](args.url)
    print(json.dumps(resultado, ensure_ascii=False))


if __name__ == "__main__":
    main()
