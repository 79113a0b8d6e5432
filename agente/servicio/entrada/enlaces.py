"""Entrada por enlace de correo (tiendas sin proveedor de identidad).

- El enlace vale ``VIDA`` (15 min) y una sola vez; en la base solo queda el SHA-256 del
  token. El token va en el fragmento de la URL (``/entrada/correo#...``): el navegador no
  lo envía al pedir la página, así que no aparece en ningún log de accesos, y la página lo
  canjea con un POST.
- Cada petición cuenta para el límite de su dirección y de su IP, exista o no la dirección;
  por encima, ``DemasiadasPeticiones`` (429) igual para todas. Contar y anotar van en una
  transacción bajo los candados de ritmo de la dirección y de la IP (en orden): con
  peticiones a la vez nunca salen más enlaces que el límite (issue 39). Sin límite superado, quien
  pide recibe siempre la misma respuesta: el servicio devuelve ``None`` si no hay a quién
  enviar, y la web contesta lo mismo.
- Canjear exige el token y la dirección para la que se emitió.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import psycopg

from agente.servicio.entrada.personal import encargado_por_email
from agente.servicio.personas import encargado_activo
from agente.servicio.resultados import Encargado
from nucleo.claves_candado import CANDADO_RITMO_SQL
from nucleo.errores import DemasiadasPeticiones, NoAutorizado, Prohibido

__all__ = [
    "POR_DIRECCION",
    "POR_IP",
    "VENTANA",
    "VIDA",
    "EnlaceEntrada",
    "canjear_enlace",
    "emitir_enlace",
    "pedir_enlace",
]

VIDA = timedelta(minutes=15)
VENTANA = timedelta(minutes=15)
POR_DIRECCION = 3  # enlaces pedidos por dirección en VENTANA
POR_IP = 10  # enlaces pedidos desde una IP en VENTANA

CONTAR_INTENTOS_SQL = """
SELECT count(*) FILTER (WHERE clave = %(direccion)s) AS direccion,
       count(*) FILTER (WHERE clave = %(ip)s) AS ip
FROM intentos_entrada
WHERE clave IN (%(direccion)s, %(ip)s) AND creado > %(desde)s
"""
ANOTAR_INTENTO_SQL = "INSERT INTO intentos_entrada (clave, creado) VALUES (%(clave)s, %(ahora)s)"
BORRAR_VIEJOS_SQL = """
DELETE FROM intentos_entrada WHERE creado < %(desde)s
"""
BORRAR_ENLACES_VIEJOS_SQL = "DELETE FROM enlaces_entrada WHERE caduca < %(desde)s"
INSERT_ENLACE_SQL = """
INSERT INTO enlaces_entrada (hash, encargado_id, email, creado, caduca)
VALUES (%(hash)s, %(encargado_id)s, %(email)s, %(ahora)s, %(caduca)s)
"""
CANJEAR_SQL = """
UPDATE enlaces_entrada SET usado = %(ahora)s
WHERE hash = %(hash)s AND usado IS NULL AND caduca > %(ahora)s AND lower(email) = lower(%(email)s)
RETURNING encargado_id
"""

NO_VALE = "Este enlace ya no vale: se usó, caducó o es de otra dirección. Pide uno nuevo."


@dataclass(frozen=True)
class EnlaceEntrada:
    """Lo que hay que enviar: a quién y el token en claro (solo en memoria, para el correo)."""

    email: str
    nombre: str
    token: str
    caduca: datetime

    def url(self, base: str) -> str:
        """La dirección que se abre: el token va en el fragmento (el navegador no lo envía
        al pedir la página)."""
        fragmento = urlencode({"correo": self.email, "t": self.token})
        return f"{base.rstrip('/')}/entrada/correo#{fragmento}"


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _clave(tipo: str, valor: str) -> str:
    return f"{tipo}:{hashlib.sha256(valor.strip().lower().encode()).hexdigest()}"


def pedir_enlace(
    conexion: psycopg.Connection, email: str, ip: str, *, ahora: datetime | None = None
) -> EnlaceEntrada | None:
    """Anota la petición (límite de ritmo) y, si la dirección es de un encargado activo,
    guarda el hash de un token nuevo y lo devuelve para enviarlo; si no, ``None``."""
    ahora = ahora or datetime.now(UTC)
    claves = {"direccion": _clave("correo", email), "ip": _clave("ip", ip)}
    with conexion.transaction():
        for clave in sorted(claves.values()):  # en orden: dos peticiones nunca se cruzan
            conexion.execute(CANDADO_RITMO_SQL, {"clave": clave})
        # Tras el candado, en otra sentencia: cuenta con lo que confirmó quien lo soltó.
        cuenta = conexion.execute(CONTAR_INTENTOS_SQL, {**claves, "desde": ahora - VENTANA}).fetchone()
        if cuenta["direccion"] >= POR_DIRECCION or cuenta["ip"] >= POR_IP:
            raise DemasiadasPeticiones(
                "Has pedido demasiados enlaces. Espera unos minutos y vuelve a intentarlo.",
                reintentar_en=int(VENTANA.total_seconds()),
            )
        for clave in claves.values():
            conexion.execute(ANOTAR_INTENTO_SQL, {"clave": clave, "ahora": ahora})
        conexion.execute(BORRAR_VIEJOS_SQL, {"desde": ahora - 2 * VENTANA})
        conexion.execute(BORRAR_ENLACES_VIEJOS_SQL, {"desde": ahora - timedelta(days=1)})
        try:
            encargado = encargado_por_email(conexion, email)
        except Prohibido:
            return None
        return emitir_enlace(conexion, encargado.encargado_id, email, encargado.nombre, ahora=ahora)


def emitir_enlace(
    conexion: psycopg.Connection, encargado_id: str, email: str, nombre: str, *, ahora: datetime | None = None
) -> EnlaceEntrada:
    """Guarda el hash de un token nuevo para esa persona y lo devuelve (sin límite de ritmo:
    lo llaman ``pedir_enlace``, ya con el suyo, y ``agente personas primera``)."""
    ahora = ahora or datetime.now(UTC)
    token = secrets.token_urlsafe(32)
    conexion.execute(INSERT_ENLACE_SQL, {
        "hash": _hash(token), "encargado_id": encargado_id, "email": email.strip(),
        "ahora": ahora, "caduca": ahora + VIDA,
    })
    return EnlaceEntrada(email=email.strip(), nombre=nombre, token=token, caduca=ahora + VIDA)


def canjear_enlace(
    conexion: psycopg.Connection, token: str, email: str, *, ahora: datetime | None = None
) -> Encargado:
    """El encargado del enlace, que queda usado; ``NoAutorizado`` si ya se usó, caducó, no
    existe o es de otra dirección; ``Prohibido`` si la persona se dio de baja entretanto."""
    ahora = ahora or datetime.now(UTC)
    with conexion.transaction():
        fila = conexion.execute(
            CANJEAR_SQL, {"hash": _hash(token), "email": email.strip(), "ahora": ahora}
        ).fetchone()
        if fila is None:
            raise NoAutorizado(NO_VALE)
        return encargado_activo(conexion, fila["encargado_id"])
