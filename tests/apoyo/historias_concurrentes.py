"""Historias concurrentes al estilo de Jepsen: muchas conversaciones de los mismos clientes (y
la API de la tienda) disparan operaciones a la vez; un comprobador mira si lo que salió sin
firma es lo que alguna ejecución en serie de la política habría dejado salir.

Lo usan ``tests/integracion/test_historias_concurrentes.py`` (pocas semillas, en ``make
test``) y ``bench/serializable.py`` (``python -m bench --solo serializable``: muchas más).

**Generador** (``preparar``). Cada semilla (``random.Random(semilla)``: la misma semilla da
las mismas operaciones) crea clientes nuevos de Talavera (sin historia: el modelo parte de
cero) con dos pedidos entregados hace 3 días (una línea de dos sartenes de 24,90 EUR) y uno
pendiente (una sartén, o dos cafeteras de 120,00 EUR que pasan del límite de cancelación),
y una lista de operaciones al azar sobre ellos: vales (de lo que sale sin firma, o de más),
reenvíos de una sartén que llegó rota, devoluciones de una sartén, cambios por otra sartén
(más barata, igual o más cara), cancelaciones y cambios de estado de la tienda (enviar, volver atrás a enviado, entregar); con ``chat=True``,
también conversaciones enteras con el agente (modelo offline) que piden un vale, una
devolución o un reenvío: su ``when``, su revalidación en el middleware (que eleva el
veredicto y pausa) y las reservas de lo que ya espera firma. No se usa Hypothesis
(está instalado): cada ejemplo necesita su base y sus hilos, y una historia concurrente no
se repite igual al encogerla; la semilla sí fija las operaciones, y el fallo dice la semilla.

**Ejecución** (``ejecutar``). Las operaciones van en rondas de ``hilos``; en cada ronda, un
hilo por operación y dos barreras: todas deciden su ``when`` a la vez
(``PoliticaAprobacion.evaluar``, que guarda el veredicto como en el agente) y, cuando todas
han decidido, todas ejecutan a la vez la herramienta de dominio con el revalidador de la
política (o, las de la tienda, ``IngestaTienda.estado``, lo que llama la ruta
``POST /api/tienda/v1/pedidos/{id}/estado``). Es el peor caso para el ``when``: cada
conversación de la ronda vio al cliente como estaba antes de que saliera ningún efecto. Una
operación cuyo veredicto pide firma no se ejecuta (el agente pausaría antes); una
``NecesitaFirma`` eleva el veredicto como el middleware. Las conversaciones del chat solo
esperan a la segunda barrera y hablan con el servicio; su desenlace sale de lo que dejaron en
la base (efecto, pausa con o sin veredicto revalidado, o nada).

**Historia**. Cada operación acaba en un desenlace (``DESENLACES``). El orden de
confirmación lo apunta la propia base: unos disparadores de prueba (``INSTRUMENTAR_SQL``,
solo en la base de la prueba) escriben en ``historia_confirmada`` una fila por cada efecto
insertado y por cada cambio de estado de un pedido, con un número de una secuencia. El
número se toma dentro de la transacción, con el pedido bloqueado y (los efectos) con el
candado del cliente: dos escrituras que compiten por lo mismo se numeran en el orden en que
se confirmaron.

**Comprobador** (``comprobar``). Repite los efectos sin firma en ese orden contra un modelo
puro de las reglas de recuento (``Modelo``): un vale por cliente en la ventana de vales,
ninguno de una línea ya compensada; un reenvío sin firma por línea y nunca de una línea con
vale; devoluciones por debajo de ``devoluciones_max_30d``; ningún reembolso sin firma de un
pedido con vale o con un cambio; ningún cambio sin firma de un pedido ya compensado
(reembolso, cambio o vale), a algo más caro o que devuelva más que el límite de reembolso;
cada importe por debajo de su límite; nada de un pedido que no está en el
estado que la operación exige; nada por encima de lo pagado por la línea, sumando todos los
tipos. Cada efecto tiene que estar permitido dados exactamente los anteriores. Y los
invariantes: ningún pedido cancelado y enviado, ningún reembolsado vuelto a enviado o
pendiente, ninguna firma pedida al escribir que dejara efecto, cada una con su veredicto
elevado, ningún error inesperado, y el informe de ``agente auditoria`` a cero.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg

from agente.bd.pool import KWARGS_CONEXION
from agente.servicio.auditoria.informe import hallazgos, informe
from agente.servicio.tienda.ingesta import IngestaTienda, crear_clave
from agente.servicio.tienda.registros import CambioEstado
from caja.pasarela import PasarelaSimulada
from herramientas import REGISTRO
from nucleo import dinero
from nucleo.contexto import ContextoCliente
from nucleo.errores import ErrorDominio, NecesitaFirma, RegistroRechazado
from operaciones.cancelacion.herramienta import cancelar_pedido
from operaciones.reembolso.herramienta import reembolsar
from operaciones.reenvio.herramienta import reenviar
from operaciones.sustitucion.herramienta import sustituir
from operaciones.vale.herramienta import compensar_con_vale
from politicas import PoliticaAprobacion
from politicas.defectos import DEFECTOS

__all__ = [
    "DESENLACES",
    "Escenario",
    "Operacion",
    "Resultado",
    "comprobar",
    "ejecutar",
    "escenario_fijo",
    "preparar",
    "resumen",
]

TIENDA = "talavera"
SARTEN, PRECIO_SARTEN = "MEN-001", Decimal("24.90")
CAFETERA, PRECIO_CAFETERA = "CAF-001", Decimal("120.00")
HERRAMIENTA = {"vale": "compensar_con_vale", "reenvio": "reenviar", "reembolso": "reembolsar",
               "cancelacion": "cancelar_pedido", "cambio": "sustituir"}
# Cambios de una sartén: por una más barata (devuelve 5,00), por una del mismo precio o por
# una más cara (pide firma: la tienda no cobra diferencias sin ella).
CAMBIOS = ("MEN-002", "MEN-003", "MEN-004")
DE_LA_TIENDA = {"tienda_enviar": "enviado", "tienda_atrasar": "enviado", "tienda_entregar": "entregado"}
# Cuántas veces sale cada tipo de operación al azar.
PESOS = {"vale": 3, "reenvio": 2, "reembolso": 3, "cancelacion": 1, "cambio": 2,
         "tienda_enviar": 1, "tienda_atrasar": 1, "tienda_entregar": 1}
# Conversaciones enteras con el agente (modelo offline), si hay servicio: su when, su
# revalidación (el middleware eleva y pausa) y las reservas de lo que espera firma.
PESOS_CHAT = {"chat_vale": 1, "chat_reembolso": 1, "chat_reenvio": 1}
TEXTOS_CHAT = {
    "chat_vale": "El pedido {pedido} llegó con un arañazo, no quiero devolverlo",
    "chat_reembolso": "Quiero devolver el pedido {pedido}, no me gusta",
    "chat_reenvio": "La sartén del pedido {pedido} llegó rota, mandadme otra",
}
DESENLACES = (
    "efecto",             # la herramienta escribió su efecto sin firma
    "firma_al_decidir",   # el when pidió firma: el agente pausaría, no se ejecuta nada
    "firma_al_escribir",  # la revalidación pidió firma (NecesitaFirma): nada escrito
    "rechazada",          # la herramienta la rechazó (ErrorDominio): nada escrito
    "aplicada",           # la tienda cambió el estado
    "rechazo_409",        # la tienda recibió su 409 (RegistroRechazado)
    "fallo",              # cualquier otra excepción: siempre un hallazgo
)

# --- instrumentación de la base de la prueba ------------------------------------------------

# Una sentencia por elemento (el protocolo extendido no admite varias en una).
INSTRUMENTAR_SQL = (
    """
CREATE TABLE historia_confirmada (
    orden        bigserial PRIMARY KEY,
    tabla        text NOT NULL,
    id           bigint,
    pedido_id    text NOT NULL,
    thread_id    text,
    tool_call_id text,
    estado       text
)""",
    """
CREATE FUNCTION apuntar_historia() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'pedidos' THEN
        INSERT INTO historia_confirmada (tabla, pedido_id, estado) VALUES ('pedidos', NEW.id, NEW.estado);
    ELSE
        INSERT INTO historia_confirmada (tabla, id, pedido_id, thread_id, tool_call_id)
        VALUES (TG_TABLE_NAME, NEW.id, NEW.pedido_id, NEW.thread_id, NEW.tool_call_id);
    END IF;
    RETURN NULL;
END $$""",
    """
CREATE TRIGGER historia_estado AFTER UPDATE OF estado ON pedidos FOR EACH ROW
    WHEN (OLD.estado IS DISTINCT FROM NEW.estado) EXECUTE FUNCTION apuntar_historia()""",
    "CREATE TRIGGER historia_vales AFTER INSERT ON vales FOR EACH ROW EXECUTE FUNCTION apuntar_historia()",
    "CREATE TRIGGER historia_reembolsos AFTER INSERT ON reembolsos FOR EACH ROW EXECUTE FUNCTION apuntar_historia()",
    "CREATE TRIGGER historia_reenvios AFTER INSERT ON reenvios FOR EACH ROW EXECUTE FUNCTION apuntar_historia()",
    "CREATE TRIGGER historia_cancelaciones AFTER INSERT ON cancelaciones FOR EACH ROW "
    "EXECUTE FUNCTION apuntar_historia()",
    "CREATE TRIGGER historia_sustituciones AFTER INSERT ON sustituciones FOR EACH ROW "
    "EXECUTE FUNCTION apuntar_historia()",
)
HAY_INSTRUMENTACION_SQL = "SELECT to_regclass('historia_confirmada') IS NOT NULL AS hay"
INSERT_CLIENTE_SQL = """
INSERT INTO clientes (id, tienda, nombre, email) VALUES (%(id)s, %(tienda)s, %(nombre)s, %(email)s)
"""
INSERT_PEDIDO_SQL = """
INSERT INTO pedidos (id, cliente_id, tienda, fecha, estado, enviado_en, entregado_en, importe, referencia_pago)
VALUES (%(id)s, %(cliente)s, %(tienda)s, now() - interval '6 days', %(estado)s,
        CASE WHEN %(estado)s = 'entregado' THEN now() - interval '5 days' END,
        CASE WHEN %(estado)s = 'entregado' THEN now() - interval '3 days' END,
        %(importe)s, 'pi_historia_' || %(id)s)
"""
INSERT_LINEA_SQL = """
INSERT INTO lineas_pedido (pedido_id, linea, sku, unidades, precio_unitario)
VALUES (%(pedido)s, 1, %(sku)s, %(unidades)s, %(precio)s)
"""
# Que ningún reenvío se quede sin stock: lo que se mide es la política, no el almacén.
STOCK_SQL = "UPDATE stock SET unidades = greatest(unidades, 100000) WHERE tienda = %(tienda)s AND sku = %(sku)s"
POLITICA_TIENDA_SQL = "SELECT * FROM politicas_tienda WHERE tienda = %(tienda)s"

# --- lectura de la historia -----------------------------------------------------------------

HISTORIA_SQL = """
SELECT h.orden, h.tabla, h.pedido_id, h.thread_id, h.estado,
       coalesce(v.importe, r.importe, e.valor, c.importe, l.precio_unitario) AS importe,
       coalesce(v.aprobado_por, r.aprobado_por, e.aprobado_por, c.aprobado_por, s.aprobado_por) AS aprobado_por,
       s.diferencia,
       r.concepto, e.unidades AS unidades_reenvio,
       (SELECT count(*)::int FROM compensaciones_unidad cu WHERE cu.reembolso_id = r.id) AS unidades_reembolso
FROM historia_confirmada h
LEFT JOIN vales v ON h.tabla = 'vales' AND v.id = h.id
LEFT JOIN reembolsos r ON h.tabla = 'reembolsos' AND r.id = h.id
LEFT JOIN reenvios e ON h.tabla = 'reenvios' AND e.id = h.id
LEFT JOIN cancelaciones c ON h.tabla = 'cancelaciones' AND c.id = h.id
LEFT JOIN sustituciones s ON h.tabla = 'sustituciones' AND s.id = h.id
LEFT JOIN lineas_pedido l ON s.id IS NOT NULL AND l.pedido_id = s.pedido_id AND l.sku = s.sku_original
WHERE h.pedido_id = ANY(%(pedidos)s)
ORDER BY h.orden
"""
EFECTOS_DE_HILOS_SQL = """
SELECT thread_id, 'vale' AS tipo FROM vales WHERE thread_id = ANY(%(hilos)s)
UNION ALL SELECT thread_id, 'reembolso' FROM reembolsos WHERE thread_id = ANY(%(hilos)s) AND concepto = 'devolucion'
UNION ALL SELECT thread_id, 'reenvio' FROM reenvios WHERE thread_id = ANY(%(hilos)s)
UNION ALL SELECT thread_id, 'cancelacion' FROM cancelaciones WHERE thread_id = ANY(%(hilos)s)
UNION ALL SELECT thread_id, 'cambio' FROM sustituciones WHERE thread_id = ANY(%(hilos)s)
"""
VEREDICTOS_SQL = """
SELECT thread_id, requiere_encargado, revalidada IS NOT NULL AS revalidada
FROM evaluaciones_politica WHERE thread_id = ANY(%(hilos)s)
"""
# Lo que la auditoría en serie también mira, restringido a los pedidos de la historia.
ESTADOS_IMPOSIBLES_SQL = """
SELECT p.id, p.estado, p.enviado_en IS NOT NULL AS enviado, p.entregado_en IS NOT NULL AS entregado,
       EXISTS (SELECT 1 FROM cancelaciones c WHERE c.pedido_id = p.id) AS cancelado_por_chat,
       EXISTS (SELECT 1 FROM reembolsos r WHERE r.pedido_id = p.id) AS con_reembolsos
FROM pedidos p WHERE p.id = ANY(%(pedidos)s)
"""


@dataclass(frozen=True)
class Pedido:
    id: str
    cliente: str
    estado: str
    sku: str
    precio: Decimal
    unidades: int

    @property
    def pagado(self) -> Decimal:
        return self.precio * self.unidades


@dataclass(frozen=True)
class Operacion:
    n: int
    tipo: str
    cliente: str
    pedido: str
    importe: Decimal | None = None
    hilo: str = ""
    sku_nuevo: str | None = None


@dataclass
class Resultado:
    operacion: Operacion
    desenlace: str
    detalle: str = ""
    hilo: str = ""  # el de la conversación del servicio (las del chat); si no, el de la operación

    def __post_init__(self) -> None:
        self.hilo = self.hilo or self.operacion.hilo


@dataclass
class Escenario:
    semilla: int
    clientes: list[str]
    pedidos: dict[str, Pedido]
    operaciones: list[Operacion]
    hilos: int
    resultados: list[Resultado] = field(default_factory=list)
    segundos: float = 0.0


# --- generador ------------------------------------------------------------------------------


def _instrumentar(conexion: psycopg.Connection) -> None:
    if not conexion.execute(HAY_INSTRUMENTACION_SQL).fetchone()["hay"]:
        with conexion.transaction():
            for sentencia in INSTRUMENTAR_SQL:
                conexion.execute(sentencia)


def _crear(conexion: psycopg.Connection, semilla: int, clientes: int, azar: random.Random) -> tuple[list, dict]:
    ids_clientes, pedidos = [], {}
    dia = f"2027{1 + semilla // 28 % 12:02d}{1 + semilla % 28:02d}"
    numero = iter(range(1, 10_000))
    for k in range(clientes):
        cliente = f"C-H{semilla:05d}-{k}"
        conexion.execute(INSERT_CLIENTE_SQL, {"id": cliente, "tienda": TIENDA, "nombre": f"Cliente {semilla}-{k}",
                                              "email": f"h{semilla}-{k}@historias.example"})
        ids_clientes.append(cliente)
        especies = [("entregado", SARTEN, PRECIO_SARTEN, 2), ("entregado", SARTEN, PRECIO_SARTEN, 2),
                    ("pendiente", *azar.choice([(SARTEN, PRECIO_SARTEN, 1), (CAFETERA, PRECIO_CAFETERA, 2)]))]
        for estado, sku, precio, unidades in especies:
            pedido = Pedido(f"P-{dia}-{next(numero) + 1000 * (semilla // 336 % 9):04d}", cliente, estado, sku,
                            precio, unidades)
            conexion.execute(INSERT_PEDIDO_SQL, {"id": pedido.id, "cliente": cliente, "tienda": TIENDA,
                                                 "estado": estado, "importe": pedido.pagado})
            conexion.execute(INSERT_LINEA_SQL, {"pedido": pedido.id, "sku": sku, "unidades": unidades,
                                                "precio": precio})
            pedidos[pedido.id] = pedido
    for sku in (SARTEN, CAFETERA, *CAMBIOS):
        conexion.execute(STOCK_SQL, {"tienda": TIENDA, "sku": sku})
    return ids_clientes, pedidos


def _operacion(n: int, azar: random.Random, semilla: int, clientes: list[str], pedidos: dict[str, Pedido],
               automatico: Decimal, pesos: dict[str, int]) -> Operacion:
    cliente = azar.choice(clientes)
    suyos = [p for p in pedidos.values() if p.cliente == cliente]
    entregados = [p for p in suyos if p.estado == "entregado"]
    pendiente = next(p for p in suyos if p.estado == "pendiente")
    tipo = azar.choices(list(pesos), weights=list(pesos.values()))[0]
    hilo = f"h{semilla}-{n}"
    if tipo in TEXTOS_CHAT:
        return Operacion(n, tipo, cliente, azar.choice(entregados).id, None, hilo)
    if tipo == "vale":
        importe = azar.choice([automatico / 2, automatico, automatico, automatico + Decimal("2.50")])
        return Operacion(n, tipo, cliente, azar.choice(entregados).id, dinero.cuantizar(importe), hilo)
    if tipo == "reenvio":
        return Operacion(n, tipo, cliente, azar.choice(entregados).id, None, hilo)
    if tipo == "reembolso":
        return Operacion(n, tipo, cliente, azar.choice(entregados).id, PRECIO_SARTEN, hilo)
    if tipo == "cambio":
        return Operacion(n, tipo, cliente, azar.choice(entregados).id, None, hilo, azar.choice(CAMBIOS))
    if tipo == "cancelacion":
        return Operacion(n, tipo, cliente, pendiente.id, pendiente.pagado, hilo)
    objetivo = {"tienda_enviar": pendiente, "tienda_atrasar": azar.choice(entregados),
                "tienda_entregar": azar.choice(suyos)}[tipo]
    return Operacion(n, tipo, cliente, objetivo.id, None, hilo)


def _limites(conexion: psycopg.Connection) -> dict[str, Any]:
    """Los valores de la política de la tienda que usa el modelo (su fila; sin ella, los defectos)."""
    fila = conexion.execute(POLITICA_TIENDA_SQL, {"tienda": TIENDA}).fetchone() or {}
    return {k: fila[k] if fila.get(k) is not None else v for k, v in DEFECTOS.items()}


def preparar(bd_url: str, semilla: int, *, clientes: int = 2, operaciones: int = 12, hilos: int = 6,
             chat: bool = False) -> Escenario:
    """Clientes y pedidos nuevos en la base y ``operaciones`` al azar sobre ellos (ver el módulo).

    ``chat``: también conversaciones enteras con el agente (``ejecutar`` necesita entonces el
    servicio)."""
    azar = random.Random(semilla)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        _instrumentar(c)
        with c.transaction():
            ids_clientes, pedidos = _crear(c, semilla, clientes, azar)
        limites = _limites(c)
    automatico = _automatico(PRECIO_SARTEN * 2, limites)
    pesos = {**PESOS, **(PESOS_CHAT if chat else {})}
    ops = [_operacion(n, azar, semilla, ids_clientes, pedidos, automatico, pesos) for n in range(operaciones)]
    return Escenario(semilla, ids_clientes, pedidos, ops, hilos)


def escenario_fijo(bd_url: str, semilla: int, tipos: list[tuple[str, int]], *, hilos: int | None = None) -> Escenario:
    """Un escenario con las operaciones dadas: ``(tipo, índice del pedido entregado)``, todas del
    primer cliente y en una sola ronda (para historias que tienen que darse siempre igual)."""
    escenario = preparar(bd_url, semilla, clientes=1, operaciones=0)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        automatico = _automatico(PRECIO_SARTEN * 2, _limites(c))
    cliente = escenario.clientes[0]
    entregados = [p for p in escenario.pedidos.values() if p.estado == "entregado"]
    importes = {"vale": automatico, "reembolso": PRECIO_SARTEN}
    escenario.operaciones = [Operacion(n, tipo, cliente, entregados[i].id, importes.get(tipo), f"h{semilla}-{n}")
                             for n, (tipo, i) in enumerate(tipos)]
    escenario.hilos = hilos or len(tipos)
    return escenario


def _automatico(pagado: Decimal, limites: dict[str, Any]) -> Decimal:
    return dinero.cuantizar(min(pagado * Decimal(limites["vale_porcentaje_max"]) / 100,
                                Decimal(limites["vale_importe_max"])))


# --- ejecución ------------------------------------------------------------------------------


def _herramienta(pool, op: Operacion, contexto: ContextoCliente, politica, pasarela) -> Callable[[], Any]:
    comunes = {"contexto": contexto, "thread_id": op.hilo, "tool_call_id": "t", "pedido": op.pedido,
               "revalidador": politica}
    if op.tipo == "vale":
        return lambda: compensar_con_vale(pool, **comunes, linea=1, importe=op.importe, motivo="arañazo")
    if op.tipo == "reenvio":
        return lambda: reenviar(pool, **comunes, linea=1, motivo="llego_roto")
    if op.tipo == "reembolso":
        return lambda: reembolsar(pool, **comunes, importe=op.importe, motivo="no funciona",
                                  lineas=[{"linea": 1, "unidades": 1}], pasarela=pasarela)
    if op.tipo == "cambio":
        return lambda: sustituir(pool, **comunes, sku_original=SARTEN, sku_nuevo=op.sku_nuevo, pasarela=pasarela)
    return lambda: cancelar_pedido(pool, **comunes, importe=op.importe, motivo="ya no lo quiero",
                                   pasarela=pasarela)


def _args(op: Operacion) -> dict[str, Any]:
    if op.tipo == "vale":
        return {"pedido": op.pedido, "linea": 1, "importe": dinero.texto(op.importe), "motivo": "arañazo"}
    if op.tipo == "reenvio":
        return {"pedido": op.pedido, "linea": 1, "motivo": "llego_roto"}
    if op.tipo == "reembolso":
        return {"pedido": op.pedido, "importe": dinero.texto(op.importe), "motivo": "no funciona",
                "lineas": [{"linea": 1, "unidades": 1}]}
    if op.tipo == "cambio":
        return {"pedido": op.pedido, "sku_original": SARTEN, "sku_nuevo": op.sku_nuevo}
    return {"pedido": op.pedido, "importe": dinero.texto(op.importe), "motivo": "ya no lo quiero"}


def ejecutar(pool, bd_url: str, escenario: Escenario, servicio=None) -> Escenario:
    """Lanza las operaciones del escenario por rondas (ver el módulo) y apunta sus desenlaces.

    ``servicio``: el ``Servicio`` completo para las conversaciones del chat, si las hay."""
    if servicio is None and any(op.tipo in TEXTOS_CHAT for op in escenario.operaciones):
        raise ValueError("un escenario con conversaciones del chat necesita el servicio")
    politica = PoliticaAprobacion(pool=pool, reglas=REGISTRO.reglas())
    pasarela = PasarelaSimulada(pool=pool)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        secreto = crear_clave(c, tienda=TIENDA, nombre=f"historias-{escenario.semilla}",
                                             alcances=["estados"]).secreto
    api = IngestaTienda(pool)
    clave = api.autenticar(secreto, "estados")
    inicio = time.perf_counter()
    for desde in range(0, len(escenario.operaciones), escenario.hilos):
        ronda = escenario.operaciones[desde:desde + escenario.hilos]
        escenario.resultados += _ronda(pool, bd_url, ronda, politica, pasarela, api, clave, servicio)
    escenario.segundos = time.perf_counter() - inicio
    return escenario


def _conversar(servicio, bd_url: str, op: Operacion) -> Resultado:
    """Una conversación entera con el agente; el desenlace, por lo que dejó en la base."""
    contexto = servicio.contexto_de_cliente(op.cliente)
    hilo = servicio.iniciar_conversacion(contexto)
    respuesta = servicio.conversar(hilo, TEXTOS_CHAT[op.tipo].format(pedido=op.pedido), contexto)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        efectos = c.execute(EFECTOS_DE_HILOS_SQL, {"hilos": [hilo]}).fetchall()
        veredictos = c.execute(VEREDICTOS_SQL, {"hilos": [hilo]}).fetchall()
    texto = respuesta.mensaje_cliente[:160]
    if "problema interno" in respuesta.mensaje_cliente:
        return Resultado(op, "fallo", f"el cliente leyó un error interno: {texto}", hilo)
    if efectos:
        return Resultado(op, "efecto", texto, hilo)
    if respuesta.estado == "esperando_aprobacion":
        revalidada = any(v["revalidada"] for v in veredictos)
        return Resultado(op, "firma_al_escribir" if revalidada else "firma_al_decidir", texto, hilo)
    return Resultado(op, "rechazada", texto, hilo)


def _ronda(pool, bd_url: str, ronda: list[Operacion], politica, pasarela, api, clave, servicio) -> list[Resultado]:
    decidir, escribir = threading.Barrier(len(ronda)), threading.Barrier(len(ronda))
    resultados: dict[int, Resultado] = {}

    def correr(op: Operacion) -> None:
        contexto = ContextoCliente(cliente_id=op.cliente, tienda=TIENDA, nombre=op.cliente)
        try:
            decidir.wait(30)
            veredicto = None
            if op.tipo in HERRAMIENTA:
                veredicto = politica.evaluar(thread_id=op.hilo, tool_call_id="t", herramienta=HERRAMIENTA[op.tipo],
                                             args=_args(op), contexto=contexto)
            escribir.wait(30)
            if op.tipo in TEXTOS_CHAT:
                resultados[op.n] = _conversar(servicio, bd_url, op)
            elif veredicto is not None and veredicto.requiere_encargado:
                resultados[op.n] = Resultado(op, "firma_al_decidir", "; ".join(veredicto.motivos))
            elif op.tipo in HERRAMIENTA:
                _herramienta(pool, op, contexto, politica, pasarela)()
                resultados[op.n] = Resultado(op, "efecto")
            else:
                hecho = api.estado(clave, op.pedido, CambioEstado(estado=DE_LA_TIENDA[op.tipo]))
                resultados[op.n] = Resultado(op, "aplicada", hecho.resultado)
        except NecesitaFirma as exc:
            # Lo que hace el middleware RevalidacionEfectos antes de pausar: elevar el veredicto.
            politica.elevar(thread_id=op.hilo, tool_call_id="t", revalidacion=exc.revalidacion)
            resultados[op.n] = Resultado(op, "firma_al_escribir", "; ".join(exc.motivos))
        except RegistroRechazado as exc:
            resultados[op.n] = Resultado(op, "rechazo_409", str(exc))
        except ErrorDominio as exc:
            resultados[op.n] = Resultado(op, "rechazada", str(exc))
        except Exception as exc:  # noqa: BLE001 - cualquier otra cosa es un hallazgo del comprobador
            resultados[op.n] = Resultado(op, "fallo", f"{type(exc).__name__}: {exc}")

    hilos = [threading.Thread(target=correr, args=(op,)) for op in ronda]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join(120)
    return [resultados.get(op.n) or Resultado(op, "fallo", "el hilo no terminó") for op in ronda]


# --- modelo y comprobador -------------------------------------------------------------------


@dataclass
class _EstadoPedido:
    pedido: Pedido
    estado: str
    libres: int
    reenviadas: int = 0
    reenvios: int = 0
    vales: int = 0
    compensadas: int = 0  # unidades reembolsadas, cambiadas o canceladas
    reembolsos: int = 0
    cambios: int = 0
    compensado: Decimal = Decimal("0.00")


class Modelo:
    """La política en serie, pura: cada efecto sin firma se decide con los anteriores."""

    def __init__(self, pedidos: dict[str, Pedido], limites: dict[str, Any]) -> None:
        self.pedidos = {p.id: _EstadoPedido(p, p.estado, p.unidades) for p in pedidos.values()}
        self.vales_cliente: Counter[str] = Counter()
        self.devoluciones_cliente: Counter[str] = Counter()
        self.limites = limites

    def estado(self, pedido: str, estado: str) -> None:
        self.pedidos[pedido].estado = estado

    def motivos(self, tipo: str, pedido: str, importe: Decimal, unidades: int = 1,
                diferencia: Decimal | None = None) -> list[str]:
        """Por qué este efecto, dados los anteriores, no habría salido sin firma ([] = sí salía)."""
        p = self.pedidos[pedido]
        cliente, lim = p.pedido.cliente, self.limites
        motivos = []
        if tipo == "vale":
            if p.estado != "entregado":
                motivos.append(f"vale de un pedido {p.estado}")
            if importe > _automatico(p.pedido.pagado, lim):
                motivos.append(f"vale de {importe} por encima de lo automático")
            if self.vales_cliente[cliente]:
                motivos.append(f"el cliente ya tenía {self.vales_cliente[cliente]} vale(s) en la ventana")
            if p.compensadas or p.reenvios:
                motivos.append("vale de una línea ya reembolsada o reenviada")
        elif tipo == "reenvio":
            if p.estado != "entregado":
                motivos.append(f"reenvío de algo que llegó roto de un pedido {p.estado}")
            if p.pedido.precio > Decimal(lim["limite_reenvio"]):
                motivos.append("reenvío por encima del límite por unidad")
            if p.reenvios:
                motivos.append(f"la línea ya se había reenviado {p.reenvios} vez/veces")
            if p.vales:
                motivos.append("reenvío de una línea con vale")
            if unidades > p.libres + p.reenviadas:
                motivos.append("reenvío de unidades ya reembolsadas o canceladas")
        elif tipo == "reembolso":
            if p.estado != "entregado":
                motivos.append(f"reembolso de un pedido {p.estado}")
            if importe > Decimal(lim["limite_reembolso"]):
                motivos.append("reembolso por encima del límite")
            if self.devoluciones_cliente[cliente] >= int(lim["devoluciones_max_30d"]):
                motivos.append(f"el cliente ya tenía {self.devoluciones_cliente[cliente]} devoluciones "
                               f"(máximo {lim['devoluciones_max_30d']})")
            if p.vales:
                motivos.append("reembolso de un pedido con vale")
            if p.cambios:
                motivos.append("reembolso de un pedido con un cambio")
            if unidades > p.libres:
                motivos.append("reembolso de unidades que no estaban libres")
        elif tipo == "cambio":
            if p.estado != "entregado":
                motivos.append(f"cambio de un pedido {p.estado}")
            if p.reembolsos or p.cambios or p.vales:
                motivos.append("cambio de un pedido ya compensado (reembolso, cambio o vale)")
            if diferencia is not None and diferencia > Decimal(lim["diferencia_max_sustitucion"]):
                motivos.append(f"cambio que cuesta {diferencia} más")
            if diferencia is not None and -diferencia > Decimal(lim["limite_reembolso"]):
                motivos.append("cambio que devuelve más que el límite de reembolso")
            if unidades > p.libres:
                motivos.append("cambio de unidades que no estaban libres")
        elif tipo == "cancelacion":
            if p.estado != "pendiente":
                motivos.append(f"cancelación de un pedido {p.estado}")
            if importe > Decimal(lim["limite_cancelacion"]):
                motivos.append("cancelación por encima del límite")
        if p.compensado + importe > p.pedido.pagado:
            motivos.append(f"la línea quedaría compensada sin firma con {p.compensado + importe} "
                           f"de {p.pedido.pagado} pagados")
        return motivos

    def aplicar(self, tipo: str, pedido: str, importe: Decimal, unidades: int = 1) -> None:
        p = self.pedidos[pedido]
        p.compensado += importe
        if tipo == "vale":
            p.vales += 1
            self.vales_cliente[p.pedido.cliente] += 1
        elif tipo == "reenvio":
            p.reenvios += 1
            nuevas = min(unidades, p.libres)
            p.libres -= nuevas
            p.reenviadas += nuevas
        elif tipo in ("reembolso", "cambio"):
            p.libres -= unidades
            p.compensadas += unidades
            if tipo == "reembolso":
                p.reembolsos += 1
                self.devoluciones_cliente[p.pedido.cliente] += 1
            else:
                p.cambios += 1
        elif tipo == "cancelacion":
            p.compensadas += p.libres
            p.libres = 0


TIPO_DE_TABLA = {"vales": "vale", "reenvios": "reenvio", "reembolsos": "reembolso", "cancelaciones": "cancelacion",
                 "sustituciones": "cambio"}


def comprobar(bd_url: str, escenario: Escenario) -> list[str]:
    """Las violaciones de la historia del escenario (ver el módulo); [] = serializable y sana."""
    violaciones: list[str] = []
    por_hilo = {r.hilo: r for r in escenario.resultados}
    for r in escenario.resultados:
        if r.desenlace == "fallo":
            violaciones.append(f"operación {r.operacion.n} ({r.operacion.tipo} {r.operacion.pedido}): "
                               f"error inesperado {r.detalle}")
    pedidos = list(escenario.pedidos)
    hilos = list(por_hilo)
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        modelo = Modelo(escenario.pedidos, _limites(c))
        historia = c.execute(HISTORIA_SQL, {"pedidos": pedidos}).fetchall()
        efectos = c.execute(EFECTOS_DE_HILOS_SQL, {"hilos": hilos}).fetchall()
        veredictos = {f["thread_id"]: f for f in c.execute(VEREDICTOS_SQL, {"hilos": hilos})}
        estados = c.execute(ESTADOS_IMPOSIBLES_SQL, {"pedidos": pedidos}).fetchall()
        auditoria = informe(c, pendientes_mas_de_segundos=3600)

    # 1. La serie: cada efecto sin firma, permitido dados exactamente los anteriores.
    for fila in historia:
        if fila["tabla"] == "pedidos":
            modelo.estado(fila["pedido_id"], fila["estado"])
            continue
        if fila["tabla"] == "reembolsos" and fila["concepto"] != "devolucion":
            continue  # el dinero de una cancelación o de un cambio: lo cuenta su operación
        tipo = TIPO_DE_TABLA[fila["tabla"]]
        unidades = fila["unidades_reenvio"] or fila["unidades_reembolso"] or 1
        if fila["aprobado_por"] is None:
            motivos = modelo.motivos(tipo, fila["pedido_id"], fila["importe"], unidades, fila["diferencia"])
            if motivos:
                violaciones.append(f"{tipo} sin firma nº {fila['orden']} del pedido {fila['pedido_id']} "
                                   f"({fila['thread_id']}) no habría salido sin firma en serie: "
                                   + "; ".join(motivos))
        modelo.aplicar(tipo, fila["pedido_id"], fila["importe"], unidades)

    # 2. Cada desenlace, con lo que dejó en la base.
    con_efecto = Counter(f["thread_id"] for f in efectos)
    for hilo, r in por_hilo.items():
        if r.operacion.tipo not in HERRAMIENTA and r.operacion.tipo not in TEXTOS_CHAT:
            continue
        if r.desenlace == "efecto" and con_efecto[hilo] != 1:
            violaciones.append(f"{hilo}: la herramienta volvió bien y dejó {con_efecto[hilo]} efectos")
        if r.desenlace != "efecto" and con_efecto[hilo]:
            violaciones.append(f"{hilo}: {r.desenlace} y aun así dejó efecto")
        veredicto = veredictos.get(hilo)
        if r.desenlace == "firma_al_escribir" and not (veredicto and veredicto["requiere_encargado"]
                                                      and veredicto["revalidada"]):
            violaciones.append(f"{hilo}: firma pedida al escribir sin su veredicto elevado ({veredicto})")
        if r.desenlace == "efecto" and (veredicto is None or veredicto["requiere_encargado"]):
            violaciones.append(f"{hilo}: efecto sin firma con un veredicto que la pide ({veredicto})")

    # 3. Los invariantes de estado del pedido.
    for p in estados:
        cancelado = p["cancelado_por_chat"] or p["estado"] == "cancelado"
        if cancelado and (p["estado"] in ("enviado", "entregado") or p["enviado"] or p["entregado"]):
            violaciones.append(f"pedido {p['id']} cancelado y enviado (estado {p['estado']})")
        if p["con_reembolsos"] and p["estado"] in ("pendiente", "enviado"):
            violaciones.append(f"pedido {p['id']} reembolsado y vuelto a {p['estado']}")

    # 4. La auditoría de siempre, a cero.
    if hallazgos(auditoria):
        secciones = {"sin_firma": auditoria["sin_firma"], "firmas": auditoria.get("firmas", []),
                     **{f"libro.{k}": v for k, v in auditoria["libro"].items()},
                     **{f"politica.{k}": v for k, v in auditoria.get("politica", {}).items()},
                     **{f"serie.{k}": v for k, v in auditoria.get("serie", {}).items()}}
        violaciones.append("la auditoría encuentra " + "; ".join(
            f"{k}: {len(v) if isinstance(v, list) else v}" for k, v in secciones.items() if v))
    return violaciones


def resumen(escenarios: list[Escenario]) -> dict[str, Any]:
    """Recuento de desenlaces y ritmo de una tanda de escenarios."""
    desenlaces: Counter[str] = Counter(r.desenlace for e in escenarios for r in e.resultados)
    operaciones = sum(desenlaces.values())
    del_chat = sum(1 for e in escenarios for r in e.resultados
                   if r.operacion.tipo in HERRAMIENTA or r.operacion.tipo in TEXTOS_CHAT)
    segundos = sum(e.segundos for e in escenarios)
    a_revision = desenlaces["firma_al_decidir"] + desenlaces["firma_al_escribir"]
    por_tipo: dict[str, Counter[str]] = defaultdict(Counter)
    for e in escenarios:
        for r in e.resultados:
            por_tipo[r.operacion.tipo][r.desenlace] += 1
    return {
        "semillas": len(escenarios),
        "operaciones": operaciones,
        "segundos": round(segundos, 2),
        "operaciones_s": round(operaciones / segundos, 1) if segundos else None,
        "efectos_s": round(desenlaces["efecto"] / segundos, 1) if segundos else None,
        "desenlaces": {d: desenlaces[d] for d in DESENLACES},
        "parte_a_revision": round(a_revision / del_chat, 3) if del_chat else None,
        "parte_firma_al_escribir": round(desenlaces["firma_al_escribir"] / del_chat, 3) if del_chat else None,
        "por_tipo": {t: dict(c) for t, c in sorted(por_tipo.items())},
    }
