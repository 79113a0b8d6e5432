"""``python -m bench`` (``make bench``): todos los benchmarks, resultados y documento.

Escribe ``bench/resultados.json`` y la parte generada de ``docs/rendimiento.md`` (entre
las marcas ``<!-- generado -->``); el resumen de antes de la marca de inicio se escribe a mano
y se conserva.

``BENCH_RAPIDO=1`` hace una pasada de humo (1-2 min) con iteraciones mínimas y la deja en
``bench/resultados-rapido.json``. ``--solo turnos,carga`` ejecuta solo esas partes
(``bench/resultados-parcial.json``). Ninguna de las dos reescribe el documento salvo con
``--documento``. Nunca usa ``DATABASE_URL`` ni ``./.agente``: arranca su propio
PostgreSQL embebido en una carpeta temporal.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import util

PARTES = ("politica", "turnos", "concurrencia", "crecimiento", "carga", "capacidad", "pares")
# Fuera de la pasada por defecto (solo con --solo): no alargan ``make bench``.
EXTRA = ("ingesta", "serializable", "caos")
RESULTADOS = util.RAIZ / "bench" / "resultados.json"
DOCUMENTO = util.RAIZ / "docs" / "rendimiento.md"
INICIO_GENERADO = "<!-- generado: inicio (python -m bench reescribe hasta la marca de fin) -->"
FIN_GENERADO = "<!-- generado: fin -->"
# La sección de pares va entre sus propias marcas: ``--solo pares`` la reescribe sin tocar lo demás.
PARES = util.RAIZ / "bench" / "pares.json"
INICIO_PARES = "<!-- pares: inicio (python -m bench --solo pares reescribe hasta su marca de fin) -->"
FIN_PARES = "<!-- pares: fin -->"

# sin_modelo_p99_ms: turno menos modelo con el proceso a ≤ 70 % de un núcleo (bench.nucleo lo busca).
# Los objetivos del producto son cocientes frente a los pares (bench.pares); C/B, D/B, D/E y la
# capacidad se dan como cifras medidas, sin objetivo (issue 40). La bandeja sí lo conserva.
OBJETIVOS = {"bandeja_p99_ms": 20.0}
SIN_MODELO_P99_MS = 250.0  # el nivel de referencia de bench.nucleo (70 % de un núcleo), no un objetivo


def _silenciar() -> None:
    import langfuse.logger  # noqa: F401  (fija su nivel al importarse: después se sube)

    # El SDK avisa en cada llamada de que no reconoce el nombre del modelo offline.
    logging.getLogger("langfuse").setLevel(logging.ERROR)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def medir(partes: tuple[str, ...]) -> dict[str, Any]:
    resultados: dict[str, Any] = {"modo": "rapido" if util.rapido() else "completo"}
    inicio = time.perf_counter()
    if "politica" in partes:
        from bench import politica

        print("[politica] bench.politica.ejecutar()…", flush=True)
        resultados["politica"] = politica.ejecutar(util.segun_modo(2000, 200))
    with util.postgres_temporal() as url_admin:
        resultados["maquina"] = util.maquina(url_admin)
        url = util.crear_base(url_admin, "bench")
        if "turnos" in partes:
            from bench import turnos

            resultados["turnos"] = turnos.ejecutar(url)
        if "concurrencia" in partes:
            from bench import concurrencia

            resultados["concurrencia"] = concurrencia.ejecutar(url)
        if "crecimiento" in partes:
            from bench import crecimiento

            resultados["crecimiento"] = crecimiento.ejecutar(url, url_admin)
        if "carga" in partes:
            from bench import carga

            resultados["carga"] = carga.ejecutar(url_admin)
        if "capacidad" in partes:
            from bench import capacidad

            resultados["capacidad"] = capacidad.ejecutar(url_admin)
        if "ingesta" in partes:
            from bench import ingesta

            resultados["ingesta"] = ingesta.ejecutar(url_admin)
        if "serializable" in partes:
            from bench import serializable

            resultados["serializable"] = serializable.ejecutar_tanda(url_admin)
        if "caos" in partes:
            from bench import caos

            resultados["caos"] = caos.ejecutar_tanda(url_admin)
    if "pares" in partes:  # su propio PostgreSQL (con pg_stat_statements) y sus servidores
        from bench import pares

        print("[pares] producto, aegra y langgraph-api con el mismo guion…", flush=True)
        resultados["pares"] = pares.ejecutar()
        if not util.rapido():
            PARES.write_text(json.dumps(resultados["pares"], indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
            escribir_pares(resultados["pares"])
    resultados["duracion_s"] = round(time.perf_counter() - inicio, 1)
    resultados.setdefault("maquina", {})
    resultados["maquina"]["carga_1min_al_acabar"] = round(os.getloadavg()[0], 2)
    return resultados


# --- Documento ------------------------------------------------------------------------------


def _miles(n: int) -> str:
    return f"{n:,}".replace(",", ".")


def _ms(valor: float | None) -> str:
    return "—" if valor is None else f"{valor:.1f}"


def _veredicto(valor: float | None, objetivo: float) -> str:
    if valor is None:
        return "—"
    if valor <= objetivo:
        return f"✅ {valor:.2f} (objetivo ≤ {objetivo})"
    return f"❌ {valor:.2f} (objetivo ≤ {objetivo}: se pasa un {100 * (valor / objetivo - 1):.0f} %)"


def _cifra(valor: float | None) -> str:
    """Una cifra medida sin objetivo (los objetivos son frente a los pares: sección «Pares»)."""
    return "—" if valor is None else f"{valor:.2f} (medido; el objetivo es frente a los pares)"


def _tabla(cabecera: list[str], filas: list[list[Any]]) -> list[str]:
    lineas = ["| " + " | ".join(cabecera) + " |", "|" + "|".join("---" for _ in cabecera) + "|"]
    lineas += ["| " + " | ".join(str(c) for c in fila) + " |" for fila in filas]
    return lineas + [""]


def _seccion_maquina(r: dict) -> list[str]:
    m = r["maquina"]
    v = m["versiones"]
    return [
        "## Dónde y cuándo",
        "",
        f"- Ejecución: **{m['fecha']}**, modo `{r['modo']}`, duración total {r.get('duracion_s', '—')} s.",
        f"- Máquina: `{m['host']}`, {m['so']}, **{m['nproc']} CPU** ({m['cpu']}), "
        f"{m['memoria_gib']} GiB de RAM. Carga media (1 min) al empezar {m['carga_1min_al_empezar']}, "
        f"al acabar {m.get('carga_1min_al_acabar', '—')}: la máquina es compartida y ruidosa, por eso "
        "se dan medianas, p99 y cocientes medidos en el mismo proceso, no tiempos sueltos.",
        f"- PostgreSQL {m['postgresql']}; `pg_stat_statements`: {m['pg_stat_statements']}.",
        f"- Python {m['python']}; " + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        "- Modelo: `agente.modelo_offline.ModeloOffline` (reglas, no es un LLM): lo medido es el "
        "coste del framework y del producto, sin la latencia de un proveedor.",
        "",
    ]


def _seccion_turnos(r: dict) -> list[str]:
    from bench.turnos import CASOS, ESCENARIOS, ROTULOS

    t = r["turnos"]["tiempos"]
    lineas = [
        "## 1. Coste por turno: framework frente a producto",
        "",
        f"{t['iteraciones']} conversaciones por caso (más {t['calentamiento']} de calentamiento), los "
        f"{len(CASOS)} casos intercalados en un proceso y en orden aleatorio en cada iteración. Antes de cada conversación, fuera del cronómetro, "
        "se vacían los exportadores de D y E (su trabajo de fondo no cae en el turno de otro caso). "
        "Milisegundos.",
        "",
    ]
    lineas += [f"- **{c}**: {t['casos'][c]}" for c in CASOS] + [""]
    filas = []
    for e in ESCENARIOS:
        f = t["por_escenario"][e]
        filas.append([ROTULOS[e]] + [f"{_ms(f[c]['p50_ms'])} / {_ms(f[c]['p99_ms'])}" for c in CASOS]
                     + [f["cocientes"]["B/A_p50"], f["cocientes"]["C/B_p50"], f["cocientes"]["D/B_p50"],
                        f["cocientes"].get("D/E_p50", ""), f["cocientes"]["C/B_p99"], f["cocientes"]["D/B_p99"]])
    conv = t["conversacion_p50_ms"]
    coc = t["cocientes_conversacion"]
    filas.append(["**conversación (suma de medianas)**"] + [f"**{conv[c]}**" for c in CASOS]
                 + [f"**{coc['B/A']}**", f"**{coc['C/B']}**", f"**{coc['D/B']}**", f"**{coc.get('D/E', '')}**",
                    "", ""])
    lineas += _tabla(["turno", *(f"{c} p50 / p99" for c in CASOS),
                      "B/A p50", "C/B p50", "D/B p50", "D/E p50", "C/B p99", "D/B p99"], filas)
    lineas += [
        f"- C/B (conversación, medianas): {_cifra(coc['C/B'])}",
        f"- D/B (conversación, medianas): {_cifra(coc['D/B'])}",
        f"- D/E (conversación, medianas; E = B con el CallbackHandler de Langfuse tal cual): "
        f"{_cifra(coc['D/E']) if 'D/E' in coc else 'sin medir'}",
        f"- El receptor local (otro proceso) recibió {t['peticiones_otlp_recibidas_d']} peticiones OTLP del "
        "caso D: las trazas se exportan en un hilo de fondo del mismo proceso, así que su coste de CPU "
        "cuenta, pero no la espera de la red.",
        "",
    ]
    return lineas


def _seccion_variantes() -> list[str]:
    """Lo que darían los cambios propuestos (``python -m bench.variantes``), si se ha medido."""
    ruta = util.RAIZ / "bench" / "variantes.json"
    if not ruta.exists():
        return []
    v = json.loads(ruta.read_text(encoding="utf-8"))
    filas = [[caso, v["conversacion_p50_ms"][caso], v["frente_a_B"][caso]] for caso in v["conversacion_p50_ms"]]
    return [
        "### Segunda medida y variantes (`python -m bench.variantes`)",
        "",
        f"Medido aparte ({v['fecha']}; {v['conversaciones']} conversaciones por caso, intercaladas como "
        "arriba; no lo repite `make bench`): una segunda medida de los cocientes y lo que daría quitar el "
        "cerrojo de instancia del `PostgresSaver` (*sin-cerrojo*) con un solo turno a la vez. Suma de "
        "medianas de los cuatro turnos, ms, y cociente frente a B:",
        "",
        *_tabla(["caso", "conversación p50 ms", "frente a B"], filas),
    ]


def _seccion_sentencias(r: dict) -> list[str]:
    from bench.turnos import ESCENARIOS, ROTULOS

    n = r["turnos"]["recuento"]
    lineas = [
        "## 2. Sentencias y viajes a PostgreSQL por turno (B frente a C)",
        "",
        f"Pasada aparte, sin cronómetro, de {n['conversaciones']} conversaciones por caso. *Sentencias "
        "psycopg*: cada `execute` (un `executemany` cuenta una por fila; `BEGIN … COMMIT` de "
        "`conexion.transaction()` cuenta una). *Protocolo*: mensajes Execute/Query y viajes de ida y "
        "vuelta (Sync/Query) leídos con PQtrace de todas las conexiones del pool; las escrituras del "
        "checkpointer van en modo pipeline (varias sentencias, un viaje). Con `prepare_threshold=0` la "
        "primera vez que una conexión usa una sentencia cuesta un viaje más (columna *prep.*).",
        "",
    ]
    filas = []
    for e in ESCENARIOS:
        b, c = n["B"][e], n["C"][e]
        filas.append([ROTULOS[e], b["sentencias_psycopg"], c["sentencias_psycopg"],
                      b["sentencias_protocolo"], c["sentencias_protocolo"], b["viajes"], c["viajes"],
                      b["preparaciones"], c["preparaciones"]])
    lineas += _tabla(["turno", "B psycopg", "C psycopg", "B protocolo", "C protocolo", "B viajes",
                      "C viajes", "B prep.", "C prep."], filas)
    lineas += ["### Lo que C hace de más, sentencia a sentencia", ""]
    for e in ESCENARIOS:
        lineas += [f"**{ROTULOS[e]}**", ""]
        filas = [[f"`{d['origen']}`", f"`{d['sentencia'][:80]}`", d["b"], d["c"],
                  f"{d['extra']:+g}", d["motivo"]] for d in n["diferencias"][e]]
        lineas += _tabla(["origen", "sentencia", "B", "C", "C−B", "por qué"], filas)
    return lineas


def _seccion_politica(r: dict) -> list[str]:
    p = r["politica"]
    filas = [[fase, _ms(p[fase]["p50_ms"]), _ms(p[fase]["p99_ms"]),
              f"{p[fase]['sentencias_por_veredicto']:.3f}", f"{p[fase]['viajes_por_veredicto']:.3f}"]
             for fase in ("nuevo", "guardado")]
    return [
        "## 3. Política de aprobación (`bench.politica`)",
        "",
        f"{p['n']} veredictos por fase sobre una conexión (PostgreSQL embebido propio). *nuevo*: calcula "
        "y guarda; *guardado*: relee el veredicto estable.",
        "",
        *_tabla(["fase", "p50 ms", "p99 ms", "sentencias/veredicto", "viajes/veredicto"], filas),
    ]


def _seccion_concurrencia(r: dict) -> list[str]:
    from bench.concurrencia import VARIANTES

    c = r["concurrencia"]
    filas = []
    for f in c["filas"]:
        comp = f["compartido"]
        filas.append([f["hilos"]] + [f"{f[v]['turnos_por_segundo']} ({_ms(f[v]['p50_ms'])})" for v in VARIANTES]
                     + [f["por_peticion/compartido"], f["sin_cerrojo/compartido"],
                        f"{comp.get('saver_cerrojo_ocupado_pct')} %", comp.get("saver_espera_ms_por_turno"),
                        sum(f[v]["errores"] for v in VARIANTES)])
    pa = c["pool_agotado"]
    claves = [k for k in pa if k.endswith(f"pool_{pa['pool_max']}")]
    return [
        "## 4. Concurrencia dentro de un worker: el cerrojo del PostgresSaver",
        "",
        f"N hilos de un proceso ejecutan conversaciones completas ({c['conversaciones_por_hilo']} por hilo, "
        f"{c['rondas']} ronda(s), mediana; pool de {c['pool_max']} conexiones). Turnos por segundo "
        "(p50 del turno en ms). *compartido* es lo que hace hoy `crear_servicio`.",
        "",
        *_tabla(["hilos", "compartido", "saver por petición", "sin cerrojo", "por petición / compartido",
                 "sin cerrojo / compartido", "cerrojo ocupado al pedirlo", "espera ms/turno", "errores"],
                filas),
        f"Turnos a la vez frente a conexiones del pool (pool de {pa['pool_max']}, espera máxima "
        f"{pa['espera_pool_s']} s):",
        "",
        *[f"- {k.replace('_', ' ')}: errores {pa[k]['errores'] or 'ninguno'}, {pa[k]['segundos']} s" for k in claves],
        "",
    ]


def _seccion_crecimiento(r: dict) -> list[str]:
    g = r["crecimiento"]
    h = g["hilo_largo"]
    filas = []
    for f in h["marcas"]:
        filas.append([f["turnos"], _ms(f["B"]["p50_ms_ultimos"]), _ms(f["C"]["p50_ms_ultimos"]), f["C/B_p50"],
                      f"{f['B']['bytes_total'] / 1024:.0f}", f"{f['C']['bytes_total'] / 1024:.0f}",
                      f["C"]["filas_checkpoints"], f["C"]["filas_blobs"], f["C"]["filas_writes"]])
    kl = h["C_tras_prune_keep_latest"]
    lineas = [
        "## 5. Crecimiento",
        "",
        "### Un hilo largo",
        "",
        f"Un hilo por caso, turnos de consulta intercalados B/C; latencia = mediana de los últimos "
        f"{h['ventana']} turnos antes de la marca; bytes = `pg_column_size` de los datos del hilo en "
        "`checkpoints` (checkpoint + metadata), `checkpoint_blobs` y `checkpoint_writes`. C con "
        f"`AGENTE_MAX_LLAMADAS_MODELO_HILO={h.get('max_llamadas_modelo_hilo_C')}` (con las 60 de serie el "
        "hilo pasa a «necesita persona» hacia el turno 30).",
        "",
        *_tabla(["turnos", "B p50 ms", "C p50 ms", "C/B", "B KiB", "C KiB", "C filas checkpoints",
                 "C filas blobs", "C filas writes"], filas),
        (f"`PostgresSaver.prune([hilo], strategy=\"keep_latest\")` no se aplica al hilo de C: «{kl['no_aplica']}» "
         "(el canal messages del producto es un DeltaChannel: `bench.delta`)." if "no_aplica" in kl else
         f"Tras `PostgresSaver.prune([hilo], strategy=\"keep_latest\")` el hilo de C queda en "
         f"{kl['bytes_total'] / 1024:.0f} KiB ({kl['filas_checkpoints']} checkpoint, {kl['filas_blobs']} blobs, "
         f"{kl['filas_writes']} writes)."),
        "",
    ]
    b = g["bandeja"]
    filas = []
    for f in b["filas"]:
        filas.append([_miles(f["pendientes"]), f["insercion_s"], f["tamano_tabla_mib"],
                      _ms(f["sql_bandeja"]["p50_ms"]), _ms(f["sql_bandeja"]["p99_ms"]),
                      _ms(f["servicio_aprobaciones_pendientes"]["p50_ms"]),
                      _ms(f["servicio_aprobaciones_pendientes"]["p99_ms"]),
                      f["sentencias_por_listado_servicio"], _ms(f["todas_las_tiendas_ms"])])
    mayor = b["filas"][-1]
    lineas += [
        "### Bandeja del encargado",
        "",
        f"Aprobaciones pendientes sintéticas repartidas entre {b['tiendas']} tiendas (INSERT … SELECT "
        "generate_series, después ANALYZE). Página de 50 de una tienda al azar, "
        f"{b['repeticiones']} repeticiones: `cola.SELECT_BANDEJA_SQL` sola y "
        "`Servicio.aprobaciones_pendientes` completa. *Todas*: `SELECT_BANDEJA_TODAS_SQL` "
        "(`agente aprobaciones` sin `--tienda`), una vez.",
        "",
        *_tabla(["pendientes", "carga s", "tabla MiB", "SQL p50 ms", "SQL p99 ms", "servicio p50 ms",
                 "servicio p99 ms", "sentencias por listado", "todas ms"], filas),
        f"- p99 de la SQL con {_miles(mayor['pendientes'])} pendientes: "
        f"{_veredicto(mayor['sql_bandeja']['p99_ms'], OBJETIVOS['bandeja_p99_ms'])} ms. "
        f"Índice `aprobaciones_tienda_creada_idx` en el plan: {'sí' if b['usa_indice'] else 'NO'}.",
        "",
        f"`EXPLAIN (ANALYZE, BUFFERS)` con {_miles(mayor['pendientes'])} pendientes:",
        "",
        "```",
        b["explain_mayor"],
        "```",
        "",
    ]
    t = g["retencion"]
    filas = []
    for tabla in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
        filas.append([tabla] + [f"{t[m][tabla]['filas']} / {t[m][tabla]['bytes_datos'] / 2**20:.1f} / "
                                f"{t[m][tabla]['bytes_relacion'] / 2**20:.1f}"
                                for m in ("antes", "despues", "tras_vacuum")])
    lineas += [
        "### Retención (`agente limpiar`)",
        "",
        f"Las conversaciones de este bench envejecidas 40 días y `limpiar(pool, dias=30)`: "
        f"{t['hilos_limpiados']} hilos limpiados en {t['segundos']} s; {t['hilos_pendientes_intactos']} de "
        f"{t['hilos_pendientes']} hilos que esperan firma intactos; {t['hilos_fuera_del_servicio_intactos']} "
        "hilos sin conversación del servicio (casos A/B) sin tocar; tablas de negocio sin cambios: "
        f"{'sí' if t['negocio_sin_cambios'] else 'NO'}. Filas / MiB de datos / MiB de la relación:",
        "",
        *_tabla(["tabla", "antes", "después", "tras VACUUM"], filas),
        "El borrado no encoge el fichero de la tabla: PostgreSQL reutiliza el espacio liberado "
        "(autovacuum); solo `VACUUM FULL`/`pg_repack` lo devuelve al sistema.",
        "",
    ]
    return lineas


def _seccion_carga(r: dict) -> list[str]:
    lineas = ["## 6. Carga: dos servidores que solo comparten PostgreSQL", ""]
    for nombre, c in r["carga"].items():
        conf = ", ".join(f"`{k}={v}`" for k, v in c["configuracion"].items())
        inv = c["invariantes"]
        lineas += [
            f"### {nombre}",
            "",
            f"`{c['orden_servidor']}` ×{c['servidores']} (puertos distintos, misma base), {conf}; "
            f"turnos simultáneos que admite cada proceso: {c.get('ejecuciones_simultaneas_por_servidor') or 'sin límite'}. "
            f"{c['clientes']} clientes simultáneos sin pausa entre mensajes (cada petición al servidor "
            f"siguiente) y {c['encargados']} encargados; {c['duracion_clientes_s']} s.",
            "",
            f"- **{c['turnos']} turnos de cliente, {c['turnos_por_segundo']} turnos/s** (más "
            f"{c['estados_http'].get('POST decision', {}).get('200', 0)} decisiones aplicadas); "
            f"errores: **{c['errores']}**"
            + (f" (primera traza del log: `{c['primera_traza']}`)" if c["primera_traza"] else "")
            + "; conflictos esperados (dos encargados con la misma aprobación: 409 si la otra decisión "
            f"está en curso, 404 si ya terminó): {c['conflictos_esperados'] or 'ninguno'}.",
            f"- Peticiones por servidor: {c['peticiones_por_servidor']}.",
            "- Pico de memoria (VmHWM) por servidor tras la carga: "
            + ", ".join(f"{m['vmhwm_mib']} MiB" for m in c["memoria_despues"])
            + " (al arrancar: " + ", ".join(f"{m['vmhwm_mib']} MiB" for m in c["memoria_antes"]) + ").",
            "",
        ]
        lineas += _tabla(["endpoint", "n", "p50 ms", "p99 ms"],
                         [[k, v["n"], _ms(v["p50_ms"]), _ms(v["p99_ms"])] for k, v in c["por_endpoint"].items()])
        lineas += _invariantes_md(inv, c["recuentos"])
        if "tras_reconciliar" in c:
            lineas += ["Tras `agente reconciliar`:", ""]
            lineas += _invariantes_md(c["tras_reconciliar"]["invariantes"], c["tras_reconciliar"]["recuentos"])
    return lineas


def _invariantes_md(inv: dict, recuentos: dict) -> list[str]:
    p = inv["pasarela"]
    return [
        f"Invariantes ({'todo en orden' if inv['todo_en_orden'] else '**ALGUNO FALLA**'}): "
        f"`agente auditoria` sin firma = {inv['auditoria_sin_firma']} (código {inv['auditoria_codigo_salida']}); "
        f"pausas sin fila en la cola = {inv['pausas_sin_fila_en_cola']}; hilos pausados ni decididos ni en "
        f"cola = {inv['hilos_pausados_ni_decididos_ni_en_cola']}; decisiones sin aplicar = "
        f"{inv['decisiones_sin_aplicar']}; reembolsos dobles por tool_call_id = "
        f"{inv['reembolsos_dobles_por_tool_call_id']}; pasarela {p['movimientos']} movimientos / "
        f"{p['importe_movimientos']} EUR frente a {p['emitidos']} reembolsos emitidos / "
        f"{p['importe_emitidos']} EUR ({p['pendientes']} pendientes). Recuentos: {recuentos}.",
        "",
    ]


def markdown(r: dict) -> str:
    lineas = [
        INICIO_GENERADO,
        "",
        "## Cómo reproducir",
        "",
        "```bash",
        "make bench                 # todo (≈20 min en 2 CPU con los pares); escribe bench/resultados.json y este documento",
        "BENCH_RAPIDO=1 make bench  # humo (1-2 min): bench/resultados-rapido.json, no toca este documento",
        ".venv/bin/python -m bench --solo turnos,carga   # partes sueltas: bench/resultados-parcial.json",
        ".venv/bin/python -m bench --solo ingesta        # agente importar de 100.000 pedidos (no va por defecto)",
        ".venv/bin/python -m bench --solo serializable   # historias concurrentes contra la política (no va por defecto)",
        ".venv/bin/python -m bench --solo caos           # el modelo del caos, 2000 conversaciones (no va por defecto)",
        ".venv/bin/python -m bench --solo pares          # producto, aegra y langgraph-api (≈6-10 min; reescribe su sección)",
        ".venv/bin/python -m bench.variantes             # segunda medida y variantes (bench/variantes.json)",
        ".venv/bin/python -m bench.perfil B C D          # perfiles con py-spy (pip install py-spy)",
        ".venv/bin/python -m bench.transacciones         # µs de una sentencia, transacción, pipeline, savepoint",
        ".venv/bin/python -m bench.serializacion         # lo que cuesta la política serializable por turno (bench/serializacion.json)",
        ".venv/bin/python -m bench.delta                 # A/B del canal messages (DeltaChannel) en un hilo largo (bench/delta.json)",
        "```",
        "",
        "El bench arranca su propio PostgreSQL embebido en una carpeta temporal; no toca "
        "`./.agente` ni `DATABASE_URL`.",
        "",
    ]
    lineas += _seccion_maquina(r)
    if "turnos" in r:
        lineas += _seccion_turnos(r) + _seccion_variantes() + _seccion_sentencias(r)
    if "politica" in r:
        lineas += _seccion_politica(r)
    if "concurrencia" in r:
        lineas += _seccion_concurrencia(r)
    if "crecimiento" in r:
        lineas += _seccion_crecimiento(r)
    if "carga" in r:
        lineas += _seccion_carga(r)
    if "capacidad" in r:
        from bench import capacidad

        lineas += capacidad.markdown(r["capacidad"], _tabla, _invariantes_md, SIN_MODELO_P99_MS)
    if "ingesta" in r:
        from bench import ingesta

        lineas += ingesta.markdown(r["ingesta"], _tabla)
    if "serializable" in r:
        from bench import serializable

        lineas += serializable.markdown(r["serializable"], _tabla)
    if "caos" in r:
        from bench import caos

        lineas += caos.markdown(r["caos"], _tabla)
    lineas += _seccion_pares(r.get("pares"))
    lineas += [FIN_GENERADO]
    return "\n".join(lineas)


def _seccion_pares(r: dict | None) -> list[str]:
    from bench import pares

    if r is None and PARES.exists():
        r = json.loads(PARES.read_text(encoding="utf-8"))
    return [INICIO_PARES, "", *(pares.markdown(r) if r else ["(sin medir)", ""]), FIN_PARES, ""]


def escribir_pares(r: dict, ruta: Path = DOCUMENTO) -> None:
    """Solo la sección de pares (entre sus marcas) del documento."""
    texto = ruta.read_text(encoding="utf-8")
    if INICIO_PARES not in texto or FIN_PARES not in texto:
        texto = texto.replace(FIN_GENERADO, "\n".join(_seccion_pares(r)) + "\n" + FIN_GENERADO)
    else:
        antes, resto = texto.split(INICIO_PARES, 1)
        texto = antes + "\n".join(_seccion_pares(r)).rstrip("\n") + resto.split(FIN_PARES, 1)[1]
    ruta.write_text(texto, encoding="utf-8")


def escribir_documento(r: dict, ruta: Path = DOCUMENTO) -> None:
    generado = markdown(r)
    if ruta.exists() and INICIO_GENERADO in (texto := ruta.read_text(encoding="utf-8")) and FIN_GENERADO in texto:
        antes = texto.split(INICIO_GENERADO, 1)[0]
        despues = texto.split(FIN_GENERADO, 1)[1]
        ruta.write_text(antes + generado + despues, encoding="utf-8")
        return
    ruta.parent.mkdir(parents=True, exist_ok=True)
    ruta.write_text(
        "# Rendimiento\n\nNúmeros medidos en esta máquina por `make bench`; el resumen escrito a "
        "mano va antes de la parte generada.\n\n## Resumen (escrito a mano)\n\n(por escribir)\n\n"
        + generado + "\n",
        encoding="utf-8",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--solo", help=f"partes separadas por comas: {', '.join(PARTES)}; "
                                       f"fuera de la pasada por defecto: {', '.join(EXTRA)}")
    parser.add_argument("--documento", action="store_true", help="reescribir el documento aun con --solo")
    parser.add_argument("--desde-json", action="store_true",
                        help="no medir: regenerar el documento desde bench/resultados.json")
    args = parser.parse_args(argv)
    if args.desde_json:
        escribir_documento(json.loads(RESULTADOS.read_text(encoding="utf-8")))
        print(f"Documento regenerado: {DOCUMENTO.relative_to(util.RAIZ)}")
        return
    partes = tuple(p.strip() for p in args.solo.split(",")) if args.solo else PARTES
    desconocidas = set(partes) - set(PARTES) - set(EXTRA)
    if desconocidas:
        parser.error(f"partes desconocidas: {', '.join(sorted(desconocidas))}")
    _silenciar()
    resultados = medir(partes)
    # Solo una pasada completa y entera es «la» medida: las demás no pisan ni el JSON ni el documento.
    oficial = not args.solo and not util.rapido()
    if oficial:
        destino = RESULTADOS
    elif util.rapido():
        destino = RESULTADOS.with_name("resultados-rapido.json")
    else:
        destino = RESULTADOS.with_name("resultados-parcial.json")
    destino.write_text(json.dumps(resultados, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    print(f"Resultados: {destino.relative_to(util.RAIZ)} ({resultados['duracion_s']} s)")
    if oficial or args.documento:
        escribir_documento(resultados)
        print(f"Documento: {DOCUMENTO.relative_to(util.RAIZ)}")


if __name__ == "__main__":
    sys.exit(main())
