"""Factorías de las pruebas de avisos: pausas en la cola, servidores reales de SMTP (aiosmtpd)
y de webhooks, y un canal que cuenta."""

from __future__ import annotations

import json
import socket
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email import message_from_bytes
from email.header import decode_header, make_header
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from zoneinfo import ZoneInfo

import psycopg
from aiosmtpd.controller import Controller
from psycopg.types.json import Jsonb

from agente.notificaciones import AvisoAprobacion, ErrorCanal
from agente.notificaciones.canales import Entrega

MADRID = ZoneInfo("Europe/Madrid")
MIERCOLES_10 = datetime(2026, 10, 7, 10, 0, tzinfo=MADRID)  # tienda abierta
MIERCOLES_3 = datetime(2026, 10, 7, 3, 0, tzinfo=MADRID)  # tienda cerrada

PEDIDO_350 = "P-20261005-0350"  # C-0009, talavera
PEDIDO_650 = "P-20261006-0650"  # C-0006, talavera
PEDIDO_120 = "P-20260917-0041"  # C-0001, talavera
CLIENTE_DE = {PEDIDO_350: "C-0009", PEDIDO_650: "C-0006", PEDIDO_120: "C-0001"}
IMPORTE_DE = {PEDIDO_350: "350.00", PEDIDO_650: "650.00", PEDIDO_120: "120.00"}

INSERT_CONSULTA_SQL = """
INSERT INTO consultas_asistente (thread_id, cliente_id, tienda, estado)
VALUES (%(thread_id)s, %(cliente_id)s, %(tienda)s, 'esperando_aprobacion')
"""
INSERT_PENDIENTE_SQL = """
INSERT INTO aprobaciones_pendientes (thread_id, tienda, cliente_id, interrupt_id, peticion, contexto, creada,
                                     caduca)
VALUES (%(thread_id)s, %(tienda)s, %(cliente_id)s, %(interrupt_id)s, %(peticion)s, '{}', %(creada)s,
        %(creada)s::timestamptz + interval '72 hours')
"""


def pausar(
    conexion: psycopg.Connection, pedido: str, *, creada: datetime = MIERCOLES_10,
    tienda: str = "talavera", interrupt_id: str = "int-1",
) -> AvisoAprobacion:
    """Una pausa de reembolso del pedido entero en la cola, y el aviso que el servicio pasaría."""
    thread_id = f"hilo-{uuid.uuid4().hex[:10]}"
    cliente = CLIENTE_DE[pedido]
    with conexion.transaction():
        conexion.execute(INSERT_CONSULTA_SQL, {"thread_id": thread_id, "cliente_id": cliente, "tienda": tienda})
        conexion.execute(
            INSERT_PENDIENTE_SQL,
            {"thread_id": thread_id, "tienda": tienda, "cliente_id": cliente,
             "interrupt_id": interrupt_id, "creada": creada,
             "peticion": Jsonb({"action_requests": [{"name": "reembolsar", "args": {"pedido": pedido}}]})},
        )
    return AvisoAprobacion(
        thread_id=thread_id, interrupt_id=interrupt_id, tienda=tienda, cliente_id=cliente,
        herramienta="reembolsar", importe=IMPORTE_DE[pedido], pedido=pedido,
        motivos=(f"importe {IMPORTE_DE[pedido].replace('.', ',')} EUR supera el límite de 60,00 EUR de la tienda",),
    )


def salida(conexion: psycopg.Connection, thread_id: str) -> list[dict]:
    return conexion.execute(
        "SELECT * FROM avisos_salida WHERE thread_id = %(t)s ORDER BY encargado_id, canal, paso",
        {"t": thread_id},
    ).fetchall()


def contacto(conexion: psycopg.Connection, encargado_id: str, canal: str, direccion: str) -> None:
    conexion.execute(
        "INSERT INTO contactos_firmantes (encargado_id, canal, direccion) VALUES (%s, %s, %s)",
        (encargado_id, canal, direccion),
    )


def solo_contacto(conexion: psycopg.Connection, encargado_id: str, canal: str, direccion: str) -> None:
    """Deja a ``encargado_id`` con ese único contacto y al resto de la demo sin avisos."""
    conexion.execute("UPDATE contactos_firmantes SET baja = now()")
    contacto(conexion, encargado_id, canal, direccion)


class CanalContado:
    """Un canal que recuerda lo que envió; ``fallar`` hace que lance ``ErrorCanal``."""

    def __init__(self, *, fallar: bool = False) -> None:
        self.entregas: list[Entrega] = []
        self.fallar = fallar
        self._candado = threading.Lock()

    def enviar(self, entrega: Entrega) -> None:
        if self.fallar:
            raise ErrorCanal("canal caído (prueba)")
        with self._candado:
            self.entregas.append(entrega)


def puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- SMTP real (aiosmtpd) ------------------------------------------------------------

@dataclass
class Correo:
    para: list[str]
    mensaje: Message

    @property
    def asunto(self) -> str:
        return str(make_header(decode_header(self.mensaje["Subject"])))

    @property
    def texto(self) -> str:
        return self.mensaje.get_payload(decode=True).decode("utf-8")

    @property
    def aviso_id(self) -> str:
        return self.mensaje["X-Agente-Aviso-Id"]


@dataclass
class BuzonSmtp:
    correos: list[Correo] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (nombre de aiosmtpd)
        self.correos.append(Correo(list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"


class ServidorSmtp:
    """Un servidor SMTP real (aiosmtpd) en 127.0.0.1; ``url`` para ``CanalCorreo``."""

    def __init__(self) -> None:
        self.buzon = BuzonSmtp()
        puerto = puerto_libre()
        self.controlador = Controller(self.buzon, hostname="127.0.0.1", port=puerto)
        self.controlador.start()
        self.url = f"smtp://127.0.0.1:{puerto}"

    @property
    def correos(self) -> list[Correo]:
        return self.buzon.correos

    def cerrar(self) -> None:
        self.controlador.stop()


# --- Receptor de webhooks real -------------------------------------------------------

@dataclass
class Recibido:
    cabeceras: dict[str, str]
    cuerpo: bytes

    @property
    def json(self):
        return json.loads(self.cuerpo)


class ReceptorWebhook:
    """Servidor HTTP que guarda cada POST; ``estado`` es lo que responde (500 = caído)."""

    def __init__(self) -> None:
        self.recibidos: list[Recibido] = []
        self.estado = 200
        receptor = self

        class Manejador(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (nombre de http.server)
                largo = int(self.headers.get("Content-Length", 0))
                receptor.recibidos.append(Recibido(dict(self.headers.items()), self.rfile.read(largo)))
                self.send_response(receptor.estado)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.servidor = ThreadingHTTPServer(("127.0.0.1", 0), Manejador)
        self.url = f"http://127.0.0.1:{self.servidor.server_address[1]}/avisos"
        self.hilo = threading.Thread(target=self.servidor.serve_forever, daemon=True)
        self.hilo.start()

    def cerrar(self) -> None:
        self.servidor.shutdown()
        self.servidor.server_close()


def despues(instante: datetime, **delta) -> datetime:
    return instante + timedelta(**delta)


def pasadas_de_entrega(bd_url: str, *, smtp_url: str, base_url: str = "http://127.0.0.1:8000", n: int = 3) -> int:
    """``n`` pasadas de la cola de avisos hechas aquí, con los canales del servidor; da
    cuántos avisos tocaron (enviados, reintentados, fallidos o descartados). Para afirmar que algo no se repite: esperar «unas
    cuantas pasadas» del servidor pasa también si el servidor no hizo ninguna."""
    from agente.bd.pool import abrir_pool
    from agente.notificaciones.trabajador import entregar_segun_ajustes
    from tests.apoyo.fabricas import ajustes_prueba

    ajustes = ajustes_prueba(bd_url, smtp_url=smtp_url, avisos_base_url=base_url)
    pool = abrir_pool(bd_url, max_size=2)
    try:
        return sum(entregar_segun_ajustes(pool, ajustes).total for _ in range(n))
    finally:
        pool.close()
