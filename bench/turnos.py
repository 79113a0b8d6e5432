"""Coste por turno: el framework pelado frente al producto, con el modelo offline.

Cuatro casos en un mismo proceso, intercalados (el orden cambia en cada iteración)
para que compartan el ruido de la máquina:

- A: ``create_agent`` pelado con las mismas herramientas e ``InMemorySaver``;
- B: lo mismo con ``PostgresSaver`` y ``durability="sync"``;
- C: el agente y el servicio del producto (``crear_servicio``) sin trazas;
- D: C con trazas hacia un Langfuse de mentira local (``tests/apoyo/receptor_langfuse.py``);
- E: B con el ``CallbackHandler`` de Langfuse tal cual (el mismo SDK, exportador y receptor
  que D): lo que paga cualquiera que trace LangGraph con Langfuse. D/E es lo que el
  producto añade encima (máscara, metadatos, eventos de veredicto y de decisión).

A y B llevan ``HumanInTheLoopMiddleware`` con un ``when`` en Python puro (importe >
60 EUR), lo mínimo que escribiría quien use el framework para pausar el reembolso
grande; sin él no habría pausa que reanudar. Cada conversación usa un cliente nuevo
(sin devoluciones previas) con dos pedidos propios, así los reembolsos no se agotan.
Antes de cada conversación, fuera del cronómetro, se vacían los exportadores de D y E:
si no, sus hilos de fondo compiten por el GIL dentro del turno del caso siguiente.

Después, fuera del cronómetro, una pasada de recuento para B y C: cada sentencia que
el proceso manda por psycopg, con su origen, y los viajes de ida y vuelta leídos del
protocolo (PQtrace) de todas las conexiones del pool.
"""

from __future__ import annotations

import random
import time
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from typing import Any

import psycopg

from bench import util

ESCENARIOS = ("consulta", "reembolso_pequeno", "reembolso_grande", "reanudacion")
ROTULOS = {
    "consulta": "consulta de un pedido",
    "reembolso_pequeno": "reembolso pequeño (sin firma)",
    "reembolso_grande": "reembolso grande hasta la pausa",
    "reanudacion": "reanudación tras aprobar",
}
CASOS = ("A", "B", "C", "D", "E")
DESCRIPCION_CASOS = {
    "A": "create_agent + InMemorySaver",
    "B": "create_agent + PostgresSaver (durability=sync)",
    "C": "producto (crear_servicio), sin trazas",
    "D": "producto con trazas a un receptor Langfuse local",
    "E": "B + CallbackHandler de Langfuse al mismo receptor",
}
LIMITE_BASE = Decimal("60.00")  # el límite por defecto de la tienda, para el `when` de A y B
APROBAR = [{"type": "approve"}]


# --- Los casos -------------------------------------------------------------------------


def agente_pelado(pool, checkpointer, modelo=None):
    """``create_agent`` con las herramientas del producto y la pausa mínima del framework
    (``modelo``: el offline si no se da; ``bench.nucleo`` le pasa uno de OpenAI)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig

    from agente.modelo_offline import ModeloOffline
    from caja.pasarela import PasarelaSimulada
    from herramientas import crear_herramientas
    from nucleo.contexto import ContextoCliente

    def grande(peticion) -> bool:
        return Decimal(str(peticion.tool_call["args"].get("importe", "0"))) > LIMITE_BASE

    return create_agent(
        modelo or ModeloOffline(),
        tools=crear_herramientas(pool=pool, pasarela=PasarelaSimulada(pool=pool)),
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={
                    "reembolsar": InterruptOnConfig(
                        allowed_decisions=["approve", "edit", "reject"], when=grande
                    )
                }
            )
        ],
        context_schema=ContextoCliente,
        checkpointer=checkpointer,
    )


class CasoPelado:
    """A o B: el grafo se invoca directamente, como en un tutorial del framework."""

    def __init__(self, nombre: str, agente) -> None:
        self.nombre = nombre
        self.agente = agente
        self._n = 0

    def _hilo(self) -> str:
        self._n += 1
        return f"bench-{self.nombre}-{time.time_ns()}-{self._n}"

    def _config(self, hilo: str) -> dict:
        return {"configurable": {"thread_id": hilo}}

    def drenar(self) -> None:
        """Sin trazas: nada que vaciar."""

    def turno(self, hilo, entrada, ctx):
        from langchain_core.messages import HumanMessage

        if isinstance(entrada, str):
            entrada = {"messages": [HumanMessage(entrada)]}
        return self.agente.invoke(entrada, self._config(hilo), context=ctx, durability="sync", version="v2")

    def conversacion(self, cliente: util.ClienteBench, medir) -> None:
        from langgraph.types import Command

        ctx = cliente.contexto()
        hilo = self._hilo()
        salida = medir("consulta", lambda: self.turno(hilo, util.texto_consulta(cliente), ctx))
        _comprobar(not salida.interrupts, self.nombre, "la consulta no debe pausar")
        hilo = self._hilo()
        salida = medir(
            "reembolso_pequeno", lambda: self.turno(hilo, util.texto_reembolso_pequeno(cliente), ctx)
        )
        _comprobar(not salida.interrupts and "RE-" in _ultimo(salida), self.nombre,
                   "el reembolso pequeño debe salir sin firma")
        hilo = self._hilo()
        salida = medir(
            "reembolso_grande", lambda: self.turno(hilo, util.texto_reembolso_grande(cliente), ctx)
        )
        _comprobar(bool(salida.interrupts), self.nombre, "el reembolso grande debe pausar")
        resume = Command(resume={salida.interrupts[0].id: {"decisions": APROBAR}})
        salida = medir("reanudacion", lambda: self.turno(hilo, resume, ctx))
        _comprobar("RE-" in _ultimo(salida), self.nombre, "tras aprobar debe haber reembolso")


class CasoLangfuse(CasoPelado):
    """E: B trazado como lo haría quien sigue la guía de Langfuse para LangChain: un cliente
    ``Langfuse`` y su ``CallbackHandler`` en los ``callbacks`` de cada ejecución."""

    CLAVE_PUBLICA = "pk-lf-bench-e"

    def __init__(self, nombre: str, agente, *, receptor: str) -> None:
        super().__init__(nombre, agente)
        from langfuse import Langfuse
        from langfuse.langchain import CallbackHandler
        from opentelemetry.sdk.trace import TracerProvider

        # Su propio TracerProvider, como D: los dos exportadores no se mezclan.
        self.cliente = Langfuse(public_key=self.CLAVE_PUBLICA, secret_key="sk-lf-bench-e",
                                base_url=receptor, tracer_provider=TracerProvider())
        self.manejador = CallbackHandler(public_key=self.CLAVE_PUBLICA)

    def _config(self, hilo: str) -> dict:
        return {"configurable": {"thread_id": hilo}, "callbacks": [self.manejador]}

    def drenar(self) -> None:
        self.cliente.flush()

    def cerrar(self) -> None:
        self.cliente.flush()
        self.cliente.shutdown()


class CasoServicio:
    """C o D: la misma puerta que usan la web y la CLI (``Servicio``)."""

    def __init__(self, nombre: str, servicio) -> None:
        self.nombre = nombre
        self.servicio = servicio

    def drenar(self) -> None:
        self.servicio.trazador.flush()  # apagado (C): no hace nada

    def conversacion(self, cliente: util.ClienteBench, medir) -> None:
        s = self.servicio
        ctx = cliente.contexto()
        hilo = s.iniciar_conversacion(ctx)
        r = medir("consulta", lambda: s.conversar(hilo, util.texto_consulta(cliente), ctx))
        _comprobar(r.estado == "respondida", self.nombre, "la consulta debe responderse")
        hilo = s.iniciar_conversacion(ctx)
        r = medir("reembolso_pequeno", lambda: s.conversar(hilo, util.texto_reembolso_pequeno(cliente), ctx))
        _comprobar(r.estado == "respondida" and "RE-" in r.mensaje_cliente, self.nombre,
                   "el reembolso pequeño debe salir sin firma")
        hilo = s.iniciar_conversacion(ctx)
        r = medir("reembolso_grande", lambda: s.conversar(hilo, util.texto_reembolso_grande(cliente), ctx))
        _comprobar(r.estado == "esperando_aprobacion", self.nombre, "el reembolso grande debe pausar")
        r = medir("reanudacion", lambda: s.decidir(hilo, "enc-talavera", APROBAR))
        _comprobar(r.estado == "respondida" and "RE-" in r.mensaje_cliente, self.nombre,
                   "tras aprobar debe haber reembolso")


def _ultimo(salida) -> str:
    mensajes = salida.value.get("messages", [])
    return str(mensajes[-1].content) if mensajes else ""


def _comprobar(condicion: bool, caso: str, que: str) -> None:
    if not condicion:
        raise RuntimeError(f"bench de turnos, caso {caso}: {que} (el bench mediría otra cosa)")


def ajustes_de(url: str, *, receptor: str | None = None):
    from nucleo.ajustes import Ajustes

    if receptor is None:
        return Ajustes(database_url=url, langfuse_public_key=None, langfuse_secret_key=None)
    return Ajustes(
        database_url=url,
        langfuse_public_key="pk-lf-bench",
        langfuse_secret_key="sk-lf-bench",
        langfuse_host=receptor,
    )


@contextmanager
def casos(url: str, receptor_url: str):
    """Los cuatro casos listos para usar; los cierra al salir."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.postgres import PostgresSaver

    from agente.servicio.fabrica import crear_servicio

    with ExitStack() as pila:
        pool_a = util.abrir_pool(url)
        pila.callback(pool_a.close)
        pool_b = util.abrir_pool(url)
        pila.callback(pool_b.close)
        pool_e = util.abrir_pool(url)
        pila.callback(pool_e.close)
        caso_e = CasoLangfuse("E", agente_pelado(pool_e, PostgresSaver(pool_e)), receptor=receptor_url)
        pila.callback(caso_e.cerrar)
        servicio_c = crear_servicio(ajustes_de(url), url=url)
        pila.callback(servicio_c.cerrar)
        servicio_d = crear_servicio(ajustes_de(url, receptor=receptor_url), url=url)
        pila.callback(servicio_d.cerrar)
        if not servicio_d.trazador.activo:
            raise RuntimeError("caso D: el trazador no se activó con las claves de prueba")
        yield {
            "A": CasoPelado("A", agente_pelado(pool_a, InMemorySaver())),
            "B": CasoPelado("B", agente_pelado(pool_b, PostgresSaver(pool_b))),
            "C": CasoServicio("C", servicio_c),
            "D": CasoServicio("D", servicio_d),
            "E": caso_e,
        }


# --- Cronometrado intercalado ------------------------------------------------------------


def cronometrar(url: str, *, iteraciones: int, calentamiento: int = 3, semilla: int = 7) -> dict:
    total = iteraciones + calentamiento
    with psycopg.connect(url, autocommit=True) as c:
        clientes = {
            caso: util.crear_clientes(c, f"T{caso}-", total, base=90_000_000 + k * 100_000)
            for k, caso in enumerate(CASOS)
        }
    muestras: dict[str, dict[str, list[float]]] = {c: defaultdict(list) for c in CASOS}
    orden = list(CASOS)
    azar = random.Random(semilla)
    with util.ReceptorEnProceso() as receptor:
        with casos(url, receptor.url) as instancias:
            inicio = time.perf_counter()
            for i in range(total):
                azar.shuffle(orden)
                for caso in orden:
                    destino = muestras[caso] if i >= calentamiento else defaultdict(list)
                    # Fuera del cronómetro: lo que D y E exportan en segundo plano (los hilos
                    # del SDK) no debe caer en el turno del caso siguiente.
                    for instancia in instancias.values():
                        instancia.drenar()

                    def medir(escenario, funcion, destino=destino):
                        t0 = time.perf_counter_ns()
                        resultado = funcion()
                        destino[escenario].append((time.perf_counter_ns() - t0) / 1e6)
                        return resultado

                    instancias[caso].conversacion(clientes[caso][i], medir)
            duracion = time.perf_counter() - inicio
            instancias["D"].servicio.trazador.cerrar()  # vacía lo pendiente hacia el receptor
    spans = receptor.peticiones_de_spans()
    resultado: dict[str, Any] = {
        "iteraciones": iteraciones,
        "calentamiento": calentamiento,
        "segundos": round(duracion, 1),
        "peticiones_otlp_recibidas_d": spans,
        "casos": {c: DESCRIPCION_CASOS[c] for c in CASOS},
        "por_escenario": {},
    }
    for escenario in ESCENARIOS:
        fila = {caso: util.resumen(muestras[caso][escenario]) for caso in CASOS}
        b50, b99 = fila["B"]["p50_ms"], fila["B"]["p99_ms"]
        fila["cocientes"] = {
            "C/B_p50": util.cociente(fila["C"]["p50_ms"], b50),
            "D/B_p50": util.cociente(fila["D"]["p50_ms"], b50),
            "B/A_p50": util.cociente(b50, fila["A"]["p50_ms"]),
            "C/B_p99": util.cociente(fila["C"]["p99_ms"], b99),
            "D/B_p99": util.cociente(fila["D"]["p99_ms"], b99),
            "D/E_p50": util.cociente(fila["D"]["p50_ms"], fila["E"]["p50_ms"]),
            "E/B_p50": util.cociente(fila["E"]["p50_ms"], b50),
        }
        resultado["por_escenario"][escenario] = fila
    # Cociente global: suma de medianas de los cuatro turnos (una conversación típica).
    suma = {c: sum(resultado["por_escenario"][e][c]["p50_ms"] for e in ESCENARIOS) for c in CASOS}
    resultado["conversacion_p50_ms"] = {c: round(v, 1) for c, v in suma.items()}
    resultado["cocientes_conversacion"] = {
        "C/B": util.cociente(suma["C"], suma["B"]),
        "D/B": util.cociente(suma["D"], suma["B"]),
        "D/E": util.cociente(suma["D"], suma["E"]),
        "E/B": util.cociente(suma["E"], suma["B"]),
        "B/A": util.cociente(suma["B"], suma["A"]),
    }
    return resultado


# --- Recuento de sentencias ------------------------------------------------------------------

# Por qué C hace cada sentencia que B no hace (clave: prefijo del origen).
MOTIVOS = [
    ("agente/servicio/conversaciones/candados.py", "candado del hilo (advisory lock de sesión): una sola ejecución "
     "por hilo entre procesos; toma y suelta"),
    ("agente/servicio/conversaciones/turnos.py:consulta", "la conversación existe y es de este cliente"),
    ("agente/servicio/conversaciones/turnos.py:conversar", "la conversación es del cliente y ¿hay aprobación "
     "pendiente? (un mensaje nunca llega a un hilo en pausa)"),
    ("agente/servicio/conversaciones/mensajes.py:cerrar_turno", "cierre del turno en una sentencia: respuesta en la "
     "transcripción, estado y actividad de la consulta (y desencolar si hacía falta)"),
    ("agente/servicio/conversaciones/mensajes.py:avisar", "NOTIFY para los SSE de otros procesos"),
    ("agente/servicio/conversaciones/mensajes.py", "transcripción que ve el cliente (mensajes_conversacion)"),
    ("agente/servicio/aprobaciones/cola.py:encolar", "encolar la aprobación (y marcar la consulta en espera)"),
    ("agente/servicio/aprobaciones/cola.py", "cola de aprobaciones"),
    ("agente/servicio/conversaciones/desenlace.py:cerrar_ejecucion", "cierre del turno"),
    ("agente/servicio/conversaciones/desenlace.py:encolar_pausa", "encolar la aprobación"),
    ("agente/servicio/conversaciones/desenlace.py:_registrar_veredictos", "motivos de la política como evento de la "
     "traza (solo con trazas)"),
    ("agente/servicio/personas.py:encargado_activo", "el encargado existe y sigue activo"),
    ("agente/servicio/decisiones/decidir.py:_registrar", "decisión write-ahead: encargado, fila de la cola FOR "
     "UPDATE, validación, marcar decidiendo, insertar decisión"),
    ("agente/servicio/decisiones/decidir.py:marcar_aplicada", "marcar la decisión aplicada"),
    ("agente/servicio/decisiones/validacion.py", "validación de la decisión del encargado"),
    ("politicas/aprobacion.py", "veredicto de la política (calcula y guarda o relee en "
     "evaluaciones_politica)"),
    ("politicas/descripcion.py", "texto de la tarjeta para el encargado"),
    ("checkpointer:get_tuple ← agente/servicio", "get_state() del servicio fuera de la ejecución: "
     "carga y deserializa el checkpoint entero"),
    ("checkpointer:", "checkpoint síncrono de cada paso del grafo ({nodos})"),
    ("herramientas/", "herramienta (la misma en B)"),
]


def motivo_de(origen: str, nodos: str = "") -> str:
    for prefijo, motivo in MOTIVOS:
        if origen.startswith(prefijo):
            return motivo.format(nodos=nodos)
    return ""


def _nodos(agente) -> list[str]:
    return [n for n in agente.get_graph().nodes if not n.startswith("__")]


@contextmanager
def _servicio_trazado(url: str, traza: util.TrazaProtocolo):
    """``crear_servicio`` con el pool trazado (el mismo pool que crearía, más PQtrace)."""
    from agente.servicio import fabrica

    original = fabrica.abrir_pool
    fabrica.abrir_pool = lambda u, max_size=10, **_: util.abrir_pool(
        u, max_size=max_size, configure=traza.configurar
    )
    try:
        servicio = fabrica.crear_servicio(ajustes_de(url), url=url)
    finally:
        fabrica.abrir_pool = original
    try:
        yield servicio
    finally:
        servicio.cerrar()


def contar(url: str, *, conversaciones: int = 4, calentamiento: int = 2) -> dict:
    """Sentencias por turno (con origen) y viajes por turno, para B y C."""
    from langgraph.checkpoint.postgres import PostgresSaver

    total = conversaciones + calentamiento
    with psycopg.connect(url, autocommit=True) as c:
        clientes = {
            caso: util.crear_clientes(c, f"N{caso}-", total, base=95_000_000 + k * 100_000)
            for k, caso in enumerate(("B", "C"))
        }
    registro = util.RegistroSentencias()
    salida: dict[str, Any] = {}
    nodos: dict[str, list[str]] = {}
    with registro.instalar():
        for caso in ("B", "C"):
            traza = util.TrazaProtocolo()
            with ExitStack() as pila:
                if caso == "B":
                    pool = util.abrir_pool(url, configure=traza.configurar)
                    pila.callback(pool.close)
                    instancia = CasoPelado("B", agente_pelado(pool, PostgresSaver(pool)))
                    nodos["B"] = _nodos(instancia.agente)
                else:
                    servicio = pila.enter_context(_servicio_trazado(url, traza))
                    instancia = CasoServicio("C", servicio)
                    nodos["C"] = _nodos(servicio.agente)
                por_escenario: dict[str, Counter] = defaultdict(Counter)
                viajes: dict[str, Counter] = defaultdict(Counter)

                def medir(escenario, funcion, contando, por_escenario=por_escenario,
                          viajes=viajes, traza=traza):
                    if not contando:
                        return funcion()
                    antes = traza.totales()
                    with registro.contar() as cuenta:
                        resultado = funcion()
                    despues = traza.totales()
                    por_escenario[escenario].update(cuenta)
                    for k in despues:
                        viajes[escenario][k] += despues[k] - antes[k]
                    return resultado

                for i in range(total):
                    contando = i >= calentamiento
                    instancia.conversacion(
                        clientes[caso][i], lambda e, f, contando=contando: medir(e, f, contando)
                    )
                traza.cerrar()
            salida[caso] = {
                escenario: {
                    "sentencias_psycopg": round(sum(por_escenario[escenario].values()) / conversaciones, 2),
                    "sentencias_protocolo": round(viajes[escenario]["sentencias"] / conversaciones, 2),
                    "viajes": round(viajes[escenario]["viajes"] / conversaciones, 2),
                    "preparaciones": round(viajes[escenario]["preparaciones"] / conversaciones, 2),
                    "detalle": {
                        f"{origen} | {sentencia}": round(n / conversaciones, 2)
                        for (origen, sentencia), n in sorted(por_escenario[escenario].items())
                    },
                }
                for escenario in ESCENARIOS
            }
    extra = [n for n in nodos["C"] if n not in nodos["B"]]
    texto_nodos = ("nodos de C que B no tiene: " + ", ".join(extra)) if extra else (
        "los mismos nodos que B; más pasos si el modelo o las herramientas se repiten")
    salida["nodos"] = nodos
    salida["diferencias"] = {
        e: diferencias(salida["B"][e]["detalle"], salida["C"][e]["detalle"], texto_nodos)
        for e in ESCENARIOS
    }
    salida["conversaciones"] = conversaciones
    return salida


def diferencias(detalle_b: dict[str, float], detalle_c: dict[str, float], nodos: str = "") -> list[dict]:
    """Lo que C hace de más (o de menos) por turno que B, con el motivo."""
    filas = []
    for clave in sorted(set(detalle_b) | set(detalle_c)):
        b, c = detalle_b.get(clave, 0), detalle_c.get(clave, 0)
        extra = round(c - b, 2)
        if abs(extra) < 0.01:
            continue
        origen, sentencia = clave.split(" | ", 1)
        filas.append({
            "origen": origen, "sentencia": sentencia, "b": b, "c": c, "extra": extra,
            "motivo": motivo_de(origen, nodos),
        })
    filas.sort(key=lambda f: (-f["extra"], f["origen"], f["sentencia"]))
    return filas


def ejecutar(url: str) -> dict:
    iteraciones = util.segun_modo(40, 5)
    print(f"[turnos] {'/'.join(CASOS)} intercalados, {iteraciones} conversaciones por caso…", flush=True)
    tiempos = cronometrar(url, iteraciones=iteraciones, calentamiento=util.segun_modo(3, 1))
    for escenario in ESCENARIOS:
        f = tiempos["por_escenario"][escenario]
        print(f"  {ROTULOS[escenario]:<34} " + "  ".join(
            f"{c} p50 {f[c]['p50_ms']:.1f} p99 {f[c]['p99_ms']:.1f}" for c in CASOS
        ) + "".join(f"  {k} {f['cocientes'][k + '_p50']}" for k in ("C/B", "D/B", "D/E")), flush=True)
    print("[turnos] recuento de sentencias y viajes (B y C)…", flush=True)
    recuento = contar(url, conversaciones=util.segun_modo(4, 2), calentamiento=util.segun_modo(2, 1))
    for escenario in ESCENARIOS:
        b, c = recuento["B"][escenario], recuento["C"][escenario]
        print(f"  {ROTULOS[escenario]:<34} sentencias B {b['sentencias_protocolo']} C "
              f"{c['sentencias_protocolo']}  viajes B {b['viajes']} C {c['viajes']}", flush=True)
    return {"tiempos": tiempos, "recuento": recuento}
