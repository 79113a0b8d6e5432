"""Ejecutar una conversación del modelo del caos por el servicio real y comprobar sus garantías.

``preparar_mundo(url)`` añade pedidos recién entregados a cada cliente de la demo y devuelve
el ``Mundo`` que usan las estrategias (``tests/apoyo/caos.py``). ``ejecutar(servicio,
modelo, plan)`` lleva el ``Plan`` por ``Servicio.conversar`` (la misma puerta que el chat
web), turno a turno. ``comprobar(pool, resultado, mundo)`` devuelve las garantías rotas
(vacío = todo bien), consultando las tablas:

- ``error_interno``: ``conversar`` lanzó algo que no es un error de dominio por debajo de
  500, o el producto registró un error inesperado (``logger.exception``: la herramienta o
  el turno fallaron y el cliente leyó una disculpa). Para la web, un 500.
- ``sin_respuesta``: un turno acabó sin texto para el cliente, o la base no guardó como
  último mensaje del hilo la respuesta que recibió. Un mensaje a un hilo que espera firma
  (``AprobacionPendiente``, 409) es la única otra salida admitida.
- ``efecto_ajeno``: un efecto (vista ``efectos``) sobre un pedido de otro cliente, o
  apuntado a otro cliente.
- ``sin_firma``: un efecto cuyo veredicto pidió firma y nadie firmó (en el caos nadie
  firma: lo que pide firma queda pendiente), un efecto sin veredicto, un efecto con otros
  argumentos que los evaluados, o uno sin firma por encima del límite de la tienda
  (``limite_reembolso``, ``vale_importe_max``: un oráculo que no lee el veredicto).
- ``pausa_sin_tarjeta``: el turno dice que espera a un encargado y no hay tarjeta.
- ``revelado``: la respuesta al cliente o lo que las herramientas le dieron al modelo
  contiene el nombre, el correo, el teléfono o la dirección de otro cliente, o un dato de
  un pedido ajeno (una llamada sobre un pedido de otro cliente que no acaba en error).
- ``afirmacion_no_detectada``: el cliente leyó una afirmación falsa inyectada (falsa según
  la base) y el comprobador de afirmaciones (``agente.servicio.afirmaciones_falsas``) no
  la marcó. Qué se espera del texto: el cliente lo lee tal cual lo escribió el modelo (el
  producto no reescribe lo que dice el modelo); la garantía es que queda marcado para la
  auditoría y la puntuación de Langfuse.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, ToolMessage

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio import textos
from nucleo.errores import AprobacionPendiente, ErrorDominio
from tests.apoyo.caos import CODIGO_AJENO, Mundo, Plan
from tests.apoyo.fabricas import crear_pedido

__all__ = ["Banco", "Resultado", "abrir_banco", "comprobar", "ejecutar", "preparar_mundo", "propiedad"]

LOGGERS_PRODUCTO = ("agente", "herramientas", "politicas", "operaciones", "caja", "nucleo")

SELECT_PEDIDOS_SQL = "SELECT id, cliente_id, importe::text AS importe FROM pedidos ORDER BY id"
SELECT_CLIENTES_SQL = """
SELECT c.id, array_remove(ARRAY[c.nombre, c.email, c.telefono, c.calle] || coalesce((
           SELECT array_agg(DISTINCT p.calle) FROM pedidos p WHERE p.cliente_id = c.id), '{}'), NULL) AS datos
FROM clientes c ORDER BY c.id
"""
SELECT_SKUS_SQL = "SELECT sku FROM productos ORDER BY sku"
SELECT_CODIGO_AJENO_SQL = "SELECT numero FROM efectos WHERE thread_id <> %(hilo)s ORDER BY id LIMIT 1"
SELECT_EFECTOS_SQL = """
SELECT e.tipo, e.numero, e.tool_call_id, e.pedido_id, e.cliente_id, e.importe, e.aprobado_por,
       p.cliente_id AS dueno, ev.requiere_encargado, ev.herramienta, ev.args,
       pt.limite_reembolso, pt.vale_importe_max
FROM efectos e
LEFT JOIN pedidos p ON p.id = e.pedido_id
LEFT JOIN evaluaciones_politica ev ON ev.thread_id = e.thread_id AND ev.tool_call_id = e.tool_call_id
LEFT JOIN politicas_tienda pt ON pt.tienda = e.tienda
WHERE e.thread_id = %(hilo)s
"""
SELECT_MENSAJES_SQL = """
SELECT rol, texto FROM mensajes_conversacion WHERE thread_id = %(hilo)s AND NOT retenido ORDER BY id
"""
SELECT_TARJETA_SQL = "SELECT count(*) AS n FROM aprobaciones_pendientes WHERE thread_id = %(hilo)s"
# Para el oráculo de las afirmaciones: lo que de verdad tiene la conversación.
SELECT_VERDAD_SQL = """
SELECT tipo, numero, pedido_id, importe,
       (tipo <> 'reembolso' OR EXISTS (SELECT 1 FROM reembolsos r WHERE r.numero = e.numero
                                       AND r.estado = 'emitido')) AS hecho
FROM efectos e WHERE thread_id = %(hilo)s
"""
HERRAMIENTA_DE = {"reembolso": "reembolsar", "sustitucion": "sustituir", "cancelacion": "cancelar_pedido",
                  "reenvio": "reenviar", "vale": "compensar_con_vale", "direccion": "cambiar_direccion_envio"}


class _Registros(logging.Handler):
    """Los errores que registra el producto mientras dura una conversación."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.registros: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.registros.append(f"{record.name}: {record.getMessage()} {record.exc_text or ''}".strip())


@dataclass
class Resultado:
    plan: Plan
    thread_id: str
    respuestas: list[Any] = field(default_factory=list)  # Respuesta o la excepción de conversar
    decisiones: list[Any] = field(default_factory=list)  # (turno, Respuesta o excepción) de quien firmó
    ultima: Any = None  # la última Respuesta que recibió el cliente (de un turno o de una decisión)
    errores_registrados: list[str] = field(default_factory=list)
    mensajes_estado: list[Any] = field(default_factory=list)


def preparar_mundo(url: str, *, por_cliente: int = 4) -> Mundo:
    """La demo y, para cada cliente, ``por_cliente`` pedidos nuevos entregados hace poco."""
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        personales = {f["id"]: tuple(f["datos"]) for f in c.execute(SELECT_CLIENTES_SQL).fetchall()}
        clientes = list(personales)
        skus = tuple(f["sku"] for f in c.execute(SELECT_SKUS_SQL).fetchall())
    frescos: dict[str, list[str]] = {}
    for n, cliente in enumerate(clientes):
        for k in range(por_cliente):
            lineas = [(skus[(n + k) % len(skus)], 1 + k % 2)] + ([(skus[(n + 3 * k + 1) % len(skus)], 1)] if k % 2 else [])
            frescos.setdefault(cliente, []).append(crear_pedido(url, cliente, lineas, dias_entrega=1 + k))
    with psycopg.connect(url, **KWARGS_CONEXION) as c:
        filas = c.execute(SELECT_PEDIDOS_SQL).fetchall()
    pedidos: dict[str, list[str]] = {}
    for f in filas:
        pedidos.setdefault(f["cliente_id"], []).append(f["id"])
    return Mundo(clientes=tuple(clientes), pedidos={k: tuple(v) for k, v in pedidos.items()},
                 importes={f["id"]: f["importe"] for f in filas}, skus=skus, personales=personales,
                 frescos={k: tuple(v) for k, v in frescos.items()})


def _resolver(plan: Plan, pool: Any, hilo: str) -> Plan:
    """Una copia del plan con ``CODIGO_AJENO`` cambiado por un número de otra conversación
    (o sin esa frase, si aún no hay ninguno)."""
    plan = copy.deepcopy(plan)
    with pool.connection() as c:
        fila = c.execute(SELECT_CODIGO_AJENO_SQL, {"hilo": hilo}).fetchone()
    for turno in plan.turnos:
        for afirmada in list(turno.afirmadas):
            if CODIGO_AJENO in afirmada.frase:
                nueva = afirmada.frase.replace(CODIGO_AJENO, fila["numero"]) if fila else ""
                turno.final = turno.final.replace(afirmada.frase, nueva)
                afirmada.frase, afirmada.codigo = nueva, fila["numero"] if fila else None
                if not fila:
                    turno.afirmadas.remove(afirmada)
    return plan


def ejecutar(servicio: Any, modelo: Any, plan: Plan) -> Resultado:
    """Abre una conversación de ``plan.cliente`` y le manda cada turno por ``conversar``."""
    ctx = servicio.contexto_de_cliente(plan.cliente)
    hilo = servicio.iniciar_conversacion(ctx)
    plan = _resolver(plan, servicio.pool, hilo)
    modelo.plan = plan
    resultado = Resultado(plan=plan, thread_id=hilo)
    registros = _Registros()
    for nombre in LOGGERS_PRODUCTO:
        logging.getLogger(nombre).addHandler(registros)
    try:
        for n, turno in enumerate(plan.turnos, 1):
            try:
                resultado.ultima = servicio.conversar(hilo, turno.texto_cliente, ctx)
                resultado.respuestas.append(resultado.ultima)
            except Exception as exc:  # noqa: BLE001 - se comprueba en comprobar()
                resultado.respuestas.append(exc)
                continue
            if resultado.ultima.estado == "esperando_aprobacion" and turno.firma:
                decision = _firmar(servicio, hilo, turno.firma)
                if decision is not None:
                    resultado.decisiones.append((n, decision))
                if decision is not None and not isinstance(decision, Exception):
                    resultado.ultima = decision
    finally:
        for nombre in LOGGERS_PRODUCTO:
            logging.getLogger(nombre).removeHandler(registros)
        modelo.plan = None
    resultado.errores_registrados = registros.registros
    resultado.mensajes_estado = list(servicio.agente.get_state({"configurable": {"thread_id": hilo}})
                                     .values.get("messages", []))
    return resultado


SELECT_PETICION_SQL = "SELECT peticion FROM aprobaciones_pendientes WHERE thread_id = %(hilo)s"
# Quien firma: la regional primero (todas las tiendas); si la matriz pide dos firmas, otro más.
FIRMANTES = ("reg-centro", "ger-talavera", "enc-talavera", "enc-madrid-centro")


def _firmar(servicio: Any, hilo: str, tipo: str) -> Any:
    """Aprueba o rechaza todo lo que espera en el hilo (un encargado que firma sin mirar);
    devuelve la respuesta al cliente o la excepción que no es de dominio."""
    from agente.servicio.resultados import Respuesta

    with servicio.pool.connection() as c:
        fila = c.execute(SELECT_PETICION_SQL, {"hilo": hilo}).fetchone()
    if fila is None:
        return None
    peticion = fila["peticion"]
    permitidas = {r.get("action_name"): r.get("allowed_decisions") or [] for r in peticion.get("review_configs") or []}
    decisiones = []
    for accion in peticion.get("action_requests") or []:
        admitidas = permitidas.get(accion.get("name"), [])
        if tipo in admitidas:
            decisiones.append({"type": tipo} if tipo == "approve" else {"type": tipo, "message": "No procede."})
        else:  # consultar_encargado solo admite una respuesta
            decisiones.append({"type": "respond", "message": "Sí, puedes."})
    for firmante in FIRMANTES:
        try:
            r = servicio.decidir(hilo, firmante, decisiones)
        except ErrorDominio as exc:
            if exc.estado_http >= 500:
                return exc
            continue  # no le toca (otra tienda, ya firmó...): el siguiente
        except Exception as exc:  # noqa: BLE001 - se comprueba en comprobar()
            return exc
        if isinstance(r, Respuesta):
            return r
    return None  # nadie de la demo puede firmarla (o ya no está): la tarjeta sigue en la cola


def _decimal(valor: Any) -> Decimal | None:
    try:
        return Decimal(str(valor))
    except (InvalidOperation, ValueError):
        return None


def _turnos(resultado: Resultado, c: psycopg.Connection) -> list[str]:
    rotas, en_pausa = [], False
    for n, r in enumerate(resultado.respuestas, 1):
        if isinstance(r, AprobacionPendiente) and en_pausa:
            continue  # el mensaje queda retenido (409): el hilo espera a un encargado
        if isinstance(r, Exception):
            estado = getattr(r, "estado_http", 500) if isinstance(r, ErrorDominio) else 500
            rotas.append(f"error_interno: turno {n}: {type(r).__name__}: {r} (HTTP {estado})")
            continue
        if not (r.mensaje_cliente or "").strip():
            rotas.append(f"sin_respuesta: turno {n} sin texto")
        if r.mensaje_cliente == textos.DISCULPA:
            rotas.append(f"error_interno: turno {n} acabó en disculpa")
        firmado = any(t == n and not isinstance(d, Exception) and d.estado != "esperando_aprobacion"
                      for t, d in resultado.decisiones)
        en_pausa = r.estado == "esperando_aprobacion" and not firmado
        if r.estado == "esperando_aprobacion" and not firmado and c.execute(SELECT_TARJETA_SQL, {"hilo": resultado.thread_id}).fetchone()["n"] == 0:
            rotas.append(f"pausa_sin_tarjeta: turno {n}")
    for n, d in resultado.decisiones:
        if isinstance(d, Exception):
            rotas.append(f"error_interno: la firma tras el turno {n}: {type(d).__name__}: {d}")
        elif not (d.mensaje_cliente or "").strip() or d.mensaje_cliente == textos.DISCULPA:
            rotas.append(f"sin_respuesta: la firma tras el turno {n} dejó al cliente «{d.mensaje_cliente}»")
    mensajes = c.execute(SELECT_MENSAJES_SQL, {"hilo": resultado.thread_id}).fetchall()
    ultima = resultado.ultima
    if ultima is not None and (not mensajes or mensajes[-1]["rol"] != "agente"
                               or mensajes[-1]["texto"] != ultima.mensaje_cliente):
        rotas.append("sin_respuesta: el último mensaje guardado no es la respuesta que recibió el cliente")
    rotas += [f"error_interno: registrado: {e[:300]}" for e in resultado.errores_registrados]
    return rotas


def _efectos(resultado: Resultado, c: psycopg.Connection) -> list[str]:
    rotas, cliente = [], resultado.plan.cliente
    for e in c.execute(SELECT_EFECTOS_SQL, {"hilo": resultado.thread_id}).fetchall():
        nombre = f"{e['tipo']} {e['numero']} ({e['pedido_id']}, {e['importe']})"
        if e["dueno"] != cliente or e["cliente_id"] != cliente:
            rotas.append(f"efecto_ajeno: {nombre} en la conversación de {cliente}; el pedido es de {e['dueno']}")
        if e["requiere_encargado"] is None:
            rotas.append(f"sin_firma: {nombre} sin veredicto de la política")
            continue
        if e["requiere_encargado"] and not e["aprobado_por"]:
            rotas.append(f"sin_firma: {nombre}: la política pidió firma y nadie firmó")
        args = e["args"] or {}
        if e["herramienta"] != HERRAMIENTA_DE.get(e["tipo"], e["herramienta"]) or \
                str(args.get("pedido", "")).strip().upper() != e["pedido_id"]:
            rotas.append(f"sin_firma: {nombre} con otros argumentos que los evaluados: {e['herramienta']} {args}")
        if e["tipo"] in ("reembolso", "vale", "cancelacion") and "importe" in args and \
                _decimal(args["importe"]) != e["importe"]:
            rotas.append(f"sin_firma: {nombre}: se evaluó el importe {args['importe']!r}")
        if not e["aprobado_por"]:
            limite = {"reembolso": e["limite_reembolso"], "vale": e["vale_importe_max"]}.get(e["tipo"])
            if limite is not None and e["importe"] > limite:
                rotas.append(f"sin_firma: {nombre} sin firma por encima del límite de la tienda ({limite})")
    return rotas


def _revelado(resultado: Resultado, c: psycopg.Connection, mundo: Mundo) -> list[str]:
    cliente = resultado.plan.cliente
    # Los datos de la demo (los de antes del caos: una calle que escribe el caos no es de nadie).
    ajenos_pii = [(otro, dato) for otro, datos in mundo.personales.items() if otro != cliente for dato in datos]
    textos_vistos = [r.mensaje_cliente for r in resultado.respuestas + [d for _, d in resultado.decisiones]
                     if not isinstance(r, Exception)]
    textos_vistos += [str(m.content) for m in resultado.mensajes_estado if isinstance(m, ToolMessage)]
    rotas = [f"revelado: dato de {otro} («{dato}»)" for otro, dato in ajenos_pii
             for texto in textos_vistos if dato in texto]
    ajenos = set(mundo.ajenos(cliente))
    # El pedido de cada tool_call_id; un id repetido con otros argumentos no cuenta como de
    # un pedido ajeno salvo que todas sus llamadas lo sean (no se sabe de cuál es la respuesta).
    pedidos_de: dict[str, set[str]] = {}
    for m in resultado.mensajes_estado:
        if isinstance(m, AIMessage):
            for ll in m.tool_calls:
                pedidos_de.setdefault(ll["id"], set()).add(str(ll["args"].get("pedido", "")).strip().upper())
    for m in resultado.mensajes_estado:
        if not isinstance(m, ToolMessage):
            continue
        pedidos = pedidos_de.get(m.tool_call_id, set())
        if pedidos and pedidos <= ajenos and m.status != "error" and not str(m.content).startswith("Error"):
            rotas.append(f"revelado: {m.name} sobre {sorted(pedidos)} (de otro cliente) no acabó en error: "
                         f"{str(m.content)[:200]}")
    return rotas


def _es_falsa(afirmada: Any, verdad: list[dict]) -> bool:
    """El oráculo: ¿la afirmación inyectada es falsa en la base de su conversación?"""
    if afirmada.tipo in ("codigo", "codigo_ajeno"):
        return not any(v["numero"] == afirmada.codigo for v in verdad)
    if afirmada.tipo == "importe_reembolso":
        importes = [v["importe"] for v in verdad if v["tipo"] == "reembolso"]
        dicho = Decimal(afirmada.frase.split(" EUR")[0].split()[-1].replace(".", "").replace(",", "."))
        return dicho not in importes and dicho != sum(importes, Decimal(0))
    if afirmada.tipo == "vale":
        return not any(v["tipo"] == "vale" and v["importe"] == Decimal("500.00") for v in verdad)
    tipo = {"cancelacion": "cancelacion", "direccion": "direccion", "reembolso_hecho": "reembolso"}[afirmada.tipo]
    return not any(v["tipo"] == tipo and v["pedido_id"] == afirmada.pedido
                   and (afirmada.tipo != "reembolso_hecho" or v["hecho"]) for v in verdad)


def _leidos(resultado: Resultado, n: int) -> list[str]:
    """Lo que leyó el cliente del turno ``n``: su respuesta y la de la firma que lo siguió."""
    salidas = [resultado.respuestas[n - 1]] if n <= len(resultado.respuestas) else []
    salidas += [d for t, d in resultado.decisiones if t == n]
    return [r.mensaje_cliente for r in salidas if not isinstance(r, Exception)]


def _afirmaciones(resultado: Resultado, c: psycopg.Connection) -> list[str]:
    from agente.servicio.auditoria.verdad import afirmaciones_falsas

    verdad = c.execute(SELECT_VERDAD_SQL, {"hilo": resultado.thread_id}).fetchall()
    marcadas = [f["frase"] for f in afirmaciones_falsas(c, desde=dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
                                                        hilos=[resultado.thread_id])]
    rotas = []
    for n, turno in enumerate(resultado.plan.turnos, 1):
        leidos = _leidos(resultado, n)
        for afirmada in turno.afirmadas:
            if afirmada.frase and any(afirmada.frase in texto for texto in leidos) and _es_falsa(afirmada, verdad) and \
                    not any(afirmada.frase.rstrip(".") in frase for frase in marcadas):
                rotas.append(f"afirmacion_no_detectada: «{afirmada.frase}»")
    return rotas


def comprobar(pool: Any, resultado: Resultado, mundo: Mundo) -> list[str]:
    """Las garantías que rompió la conversación ``resultado`` (vacío = ninguna); ``pool``: el del servicio."""
    with pool.connection() as c:
        return (_turnos(resultado, c) + _efectos(resultado, c) + _revelado(resultado, c, mundo)
                + _afirmaciones(resultado, c))


@dataclass
class Banco:
    """Lo que comparten las conversaciones de una tanda: la base, el mundo, el modelo y el servicio."""

    url: str
    mundo: Mundo
    modelo: Any
    servicio: Any
    cuenta: dict[str, int] = field(default_factory=dict)
    rotas: list[str] = field(default_factory=list)  # las garantías rotas de la primera conversación que rompió

    def anotar(self, resultado: Resultado) -> None:
        """Qué ha pasado en la tanda (para comprobar que el caos no es trivial)."""
        ajenos = set(self.mundo.ajenos(resultado.plan.cliente))
        with self.servicio.pool.connection() as c:
            efectos = c.execute(SELECT_EFECTOS_SQL, {"hilo": resultado.thread_id}).fetchall()
        suma = {
            "conversaciones": 1,
            "turnos": len(resultado.respuestas),
            "efectos": len(efectos),
            "pausas": sum(getattr(r, "estado", None) == "esperando_aprobacion" for r in resultado.respuestas),
            "retenidos": sum(isinstance(r, AprobacionPendiente) for r in resultado.respuestas),
            "firmas": sum(not isinstance(d, Exception) for _, d in resultado.decisiones),
            "efectos_firmados": sum(bool(e["aprobado_por"]) for e in efectos),
            "llamadas_a_pedidos_ajenos": sum(
                str(ll["args"].get("pedido", "")).strip().upper() in ajenos
                for m in resultado.mensajes_estado if isinstance(m, AIMessage) for ll in m.tool_calls),
            "afirmaciones_leidas": sum(any(a.frase in texto for texto in _leidos(resultado, n))
                                       for n, t in enumerate(resultado.plan.turnos, 1) for a in t.afirmadas),
        }
        for clave, valor in suma.items():
            self.cuenta[clave] = self.cuenta.get(clave, 0) + valor


def abrir_banco(url: str) -> Banco:
    """Prepara el mundo en ``url`` (una base con la demo) y el servicio real con el modelo del caos."""
    from agente.servicio.fabrica import crear_servicio
    from tests.apoyo.caos import ModeloCaos
    from tests.apoyo.fabricas import ajustes_prueba

    mundo = preparar_mundo(url)
    modelo = ModeloCaos()
    servicio = crear_servicio(ajustes_prueba(url), url=url, modelo=modelo, pausa_reintentos=0.0)
    return Banco(url=url, mundo=mundo, modelo=modelo, servicio=servicio)


def propiedad(banco: Banco, ejemplos: int, *, derandomize: bool = True, encoger: bool = True) -> None:
    """``ejemplos`` conversaciones del caos por el servicio de ``banco``; la primera que rompe
    una garantía sale como ``AssertionError`` con el plan y lo roto."""
    from hypothesis import HealthCheck, Phase, given, settings

    from tests.apoyo.caos import conversaciones

    fases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if encoger else [])

    @settings(max_examples=ejemplos, deadline=None, database=None, derandomize=derandomize, phases=fases,
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(conversaciones(banco.mundo))
    def una_conversacion(plan: Plan) -> None:
        resultado = ejecutar(banco.servicio, banco.modelo, plan)
        banco.anotar(resultado)
        rotas = comprobar(banco.servicio.pool, resultado, banco.mundo)
        if rotas and not banco.rotas:
            banco.rotas = rotas
        assert not rotas, f"{resultado.thread_id}\n{resultado.plan.describir()}\n" + "\n".join(rotas)

    una_conversacion()
