"""Resumen y texto del documento de :mod:`bench.pares` (las líneas de ``docs/rendimiento.md``)."""

from __future__ import annotations

from typing import Any

__all__ = ["SERVIDORES", "TRAZAS", "linea_nivel", "linea_un_cliente", "linea_un_cliente_cpu", "markdown",
           "resumir"]

SERVIDORES = ("producto", "aegra", "langgraph-api")
TRAZAS = "producto+trazas"  # solo en la medida de un cliente (no cabe otro servidor en los niveles)


def _media(valores: list[float | None]) -> float | None:
    v = [x for x in valores if x is not None]
    return round(sum(v) / len(v), 2) if v else None


def resumir(r: dict[str, Any]) -> dict[str, Any]:
    """Por nivel y servidor: la media de las vueltas y su dispersión (máx − mín)."""
    resumen: dict[str, Any] = {}
    for n_conv in r["niveles"]:
        resumen[str(n_conv)] = {}
        for s in SERVIDORES:
            ms = [m for m in r["medidas"] if m["conversaciones"] == n_conv and m["servidor"] == s]
            tps = [m["turnos_por_segundo"] for m in ms]
            resumen[str(n_conv)][s] = {
                "turnos_por_segundo": _media(tps),
                "vueltas": len(ms),
                "dispersion_turnos_por_segundo": round(max(tps) - min(tps), 2) if len(tps) > 1 else None,
                "p50_ms": _media([m["turno"]["p50_ms"] for m in ms]),
                "p99_ms": _media([m["turno"]["p99_ms"] for m in ms]),
                "dispersion_p99_ms": (round(max(p) - min(p), 1) if len(p := [m["turno"]["p99_ms"] for m in ms
                                                                              if m["turno"]["p99_ms"] is not None]) > 1
                                      else None),
                "cpu_ms_por_turno": _media([m["cpu_ms_por_turno"] for m in ms]),
                "sentencias_por_turno": _media([m["sentencias_por_turno"] for m in ms]),
                "errores": sum(m["errores"] for m in ms),
            }
    return resumen


def _coma(valor: float | None, decimales: int) -> str:
    return "—" if valor is None else f"{valor:.{decimales}f}".replace(".", ",")


def linea_nivel(n_conv: int, resumen_nivel: dict[str, Any], latencia_s: float = 1.2) -> str:
    partes = [
        f"{s} {_coma(d['turnos_por_segundo'], 2)} turnos/s (p99 {_coma(d['p99_ms'], 0)} ms, "
        f"CPU {_coma(d['cpu_ms_por_turno'], 1)} ms/turno)"
        for s, d in resumen_nivel.items()
    ]
    return f"- Pares: {n_conv} conversaciones, modelo {_coma(latencia_s, 1)} s: " + ", ".join(partes)


def linea_un_cliente(un_cliente: dict[str, Any]) -> str:
    partes = [f"{s} p50 {_coma(d['p50_ms'], 0)} ms p99 {_coma(d['p99_ms'], 0)} ms"
              for s, d in un_cliente.items() if s != TRAZAS]
    return "- Pares, un cliente, modelo instantáneo: " + ", ".join(partes)


def linea_un_cliente_cpu(un_cliente: dict[str, Any]) -> str:
    """CPU por turno con un cliente, y el producto con trazas (Langfuse a un receptor local)."""
    partes = [f"{s} {_coma(d.get('cpu_ms_por_turno'), 1)} ms/turno" for s, d in un_cliente.items()]
    trazas = un_cliente.get(TRAZAS)
    extra = (f"; producto con trazas p50 {_coma(trazas['p50_ms'], 0)} ms p99 {_coma(trazas['p99_ms'], 0)} ms"
             if trazas else "")
    return "- Pares, un cliente, CPU del servidor: " + ", ".join(partes) + extra


def _cociente(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else _coma(a / b, 2)


def markdown(r: dict[str, Any]) -> list[str]:
    lat = r["latencia_modelo"]["primer_token_s"]
    lineas = [
        "## Pares: el mismo agente en aegra y en langgraph-api (`python -m bench --solo pares`)",
        "",
        f"Los tres servidores a la vez, cada uno en su proceso, conducidos por el mismo guion de "
        f"`langgraph-sdk` (hilo, consulta, reembolso pequeño, reembolso grande que espera firma, firma); "
        f"niveles intercalados, {r['repeticiones'] - len(r.get('sin_medir') or []) // max(len(r['niveles']), 1)} "
        "vuelta(s) medida(s) (la segunda, en orden inverso, si cabe en el tiempo). En cada una, las conversaciones empiezan "
        f"turnos durante {r['duracion_s']:.0f} s (escalonadas en {r['escalonado_s']:.0f} s) y acaban el "
        "que tengan en curso: turnos/s = turnos ÷ tiempo del primer mensaje al final del último turno "
        "(con 2 núcleos un turno a 200 conversaciones dura más que cualquier ventana que quepa en 10 "
        "minutos); p50/p99 de todos los turnos; CPU del proceso servidor (con sus hijos) y sentencias "
        "de PostgreSQL (`pg_stat_statements` de sus bases) por turno, de reposo a reposo. Media de las "
        "vueltas y, entre paréntesis, su dispersión (máx − mín). Código: `bench/pares.py`, `bench/pares_servidores.py`, `bench/pares_grafo.py`; "
        "versiones de los pares en `bench/pares.lock`.",
        "",
        linea_un_cliente(r["un_cliente"]),
        linea_un_cliente_cpu(r["un_cliente"]),
    ]
    lineas += [linea_nivel(int(n), d, lat) for n, d in r["resumen"].items()]
    lineas += ["", "| conversaciones | servidor | turnos/s (dispersión) | p50 ms | p99 ms (dispersión) | "
               "CPU ms/turno | sentencias/turno | errores |", "|---|---|---|---|---|---|---|---|"]
    for n, d in r["resumen"].items():
        for s, v in d.items():
            lineas.append(
                f"| {n} | {s} | {_coma(v['turnos_por_segundo'], 2)} ({_coma(v['dispersion_turnos_por_segundo'], 2)}) | "
                f"{_coma(v['p50_ms'], 0)} | {_coma(v['p99_ms'], 0)} ({_coma(v['dispersion_p99_ms'], 0)}) | "
                f"{_coma(v['cpu_ms_por_turno'], 1)} | {_coma(v['sentencias_por_turno'], 1)} | {v['errores']} |")
    lineas += ["", "Cocientes del producto frente a los pares, misma ejecución:", ""]
    for n, d in r["resumen"].items():
        p, a, lg = d["producto"], d["aegra"], d["langgraph-api"]
        lineas.append(
            f"- {n} conversaciones: turnos/s producto/aegra {_cociente(p['turnos_por_segundo'], a['turnos_por_segundo'])} "
            f"(objetivo ≥ 1,0), p99 producto/aegra {_cociente(p['p99_ms'], a['p99_ms'])} (objetivo ≤ 1,0), "
            f"CPU por turno producto/langgraph-api {_cociente(p['cpu_ms_por_turno'], lg['cpu_ms_por_turno'])} "
            "(objetivo ≤ 1,25).")
    memoria = ", ".join(f"{s} {m['rss_mib']} MiB RSS (pico {m['vmhwm_mib']} MiB)" for s, m in r["memoria_final"].items())
    lineas += ["", f"- Memoria al acabar: {memoria}."]
    if r.get("sin_medir"):
        lineas.append("- Sin segunda vuelta por el límite de tiempo de la pasada: "
                      + ", ".join(f"{x['conversaciones']} conversaciones" for x in r["sin_medir"]) + ".")
    lineas += [f"- Pasada: {r['duracion_total_s']} s (arranque de los tres servidores y sus bases "
               f"{r['arranque_s']} s); carga media de la máquina (1 min) al acabar {r.get('carga_al_acabar', '—')}.", ""]
    return lineas
