"""La pasarela de pagos: un protocolo y una simulación sobre PostgreSQL.

Dos operaciones: ``emitir_reembolso`` devuelve dinero al medio de pago original del
cliente y ``cobrar`` le carga un importe (la diferencia de un cambio más caro). La
idempotencia la pone la pasarela, como un proveedor real con su clave de idempotencia:
repetir una operación con la misma referencia devuelve el movimiento ya creado y no
mueve dinero otra vez; la misma referencia con otro importe u otro tipo se rechaza. Por
eso la cola de movimientos (``caja.movimientos``) puede repetir la llamada sin
miedo tras una caída. Un proveedor real se enchufa implementando ``Pasarela``; sus
errores deben llegar como ``ErrorPasarela`` (con ``definitivo=True`` en los datos si
repetir no servirá: tarjeta rechazada, petición no válida).

Un proveedor real puede no terminar en la llamada: el movimiento vuelve con ``estado``
``en_curso`` (un reembolso que el banco aún procesa, un cobro que espera a que el cliente
pague el ``enlace``), ``fallido`` o ``caducado``, y se termina después por un evento
(``PasarelaConEventos.leer_evento``: webhook firmado) o al repetir la llamada.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol, runtime_checkable

from psycopg_pool import ConnectionPool

from nucleo.errores import ErrorPasarela

REEMBOLSO = "reembolso"
COBRO = "cobro"

# Estados de un movimiento en el proveedor.
COMPLETADO = "completado"
EN_CURSO = "en_curso"  # aceptado, sin terminar: lo termina un evento o una repetición
FALLIDO = "fallido"  # no se movió dinero y repetir no servirá: una persona decide
CADUCADO = "caducado"  # un cobro por enlace que no se pagó a tiempo


@dataclass(frozen=True)
class MovimientoPasarela:
    id: int
    referencia: str
    importe: Decimal
    creado: datetime
    nuevo: bool  # False si la referencia ya existía (llamada repetida)
    tipo: str = REEMBOLSO
    estado: str = COMPLETADO
    id_proveedor: str | None = None  # el id del proveedor (re_..., cs_...)
    enlace: str | None = None  # un cobro en curso: la página de pago para el cliente
    caduca: datetime | None = None  # hasta cuándo se puede pagar ese enlace
    detalle: str | None = None  # por qué falló o sigue en curso, en español


@dataclass(frozen=True)
class EventoPasarela:
    """Un evento del proveedor (webhook) ya verificado, traducido al libro.

    ``movimiento`` es None si el evento no toca a un movimiento nuestro (otro tipo de
    evento, otra aplicación en la misma cuenta): se apunta y no se hace nada.
    """

    id: str
    tipo: str
    movimiento: MovimientoPasarela | None


@dataclass(frozen=True)
class RegistroPasarela:
    """Un movimiento tal como lo tiene el proveedor (para la auditoría pasarela ↔ libro)."""

    referencia: str
    tipo: str
    importe: Decimal
    estado: str


@runtime_checkable
class Pasarela(Protocol):
    def emitir_reembolso(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        """Devuelve ``importe`` al cliente. Idempotente por ``referencia``."""
        ...

    def cobrar(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        """Cobra ``importe`` al cliente. Idempotente por ``referencia``."""
        ...


@runtime_checkable
class PasarelaConEventos(Protocol):
    """Lo que añade un proveedor que termina movimientos por webhook y tiene sus registros."""

    def leer_evento(self, cuerpo: bytes, firma: str | None) -> EventoPasarela:
        """Verifica la firma y traduce el evento; si no vale, ``EventoNoValido``."""
        ...

    def registros(self) -> list[RegistroPasarela]:
        """Los movimientos con dinero movido (o en curso) del proveedor, con su referencia."""
        ...


INSERT_MOVIMIENTO_SQL = """
INSERT INTO pasarela_movimientos (referencia, importe, tipo)
VALUES (%(referencia)s, %(importe)s, %(tipo)s)
ON CONFLICT (referencia) DO NOTHING
RETURNING id, referencia, importe, tipo, creado
"""

SELECT_MOVIMIENTO_SQL = """
SELECT id, referencia, importe, tipo, creado FROM pasarela_movimientos
WHERE referencia = %(referencia)s
"""


class PasarelaSimulada:
    """Pasarela de pruebas y demo: apunta cada movimiento en ``pasarela_movimientos``.

    ``retardo`` (segundos) se duerme antes de responder, sin conexión ni transacción
    abiertas; ``falla`` hace que toda llamada acabe en ``ErrorPasarela`` sin apuntar nada.
    """

    def __init__(
        self, *, pool: ConnectionPool, retardo: Decimal = Decimal("0"), falla: bool = False
    ) -> None:
        self.pool = pool
        self.retardo = Decimal(retardo)
        self.falla = falla

    def emitir_reembolso(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        return self._mover(REEMBOLSO, referencia, importe)

    def cobrar(self, referencia: str, importe: Decimal) -> MovimientoPasarela:
        return self._mover(COBRO, referencia, importe)

    def _mover(self, tipo: str, referencia: str, importe: Decimal) -> MovimientoPasarela:
        if not referencia:
            raise ErrorPasarela(f"la pasarela de pagos exige una referencia para el {tipo}")
        if self.retardo > 0:
            time.sleep(float(self.retardo))
        if self.falla:
            raise ErrorPasarela("la pasarela de pagos no está disponible (fallo simulado)")
        parametros = {"referencia": referencia, "importe": importe, "tipo": tipo}
        with self.pool.connection() as conexion:
            fila = conexion.execute(INSERT_MOVIMIENTO_SQL, parametros).fetchone()
            nuevo = fila is not None
            if fila is None:
                # Otra llamada con la misma referencia llegó antes: se devuelve la suya.
                fila = conexion.execute(SELECT_MOVIMIENTO_SQL, parametros).fetchone()
        if fila["importe"] != importe or fila["tipo"] != tipo:
            raise ErrorPasarela(
                f"la pasarela de pagos rechaza la referencia {referencia}: ya se usó con otro "
                "importe o en otra operación",
                referencia=referencia,
            )
        return MovimientoPasarela(
            id=fila["id"],
            referencia=fila["referencia"],
            importe=fila["importe"],
            creado=fila["creado"],
            nuevo=nuevo,
            tipo=fila["tipo"],
        )
