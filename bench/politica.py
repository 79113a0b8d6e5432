"""Bench de la política de aprobación: latencia y sentencias por veredicto.

``.venv/bin/python -m bench.politica [-n 2000]`` arranca su propio PostgreSQL embebido en
una carpeta temporal, lo migra, carga la demo y mide ``necesita_encargado`` para N
llamadas nuevas (calcula y guarda) y para las mismas N ya guardadas (solo lee).

Las sentencias y los viajes de ida y vuelta se cuentan en el protocolo (PQtrace de libpq)
de la única conexión del pool, en una pasada aparte de la cronometrada. Objetivo: como
mucho 2 sentencias por veredicto nuevo (hechos + INSERT) y 1 por uno guardado. Los viajes
son uno por sentencia salvo la primera vez que una conexión usa cada sentencia
(``prepare_threshold=0`` la prepara en un viaje previo).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from tests.apoyo.traza_protocolo import trazar_pool

N_POR_DEFECTO = 2000


def _percentil(muestras: list[float], p: int) -> float:
    return statistics.quantiles(muestras, n=100, method="inclusive")[p - 1]


def _casos() -> list[tuple[str, dict[str, Any], Any]]:
    from nucleo.contexto import ContextoCliente

    ana = ContextoCliente(cliente_id="C-0001", tienda="talavera", nombre="Ana García López")
    bruno = ContextoCliente(cliente_id="C-0002", tienda="talavera", nombre="Bruno Díaz Martín")
    carmen = ContextoCliente(cliente_id="C-0003", tienda="madrid-centro", nombre="Carmen Ruiz Gómez")
    david = ContextoCliente(cliente_id="C-0004", tienda="madrid-centro", nombre="David Fernández Gil")
    elena = ContextoCliente(cliente_id="C-0005", tienda="talavera", nombre="Elena Navarro Ramos")
    return [
        ("reembolsar", {"pedido": "P-20260917-0041", "importe": "120.00", "motivo": "No calienta"}, ana),
        ("reembolsar", {"pedido": "P-20260920-0102", "importe": "24.90", "motivo": "Se raya"}, bruno),
        ("reembolsar", {"pedido": "P-20260801-0007", "importe": "35.00", "motivo": "Talla"}, carmen),
        ("reembolsar", {"pedido": "P-20260925-0150", "importe": "40.00", "motivo": "Tarda"}, david),
        ("reembolsar", {"pedido": "P-20260922-0077", "importe": "30.00", "motivo": "Ruido"}, elena),
        ("sustituir", {"pedido": "P-20260917-0041", "sku_original": "CAF-001", "sku_nuevo": "CAF-004"}, ana),
        ("sustituir", {"pedido": "P-20260917-0041", "sku_original": "CAF-001", "sku_nuevo": "CAF-002"}, ana),
        ("consultar_encargado", {"pregunta": "¿Puedo cambiarla por otra marca?"}, ana),
    ]


def _peticiones(prefijo: str, n: int) -> list[Any]:
    from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime

    casos = _casos()
    prefijo = f"{prefijo}-{uuid.uuid4().hex[:8]}"  # nuevas aunque se mida dos veces
    peticiones = []
    for i in range(n):
        herramienta, args, contexto = casos[i % len(casos)]
        llamada = {"name": herramienta, "args": args, "id": f"{prefijo}-{i}", "type": "tool_call"}
        estado = {"messages": []}
        peticiones.append(
            ToolCallRequest(
                tool_call=llamada,
                tool=None,
                state=estado,
                runtime=ToolRuntime(
                    state=estado,
                    context=contexto,
                    config={"configurable": {"thread_id": "bench"}},
                    stream_writer=lambda _: None,
                    tool_call_id=llamada["id"],
                    store=None,
                ),
            )
        )
    return peticiones


def _cronometrar(politica: Any, peticiones: list[Any]) -> list[float]:
    tiempos = []
    for peticion in peticiones:
        inicio = time.perf_counter_ns()
        politica.necesita_encargado(peticion)
        tiempos.append((time.perf_counter_ns() - inicio) / 1e6)
    return tiempos


def _contar(pool: ConnectionPool, politica: Any, peticiones: list[Any]) -> dict[str, float]:
    with trazar_pool(pool) as traza:
        for peticion in peticiones:
            politica.necesita_encargado(peticion)
    return {
        "sentencias_por_veredicto": traza.sentencias / len(peticiones),
        "viajes_por_veredicto": traza.viajes / len(peticiones),
    }


def medir(url: str, n: int = N_POR_DEFECTO) -> dict[str, Any]:
    """Mide sobre una base ya migrada y con la demo cargada."""
    from agente.bd.pool import KWARGS_CONEXION
    from herramientas import REGISTRO
    from politicas import PoliticaAprobacion

    reglas = REGISTRO.reglas()
    pool = ConnectionPool(url, min_size=1, max_size=1, kwargs=KWARGS_CONEXION, open=False)
    pool.open(wait=True, timeout=10)
    try:
        politica = PoliticaAprobacion(pool=pool, reglas=reglas)
        _cronometrar(politica, _peticiones("calentar", 50))  # prepara las sentencias
        nuevas = _peticiones("crono", n)
        t_nuevas = _cronometrar(politica, nuevas)
        # "guardado": lo relee otro proceso (otra instancia, sin el veredicto recordado),
        # como al reanudar tras una pausa en otro servidor.
        t_guardadas = _cronometrar(PoliticaAprobacion(pool=pool, reglas=reglas), nuevas)
        contadas = _peticiones("traza", n)
        c_nuevas = _contar(pool, politica, contadas)
        c_guardadas = _contar(pool, PoliticaAprobacion(pool=pool, reglas=reglas), contadas)
    finally:
        pool.close()
    return {
        "n": n,
        "nuevo": {
            "p50_ms": round(statistics.median(t_nuevas), 3),
            "p99_ms": round(_percentil(t_nuevas, 99), 3),
            **c_nuevas,
        },
        "guardado": {
            "p50_ms": round(statistics.median(t_guardadas), 3),
            "p99_ms": round(_percentil(t_guardadas, 99), 3),
            **c_guardadas,
        },
    }


def ejecutar(n: int = N_POR_DEFECTO) -> dict[str, Any]:
    """Arranca un PostgreSQL embebido temporal, mide, imprime y devuelve los resultados."""
    from agente.bd.migraciones import migrar
    from agente.bd.pool import KWARGS_CONEXION
    from agente.bd.url import arrancar_embebido
    from agente.demo.carga import cargar_demo

    carpeta = Path(tempfile.mkdtemp(prefix="bench-politica-"))
    servidor = arrancar_embebido(carpeta / "pgdata")
    try:
        url = servidor.get_uri()
        migrar(url)
        with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
            cargar_demo(conexion)
        resultado = medir(url, n)
    finally:
        servidor.cleanup()
        shutil.rmtree(carpeta, ignore_errors=True)
    print(f"Política de aprobación, {n} veredictos por fase (una conexión, PostgreSQL embebido)")
    for fase, rotulo in (("nuevo", "nuevos (calcula y guarda)"), ("guardado", "guardados (relee)")):
        datos = resultado[fase]
        print(
            f"  {rotulo:<26} p50 {datos['p50_ms']:.3f} ms  p99 {datos['p99_ms']:.3f} ms  "
            f"sentencias/veredicto {datos['sentencias_por_veredicto']:.3f}  "
            f"viajes/veredicto {datos['viajes_por_veredicto']:.3f}"
        )
    return resultado


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.politica", description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=N_POR_DEFECTO, help="veredictos por fase")
    ejecutar(parser.parse_args(argv).n)


if __name__ == "__main__":
    main()
