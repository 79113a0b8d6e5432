"""Crecimiento: hilos largos, bandeja con millones de pendientes y retención.

- Un hilo de 10, 50 y 200 turnos (consultas de pedido): latencia del turno y bytes de
  checkpoint del hilo, producto (C) y framework pelado (B) intercalados.
- La bandeja de una tienda con 10k, 100k y 1M aprobaciones pendientes repartidas entre
  50 tiendas: filas sintéticas insertadas con ``generate_series`` en SQL, ANALYZE, y
  EXPLAIN (ANALYZE, BUFFERS) para ver qué índice la sirve.
- Retención: tamaño de las tablas del checkpointer antes y después de
  ``agente.retencion.limpiar`` sobre los hilos que dejó el bench de turnos.
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

import psycopg
from psycopg import ClientCursor

from bench import util

# --- Hilos largos ---------------------------------------------------------------------

BYTES_HILO_SQL = """
SELECT
  (SELECT count(*) FROM checkpoints WHERE thread_id = %(t)s) AS filas_checkpoints,
  (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
     FROM checkpoints WHERE thread_id = %(t)s) AS bytes_checkpoints,
  (SELECT count(*) FROM checkpoint_blobs WHERE thread_id = %(t)s) AS filas_blobs,
  (SELECT coalesce(sum(pg_column_size(blob)), 0)
     FROM checkpoint_blobs WHERE thread_id = %(t)s) AS bytes_blobs,
  (SELECT count(*) FROM checkpoint_writes WHERE thread_id = %(t)s) AS filas_writes,
  (SELECT coalesce(sum(pg_column_size(blob)), 0)
     FROM checkpoint_writes WHERE thread_id = %(t)s) AS bytes_writes
"""


def _bytes_hilo(conexion, hilo: str) -> dict[str, int]:
    fila = conexion.execute(BYTES_HILO_SQL, {"t": hilo}).fetchone()
    fila = dict(zip(("filas_checkpoints", "bytes_checkpoints", "filas_blobs", "bytes_blobs",
                     "filas_writes", "bytes_writes"), fila, strict=True))
    fila["bytes_total"] = fila["bytes_checkpoints"] + fila["bytes_blobs"] + fila["bytes_writes"]
    return fila


def hilos_largos(url: str, marcas: tuple[int, ...], ventana: int = 9) -> dict[str, Any]:
    """Un hilo por caso (B y C), turnos intercalados; mide en cada marca."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.servicio.fabrica import crear_servicio
    from bench.turnos import CasoPelado, agente_pelado, ajustes_de

    with psycopg.connect(url, autocommit=True) as c:
        cliente_b, cliente_c = util.crear_clientes(c, "G-", 2, base=97_000_000)
    pool_b = util.abrir_pool(url)
    ajustes = ajustes_de(url)
    # Con el límite por hilo de serie (60 llamadas al modelo) el hilo pasaría a «necesita
    # persona» hacia el turno 30 y se mediría el aviso, no el turno.
    ajustes.max_llamadas_modelo_hilo = 10 * max(marcas)
    servicio = crear_servicio(ajustes, url=url)
    b = CasoPelado("B", agente_pelado(pool_b, PostgresSaver(pool_b)))
    hilo_b = "bench-largo-B"
    ctx_b, ctx_c = cliente_b.contexto(), cliente_c.contexto()
    hilo_c = servicio.iniciar_conversacion(ctx_c)
    tiempos: dict[str, list[float]] = {"B": [], "C": []}
    filas = []
    try:
        with psycopg.connect(url, autocommit=True) as c:
            for turno in range(1, max(marcas) + 1):
                # Alterna pedido para que el historial no sea la misma frase repetida.
                pedido_b = cliente_b.pedido_pequeno if turno % 2 else cliente_b.pedido_grande
                pedido_c = cliente_c.pedido_pequeno if turno % 2 else cliente_c.pedido_grande
                orden = [("B", lambda p=pedido_b: b.turno(hilo_b, f"¿Dónde está mi pedido {p}?", ctx_b)),
                         ("C", lambda p=pedido_c: servicio.conversar(hilo_c, f"¿Dónde está mi pedido {p}?", ctx_c))]
                if turno % 2 == 0:
                    orden.reverse()
                for caso, funcion in orden:
                    t0 = time.perf_counter_ns()
                    salida = funcion()
                    tiempos[caso].append((time.perf_counter_ns() - t0) / 1e6)
                    if caso == "C" and (salida.estado != "respondida" or "P-" not in salida.mensaje_cliente):
                        raise RuntimeError(f"hilo largo, turno {turno}: el producto no respondió a la "
                                           f"consulta ({salida.mensaje_cliente[:120]!r})")
                if turno in marcas:
                    fila: dict[str, Any] = {"turnos": turno}
                    for caso, hilo in (("B", hilo_b), ("C", hilo_c)):
                        ultimos = tiempos[caso][-ventana:]
                        fila[caso] = {
                            "p50_ms_ultimos": round(statistics.median(ultimos), 2),
                            "max_ms_ultimos": round(max(ultimos), 2),
                            **_bytes_hilo(c, hilo),
                        }
                    fila["C/B_p50"] = util.cociente(fila["C"]["p50_ms_ultimos"], fila["B"]["p50_ms_ultimos"])
                    filas.append(fila)
                    print(f"  {turno:>4} turnos  B {fila['B']['p50_ms_ultimos']:.1f} ms "
                          f"{fila['B']['bytes_total'] / 1024:.0f} KiB   C {fila['C']['p50_ms_ultimos']:.1f} ms "
                          f"{fila['C']['bytes_total'] / 1024:.0f} KiB", flush=True)
            # Lo que dejaría la estrategia keep_latest del checkpointer (sin aplicarla al producto).
            # Con el DeltaChannel del producto, PostgresSaver la rechaza (la conversación está en
            # los writes de los checkpoints anteriores); se anota en vez de medirla.
            try:
                PostgresSaver(pool_b).prune([hilo_c], strategy="keep_latest")
                tras_keep_latest = _bytes_hilo(c, hilo_c)
            except NotImplementedError as exc:
                tras_keep_latest = {"no_aplica": str(exc).split(":")[0]}
    finally:
        servicio.cerrar()
        pool_b.close()
    return {"ventana": ventana, "max_llamadas_modelo_hilo_C": ajustes.max_llamadas_modelo_hilo,
            "marcas": filas, "C_tras_prune_keep_latest": tras_keep_latest}


# --- Bandeja del encargado -------------------------------------------------------------

TIENDAS_BANDEJA = 50
CLIENTES_POR_TIENDA = 200

INSERT_TIENDAS_SQL = """
INSERT INTO tiendas (id, nombre)
SELECT 'bq-' || lpad(g::text, 2, '0'), 'Tienda sintética ' || g FROM generate_series(0, %(n)s::int - 1) AS g
"""
INSERT_CLIENTES_BANDEJA_SQL = """
INSERT INTO clientes (id, tienda, nombre)
SELECT 'BQ-' || lpad(t::text, 2, '0') || '-' || lpad(k::text, 4, '0'),
       'bq-' || lpad(t::text, 2, '0'), 'Cliente sintético ' || k
FROM generate_series(0, %(tiendas)s::int - 1) AS t, generate_series(0, %(clientes)s::int - 1) AS k
"""
# Fila g: tienda g % 50, cliente (g / 50) % 200 de esa tienda, creada en las últimas ~72 h.
INSERT_CONSULTAS_BANDEJA_SQL = """
INSERT INTO consultas_asistente (thread_id, cliente_id, tienda, estado, creada, actualizada)
SELECT 'hq-' || g,
       'BQ-' || lpad((g %% %(tiendas)s)::text, 2, '0') || '-'
             || lpad(((g / %(tiendas)s) %% %(clientes)s)::text, 4, '0'),
       'bq-' || lpad((g %% %(tiendas)s)::text, 2, '0'),
       'esperando_aprobacion',
       now() - make_interval(secs => (g * 7919) %% 259200),
       now() - make_interval(secs => (g * 7919) %% 259200)
FROM generate_series(%(desde)s::bigint, %(hasta)s::bigint) AS g
"""
INSERT_APROBACIONES_BANDEJA_SQL = """
INSERT INTO aprobaciones_pendientes
    (thread_id, tienda, cliente_id, interrupt_id, peticion, contexto, creada, trace_id, caduca)
SELECT 'hq-' || g,
       'bq-' || lpad((g %% %(tiendas)s)::text, 2, '0'),
       'BQ-' || lpad((g %% %(tiendas)s)::text, 2, '0') || '-'
             || lpad(((g / %(tiendas)s) %% %(clientes)s)::text, 4, '0'),
       md5(g::text),
       jsonb_build_object(
           'action_requests', jsonb_build_array(jsonb_build_object(
               'name', 'reembolsar',
               'args', jsonb_build_object('pedido', 'P-20260917-0041',
                                          'importe', (61 + g %% 200)::text || '.00',
                                          'motivo', 'gotea'),
               'description', 'Operación pendiente de la firma del encargado')),
           'review_configs', jsonb_build_array(jsonb_build_object(
               'action_name', 'reembolsar', 'allowed_decisions',
               jsonb_build_array('approve', 'edit', 'reject'))),
           'tool_call_ids', jsonb_build_array('tc-' || g)),
       jsonb_build_object('cliente_id', 'BQ-' || lpad((g %% %(tiendas)s)::text, 2, '0'),
                          'tienda', 'bq-' || lpad((g %% %(tiendas)s)::text, 2, '0'),
                          'nombre', 'Cliente sintético', 'canal', 'web'),
       now() - make_interval(secs => (g * 7919) %% 259200),
       md5(g::text),
       now() - make_interval(secs => (g * 7919) %% 259200) + interval '72 hours'
FROM generate_series(%(desde)s::bigint, %(hasta)s::bigint) AS g
"""


INDICES_SECUNDARIOS_SQL = """
SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = 'public' AND tablename IN ('consultas_asistente', 'aprobaciones_pendientes')
  AND indexname NOT LIKE '%%_pkey'
"""
GRANDE = 200_000  # a partir de aquí se cargan sin índices secundarios y se rehacen al final


def _insertar_pendientes(conexion, desde: int, hasta: int) -> float:
    params = {"desde": desde, "hasta": hasta, "tiendas": TIENDAS_BANDEJA, "clientes": CLIENTES_POR_TIENDA}
    t0 = time.perf_counter()
    with conexion.transaction():
        # Filas coherentes por construcción (tiendas y clientes insertados antes): sin los
        # disparadores de las claves foráneas la carga de 1M tarda varias veces menos.
        conexion.execute("SET LOCAL session_replication_role = replica")
        conexion.execute("SET LOCAL synchronous_commit = off")
        indices = conexion.execute(INDICES_SECUNDARIOS_SQL).fetchall() if hasta - desde >= GRANDE else []
        for nombre, _ in indices:  # carga masiva: índices después, con la misma definición
            conexion.execute(f'DROP INDEX "{nombre}"')
        conexion.execute(INSERT_CONSULTAS_BANDEJA_SQL, params)
        conexion.execute(INSERT_APROBACIONES_BANDEJA_SQL, params)
        for _, definicion in indices:
            conexion.execute(definicion)
    conexion.execute("ANALYZE consultas_asistente")
    conexion.execute("ANALYZE aprobaciones_pendientes")
    return time.perf_counter() - t0


def _medir_bandeja(url: str, repeticiones: int, azar: random.Random) -> dict[str, Any]:
    from agente.servicio.aprobaciones import cola
    from agente.servicio.fabrica import crear_servicio
    from bench.turnos import ajustes_de

    tiendas = [f"bq-{i:02d}" for i in range(TIENDAS_BANDEJA)]
    sql_ms: list[float] = []
    servicio_ms: list[float] = []
    servicio = crear_servicio(ajustes_de(url), url=url, modelo=_modelo_nulo())
    try:
        with servicio.pool.connection() as c:
            for _ in range(5):  # prepara la sentencia en esta conexión
                cola.bandeja(c, azar.choice(tiendas), 50)
            for _ in range(repeticiones):
                t0 = time.perf_counter_ns()
                filas = cola.bandeja(c, azar.choice(tiendas), 50)
                sql_ms.append((time.perf_counter_ns() - t0) / 1e6)
            assert len(filas) == 50, "la bandeja sintética debería tener al menos 50 filas por tienda"
            t0 = time.perf_counter_ns()
            cola.bandeja(c, None, 50)
            todas_ms = (time.perf_counter_ns() - t0) / 1e6
        for _ in range(max(repeticiones // 5, 5)):
            t0 = time.perf_counter_ns()
            servicio.aprobaciones_pendientes(azar.choice(tiendas), 50)
            servicio_ms.append((time.perf_counter_ns() - t0) / 1e6)
        registro = util.RegistroSentencias()
        with registro.instalar(), registro.contar() as cuenta:
            servicio.aprobaciones_pendientes(tiendas[0], 50)
        sentencias_servicio = sum(cuenta.values())
    finally:
        servicio.cerrar()
    return {
        "sql_bandeja": util.resumen(sql_ms),
        "servicio_aprobaciones_pendientes": util.resumen(servicio_ms),
        "sentencias_por_listado_servicio": sentencias_servicio,
        "todas_las_tiendas_ms": round(todas_ms, 2),
    }


def _modelo_nulo():
    from agente.modelo_offline import ModeloOffline

    return ModeloOffline()


def _explain(url: str) -> str:
    from agente.servicio.aprobaciones import cola

    with psycopg.connect(url, autocommit=True, cursor_factory=ClientCursor) as c:
        filas = c.execute(
            "EXPLAIN (ANALYZE, BUFFERS) " + cola.SELECT_BANDEJA_SQL,
            {"tiendas": ["bq-07"], "limite": 50},
        ).fetchall()
    return "\n".join(f[0] for f in filas)


def bandeja(url_admin: str, tamanos: tuple[int, ...], repeticiones: int) -> dict[str, Any]:
    url = util.crear_base(url_admin, "bench_bandeja", demo=False)
    azar = random.Random(11)
    filas = []
    explain = ""
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(INSERT_TIENDAS_SQL, {"n": TIENDAS_BANDEJA})
        c.execute(INSERT_CLIENTES_BANDEJA_SQL, {"tiendas": TIENDAS_BANDEJA, "clientes": CLIENTES_POR_TIENDA})
        hecho = 0
        for tamano in tamanos:
            segundos = _insertar_pendientes(c, hecho + 1, tamano)
            hecho = tamano
            medida = _medir_bandeja(url, repeticiones, azar)
            tamano_tabla = c.execute(
                "SELECT pg_total_relation_size('aprobaciones_pendientes')"
            ).fetchone()[0]
            fila = {"pendientes": tamano, "insercion_s": round(segundos, 1),
                    "tamano_tabla_mib": round(tamano_tabla / 2**20, 1), **medida}
            filas.append(fila)
            print(f"  {tamano:>8} pendientes: insertadas en {segundos:.1f} s; bandeja SQL p50 "
                  f"{medida['sql_bandeja']['p50_ms']} ms p99 {medida['sql_bandeja']['p99_ms']} ms; "
                  f"servicio p50 {medida['servicio_aprobaciones_pendientes']['p50_ms']} ms "
                  f"({medida['sentencias_por_listado_servicio']} sentencias); todas las tiendas "
                  f"{medida['todas_las_tiendas_ms']} ms", flush=True)
        explain = _explain(url)
    usa_indice = "aprobaciones_tienda_creada_idx" in explain
    return {"tiendas": TIENDAS_BANDEJA, "repeticiones": repeticiones, "filas": filas,
            "explain_mayor": explain, "usa_indice": usa_indice}


# --- Retención ------------------------------------------------------------------------

TAMANO_TABLAS_SQL = """
SELECT relname AS tabla, pg_total_relation_size(oid) AS bytes_relacion
FROM pg_class WHERE relname = ANY(%(tablas)s) AND relkind = 'r'
"""
TABLAS_CHECKPOINT = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]
TABLAS_NEGOCIO = ["consultas_asistente", "mensajes_conversacion", "aprobaciones_pendientes",
                  "decisiones_encargado", "evaluaciones_politica", "reembolsos", "devoluciones",
                  "pasarela_movimientos", "sustituciones"]


def _foto(conexion) -> dict[str, Any]:
    foto: dict[str, Any] = {}
    tamanos = {f[0]: f[1] for f in conexion.execute(TAMANO_TABLAS_SQL, {"tablas": TABLAS_CHECKPOINT})}
    for tabla in TABLAS_CHECKPOINT:
        columna = "checkpoint" if tabla == "checkpoints" else "blob"
        filas, datos = conexion.execute(
            f"SELECT count(*), coalesce(sum(pg_column_size({columna})), 0) FROM {tabla}"  # noqa: S608
        ).fetchone()
        foto[tabla] = {"filas": filas, "bytes_datos": datos, "bytes_relacion": tamanos.get(tabla)}
    foto["negocio_filas"] = {
        t: conexion.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLAS_NEGOCIO  # noqa: S608
    }
    return foto


def retencion(url: str, *, pendientes: int) -> dict[str, Any]:
    """Envejece las conversaciones del bench de turnos y limpia con ``agente.retencion``."""
    from agente.retencion import limpiar
    from agente.servicio.fabrica import crear_servicio
    from bench.turnos import ajustes_de

    servicio = crear_servicio(ajustes_de(url), url=url)
    try:
        with psycopg.connect(url, autocommit=True) as c:
            clientes = util.crear_clientes(c, "R-", pendientes, base=98_000_000)
        hilos_pendientes = []
        for cliente in clientes:
            ctx = cliente.contexto()
            hilo = servicio.iniciar_conversacion(ctx)
            r = servicio.conversar(hilo, util.texto_reembolso_grande(cliente), ctx)
            assert r.estado == "esperando_aprobacion"
            hilos_pendientes.append(hilo)
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("UPDATE consultas_asistente SET actualizada = now() - interval '40 days'")
            c.execute("VACUUM ANALYZE checkpoints, checkpoint_blobs, checkpoint_writes")
            antes = _foto(c)
            hilos_con_checkpoint = c.execute(
                "SELECT count(DISTINCT thread_id) FROM checkpoints"
            ).fetchone()[0]
            t0 = time.perf_counter()
            informe = limpiar(servicio.pool, dias=30)
            segundos = time.perf_counter() - t0
            despues = _foto(c)
            c.execute("VACUUM checkpoints, checkpoint_blobs, checkpoint_writes")
            tras_vacuum = _foto(c)
            pendientes_intactos = c.execute(
                "SELECT count(DISTINCT thread_id) FROM checkpoints WHERE thread_id = ANY(%s)",
                (hilos_pendientes,),
            ).fetchone()[0]
            fuera_del_servicio = c.execute(
                "SELECT count(DISTINCT thread_id) FROM checkpoints k WHERE NOT EXISTS "
                "(SELECT 1 FROM consultas_asistente c WHERE c.thread_id = k.thread_id)"
            ).fetchone()[0]
    finally:
        servicio.cerrar()
    return {
        "hilos_con_checkpoint_antes": hilos_con_checkpoint,
        "hilos_limpiados": informe.limpiados,
        "hilos_pendientes": len(hilos_pendientes),
        "hilos_pendientes_intactos": pendientes_intactos,
        "hilos_fuera_del_servicio_intactos": fuera_del_servicio,
        "segundos": round(segundos, 2),
        "antes": antes,
        "despues": despues,
        "tras_vacuum": tras_vacuum,
        "negocio_sin_cambios": antes["negocio_filas"] == despues["negocio_filas"],
    }


def ejecutar(url: str, url_admin: str) -> dict[str, Any]:
    marcas = util.segun_modo((10, 50, 200), (10, 30))
    print(f"[crecimiento] hilo largo, marcas {marcas}…", flush=True)
    largos = hilos_largos(url, marcas)
    print("[crecimiento] retención sobre los hilos del bench…", flush=True)
    ret = retencion(url, pendientes=util.segun_modo(10, 3))
    print(f"  {ret['hilos_limpiados']} hilos limpiados en {ret['segundos']} s; pendientes intactos "
          f"{ret['hilos_pendientes_intactos']}/{ret['hilos_pendientes']}; negocio sin cambios "
          f"{ret['negocio_sin_cambios']}", flush=True)
    tamanos = util.segun_modo((10_000, 100_000, 1_000_000), (10_000, 100_000))
    print(f"[crecimiento] bandeja con {tamanos} pendientes…", flush=True)
    bq = bandeja(url_admin, tamanos, repeticiones=util.segun_modo(300, 50))
    return {"hilo_largo": largos, "retencion": ret, "bandeja": bq}
