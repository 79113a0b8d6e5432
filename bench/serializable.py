"""La política serializable en modo largo: muchas semillas de historias concurrentes.

Lo mismo que ``tests/integracion/test_historias_concurrentes.py`` (el generador, la
ejecución por rondas con barreras y el comprobador de ``tests/apoyo/historias_concurrentes.py``),
con más semillas y más operaciones por semilla (también conversaciones enteras con el
agente, modelo offline), todas en una base de la demo (cada semilla
con sus clientes y pedidos nuevos). Informa del ritmo (operaciones/s, efectos/s), de qué
parte de lo que pidió el chat acabó en revisión (en el ``when`` o al escribir) y de cada
violación que encuentre el comprobador (tiene que ser ninguna).

No está en la pasada por defecto de ``python -m bench``: ``python -m bench --solo serializable``
(``BENCH_SERIALIZABLE_SEMILLAS``, por defecto 200; ``BENCH_SERIALIZABLE_OPERACIONES``, 24 por
semilla; con ``BENCH_RAPIDO=1``, 20 semillas).
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench import util
from tests.apoyo.historias_concurrentes import comprobar, ejecutar, preparar, resumen

__all__ = ["ejecutar_tanda", "markdown", "tanda"]

HILOS = 6
CLIENTES = 2


def ejecutar_tanda(url_admin: str, semillas: int | None = None, operaciones: int | None = None) -> dict[str, Any]:
    """La parte del bench: una base de la demo nueva y la tanda entera sobre ella."""
    semillas = semillas or int(os.environ.get("BENCH_SERIALIZABLE_SEMILLAS", util.segun_modo(200, 20)))
    operaciones = operaciones or int(os.environ.get("BENCH_SERIALIZABLE_OPERACIONES", 24))
    url = util.crear_base(url_admin, "bench_serializable")
    print(f"[serializable] {semillas} semillas × {operaciones} operaciones, rondas de {HILOS} hilos…", flush=True)
    return tanda(url, semillas, operaciones)


def tanda(url: str, semillas: int, operaciones: int) -> dict[str, Any]:
    """``semillas`` historias de ``operaciones`` sobre la base ``url`` (con la demo), comprobadas."""
    from agente.servicio.fabrica import crear_servicio
    from caja.pasarela import PasarelaSimulada
    from tests.apoyo.fabricas import ajustes_prueba

    escenarios, violaciones = [], {}
    inicio = time.perf_counter()
    pool = util.abrir_pool(url, max_size=HILOS * 2)
    servicio = crear_servicio(ajustes_prueba(url), url=url, pasarela=PasarelaSimulada(pool=pool),
                              pausa_reintentos=0.01)
    try:
        for semilla in range(1, semillas + 1):
            escenario = ejecutar(pool, url, preparar(url, semilla, clientes=CLIENTES, operaciones=operaciones,
                                                     hilos=HILOS, chat=True), servicio)
            escenarios.append(escenario)
            if encontradas := comprobar(url, escenario):
                violaciones[semilla] = encontradas
                print(f"[serializable] semilla {semilla}: {encontradas}", flush=True)
    finally:
        servicio.cerrar()
        pool.close()
    return {**resumen(escenarios), "operaciones_por_semilla": operaciones, "hilos": HILOS,
            "clientes_por_semilla": CLIENTES, "segundos_total": round(time.perf_counter() - inicio, 1),
            "violaciones": violaciones}


def markdown(r: dict[str, Any], tabla) -> list[str]:
    d = r["desenlaces"]
    filas = [[r["semillas"], r["operaciones"], r["segundos"], r["operaciones_s"], r["efectos_s"],
              f"{100 * r['parte_a_revision']:.1f} %", f"{100 * r['parte_firma_al_escribir']:.1f} %",
              len(r["violaciones"])]]
    return [
        "## Política serializable: historias concurrentes (`--solo serializable`)",
        "",
        f"{r['semillas']} semillas de {r['operaciones_por_semilla']} operaciones al azar (vales, reenvíos, "
        f"devoluciones, cancelaciones, cambios de estado por la API de la tienda y conversaciones con el "
        f"agente) de {r['clientes_por_semilla']} "
        f"clientes nuevos, en rondas de {r['hilos']} hilos que deciden a la vez y escriben a la vez. Los segundos "
        "son los de las rondas (sin preparar ni comprobar); «a revisión» es la parte de lo que pidió el chat "
        "que acabó esperando firma (en el `when` o al escribir).",
        "",
        *tabla(["semillas", "operaciones", "s", "operaciones/s", "efectos/s", "a revisión", "firma al escribir",
                "semillas con violaciones"], filas),
        "Desenlaces: " + ", ".join(f"{k} {v}" for k, v in d.items()) + ".",
        "",
    ]
