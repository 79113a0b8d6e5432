"""``agente importar`` de N pedidos generados (JSON lines), como lo ejecutaría una tienda:
tiempo, registros/s y pico de memoria del proceso (``ru_maxrss`` de ``wait4``).

Memoria plana: el mismo fichero con una décima parte de los pedidos da el mismo pico si
la orden va en flujo; si cargara el fichero entero, el pico crecería con él. Se mide
también la segunda pasada del mismo fichero (todo ``sin_cambios``: la idempotencia).

No está en la pasada por defecto de ``python -m bench``: ``python -m bench --solo ingesta``
(``BENCH_INGESTA_PEDIDOS``, por defecto 100.000; con ``BENCH_RAPIDO=1``, 2.000).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import util

__all__ = ["ejecutar", "generar", "markdown"]

TIENDA = "talavera"
SKUS = [("MEN-001", "24.90"), ("MEN-002", "19.90"), ("TEX-001", "15.00"), ("TEX-002", "35.00"),
        ("CAF-002", "29.90"), ("ILU-002", "30.00")]
ESTADOS = ("pendiente", "enviado", "entregado", "entregado", "cancelado")


def generar(ruta: Path, pedidos: int, *, clientes: int | None = None) -> int:
    """Escribe ``clientes`` clientes y ``pedidos`` pedidos (1-3 líneas), línea a línea.
    Devuelve las líneas escritas. Determinista: mismo N, mismo fichero."""
    clientes = clientes or max(1, pedidos // 10)
    base = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    lineas = 0
    with open(ruta, "w", encoding="utf-8") as f:
        for i in range(1, clientes + 1):
            f.write(json.dumps({"tipo": "cliente", "id": f"B-{i:06d}", "nombre": f"Cliente {i}",
                                "email": f"c{i}@bench.example"}) + "\n")
            lineas += 1
        for n in range(pedidos):
            dia, numero = divmod(n, 10_000)
            fecha = base + timedelta(days=dia, minutes=n % 600)
            estado = ESTADOS[n % len(ESTADOS)]
            cuerpo = {
                "tipo": "pedido", "id": f"P-{(base + timedelta(days=dia)):%Y%m%d}-{numero:04d}",
                "cliente_id": f"B-{n % clientes + 1:06d}", "fecha": fecha.isoformat(), "estado": estado,
                "lineas": [{"linea": k + 1, "sku": SKUS[(n + k) % len(SKUS)][0], "unidades": 1 + (n + k) % 3,
                            "precio_unitario": SKUS[(n + k) % len(SKUS)][1]} for k in range(1 + n % 3)],
                "direccion_envio": {"calle": f"Calle Bench {n % 200 + 1}", "codigo_postal": "45600",
                                    "localidad": "Talavera de la Reina"},
                "referencia_pago": f"pi_bench_{n:07d}",
            }
            if estado in ("enviado", "entregado"):
                cuerpo["enviado_en"] = (fecha + timedelta(days=1)).isoformat()
            if estado == "entregado":
                cuerpo["entregado_en"] = (fecha + timedelta(days=3)).isoformat()
            f.write(json.dumps(cuerpo) + "\n")
            lineas += 1
    return lineas


def _importar(url: str, ruta: Path) -> dict[str, Any]:
    """Una ejecución de ``agente importar`` en su proceso: segundos, pico de RSS y su resumen."""
    orden = [sys.executable, "-m", "agente", "importar", str(ruta), "--tienda", TIENDA]
    inicio = time.perf_counter()
    proceso = subprocess.Popen(orden, cwd=util.RAIZ, env={**os.environ, "DATABASE_URL": url},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _pid, estado, uso = os.wait4(proceso.pid, 0)
    segundos = time.perf_counter() - inicio
    salida, errores = proceso.stdout.read(), proceso.stderr.read()
    codigo = os.waitstatus_to_exitcode(estado)
    if codigo != 0:
        raise RuntimeError(f"agente importar terminó con {codigo}:\n{errores[-2000:]}")
    resumen = salida.strip().splitlines()[-1]
    # Lo que la orden dice de sí misma: el tiempo de importar, sin arrancar Python ni migrar.
    propio = re.search(r"\(([0-9.]+) s, ([0-9]+) registros/s\)", resumen)
    return {"segundos": round(segundos, 1), "pico_rss_mib": round(uso.ru_maxrss / 1024, 1),
            "segundos_importar": float(propio.group(1)) if propio else None,
            "registros_s_importar": int(propio.group(2)) if propio else None, "resumen": resumen}


def ejecutar(url_admin: str, pedidos: int | None = None) -> dict[str, Any]:
    pedidos = pedidos or int(os.environ.get("BENCH_INGESTA_PEDIDOS", util.segun_modo(100_000, 2_000)))
    resultado: dict[str, Any] = {"pedidos": pedidos}
    with tempfile.TemporaryDirectory(prefix="bench-ingesta-") as carpeta:
        for etiqueta, n in (("decima", max(1, pedidos // 10)), ("completo", pedidos)):
            ruta = Path(carpeta) / f"{etiqueta}.jsonl"
            lineas = generar(ruta, n)
            url = util.crear_base(url_admin, f"bench_ingesta_{etiqueta}")
            print(f"[ingesta] agente importar de {n} pedidos ({lineas} líneas, "
                  f"{ruta.stat().st_size / 2**20:.1f} MiB)…", flush=True)
            primera = _importar(url, ruta)
            segunda = _importar(url, ruta) if etiqueta == "completo" else None
            filas = util.uno(url, "SELECT count(*) FROM lineas_pedido")
            resultado[etiqueta] = {
                "pedidos": n, "lineas_fichero": lineas, "mib_fichero": round(ruta.stat().st_size / 2**20, 1),
                "filas_lineas_pedido": filas, "primera": primera, "segunda": segunda,
                "registros_s": round(lineas / primera["segundos"]),
            }
    return resultado


def markdown(r: dict[str, Any], tabla) -> list[str]:
    c, d = r["completo"], r["decima"]
    filas = [[f"{x['pedidos']:,}".replace(",", "."), x["lineas_fichero"], x["mib_fichero"],
              x["primera"]["segundos"], x["registros_s"], x["primera"]["segundos_importar"],
              x["primera"]["registros_s_importar"], x["primera"]["pico_rss_mib"],
              (x["segunda"] or {}).get("segundos", "—")] for x in (d, c)]
    return [
        "## Ingesta: `agente importar` (`--solo ingesta`)",
        "",
        "Pedidos generados (1-3 líneas, un cliente por cada 10 pedidos) en JSON lines, importados "
        "con `agente importar` en su propio proceso contra la base de la demo. Registros/s cuenta "
        "clientes y pedidos; «proceso» incluye arrancar Python y comprobar las migraciones, "
        "«importar» es lo que la orden mide de sí misma; la segunda pasada del mismo fichero no cambia nada (todo "
        "`sin_cambios`).",
        "",
        *tabla(["pedidos", "líneas del fichero", "MiB", "s (proceso)", "registros/s (proceso)",
                "s (importar)", "registros/s (importar)", "pico RSS MiB", "segunda pasada s"], filas),
        f"Memoria plana: el pico con {d['pedidos']:,} pedidos es {d['primera']['pico_rss_mib']} MiB y con "
        f"{c['pedidos']:,} es {c['primera']['pico_rss_mib']} MiB (la orden lee en flujo y confirma por "
        "tramos de 500).".replace(",", "."),
        "",
    ]
