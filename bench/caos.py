"""El modelo del caos en modo largo: muchas más conversaciones que en ``make test``.

Lo mismo que ``tests/integracion/test_caos.py`` (las estrategias de ``tests/apoyo/caos.py``,
la ejecución por ``Servicio.conversar`` y las garantías de ``tests/apoyo/caos_invariantes.py``)
sobre una base de la demo nueva, con ejemplos al azar (no los fijos de la prueba). Informa
del ritmo, de lo que pasó (efectos, firmas, pausas, llamadas a pedidos ajenos, afirmaciones
falsas leídas) y de la primera garantía rota, si la hay (tiene que ser ninguna).

No está en la pasada por defecto de ``python -m bench``: ``python -m bench --solo caos``
(``BENCH_CAOS_EJEMPLOS``, por defecto 2000; con ``BENCH_RAPIDO=1``, 100).
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench import util

__all__ = ["ejecutar_tanda", "markdown"]


def ejecutar_tanda(url_admin: str, ejemplos: int | None = None) -> dict[str, Any]:
    from tests.apoyo.caos_invariantes import abrir_banco, propiedad

    ejemplos = ejemplos or int(os.environ.get("BENCH_CAOS_EJEMPLOS", util.segun_modo(2000, 100)))
    url = util.crear_base(url_admin, "bench_caos")
    print(f"[caos] {ejemplos} conversaciones del modelo del caos…", flush=True)
    banco = abrir_banco(url)
    inicio, rota = time.perf_counter(), None
    try:
        propiedad(banco, ejemplos, derandomize=False)
    except AssertionError as exc:
        rota = str(exc)[-4000:]
        print(f"[caos] garantía rota:\n{rota}", flush=True)
    finally:
        banco.servicio.cerrar()
    segundos = time.perf_counter() - inicio
    return {"ejemplos": ejemplos, "segundos": round(segundos, 1),
            "conversaciones_s": round(banco.cuenta.get("conversaciones", 0) / segundos, 2),
            "cuenta": banco.cuenta, "garantia_rota": rota}


def markdown(r: dict[str, Any], tabla) -> list[str]:
    c = r["cuenta"]
    claves = ("conversaciones", "turnos", "efectos", "efectos_firmados", "pausas", "firmas", "retenidos",
              "llamadas_a_pedidos_ajenos", "afirmaciones_leidas")
    return [
        "## El modelo del caos en modo largo (`--solo caos`)",
        "",
        f"{r['ejemplos']} conversaciones al azar del modelo del caos por el servicio real "
        f"({r['segundos']} s, {r['conversaciones_s']} conversaciones/s). Garantía rota: "
        f"{'ninguna' if not r['garantia_rota'] else 'SÍ (ver bench/resultados-parcial.json)'}.",
        "",
        *tabla(list(claves), [[c.get(k, 0) for k in claves]]),
    ]
