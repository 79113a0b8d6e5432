"""Un lote de registros en JSON lines (la API por lotes y ``agente importar``): se aplican
los válidos y cada inválido se informa con su línea; un registro nunca queda a medias.

En flujo: se lee línea a línea y se confirma por tramos de ``TRAMO`` registros, así que la
memoria no crece con el fichero. Cada tramo se intenta de una vez (una transacción); si un
registro falla, el tramo se deshace y se repite registro a registro, cada uno en su punto
de guardado: los buenos se aplican y el malo se informa. Un lote con pocos errores cuesta
casi lo mismo que uno limpio. Los clientes y pedidos seguidos de un tramo van en bloque (``masivo``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import psycopg

from agente.servicio.tienda import aplicar
from agente.servicio.tienda.aplicar import Aplicado
from agente.servicio.tienda.masivo import aplicar_clientes_nuevos, aplicar_pedidos_nuevos
from agente.servicio.tienda.registros import leer_linea
from nucleo.errores import ErrorDominio, Prohibido, RegistroNoValido, RegistroRechazado

__all__ = ["ALCANCE_DE", "Fallo", "InformeLote", "aplicar_registro", "procesar"]

TRAMO = 500
MAX_LINEA = 1024 * 1024  # una línea de más de 1 MiB no es un registro razonable
EN_BLOQUE = {"cliente": aplicar_clientes_nuevos, "pedido": aplicar_pedidos_nuevos}
ALCANCE_DE = {"cliente": "clientes", "producto": "productos", "stock": "stock", "pedido": "pedidos",
              "estado": "estados"}


@dataclass(frozen=True)
class Fallo:
    linea: int
    estado_http: int
    mensaje: str
    campo: str = ""

    def como_dict(self) -> dict:
        return {"linea": self.linea, "estado": self.estado_http, "campo": self.campo, "detalle": self.mensaje}


@dataclass
class InformeLote:
    lineas: int = 0
    creados: int = 0
    actualizados: int = 0
    sin_cambios: int = 0
    invalidos: int = 0
    fallos: list[Fallo] = field(default_factory=list)  # como mucho ``max_fallos``

    def contar(self, hecho: Aplicado) -> None:
        if hecho.resultado == "creado":
            self.creados += 1
        elif hecho.resultado == "actualizado":
            self.actualizados += 1
        else:
            self.sin_cambios += 1

    def como_dict(self) -> dict:
        return {"lineas": self.lineas, "creados": self.creados, "actualizados": self.actualizados,
                "sin_cambios": self.sin_cambios, "invalidos": self.invalidos,
                "fallos": [f.como_dict() for f in self.fallos]}


def aplicar_registro(cur, tienda: str, registro, clave: str | None) -> Aplicado:
    tipo = registro.tipo
    if tipo == "cliente":
        return aplicar.aplicar_cliente(cur, tienda, registro.id, registro, clave)
    if tipo == "producto":
        return aplicar.aplicar_producto(cur, tienda, registro.sku, registro, clave)
    if tipo == "stock":
        return aplicar.aplicar_stock(cur, tienda, registro.sku, registro, clave)
    if tipo == "pedido":
        return aplicar.aplicar_pedido(cur, tienda, registro.id, registro, clave)
    return aplicar.aplicar_estado(cur, tienda, registro.id, registro, clave)


def _fallo(numero: int, exc: Exception) -> Fallo:
    if isinstance(exc, ErrorDominio):
        return Fallo(numero, exc.estado_http, exc.mensaje, exc.datos.get("campo", ""))
    # Lo que la base rechaza y la validación no vio (una CHECK): el registro no se aplica.
    detalle = getattr(getattr(exc, "diag", None), "message_primary", None) or type(exc).__name__
    return Fallo(numero, 409, f"la base de datos rechazó el registro: {detalle}")


def procesar(
    conexion: psycopg.Connection,
    lineas: Iterable[bytes | str],
    *,
    tienda: str,
    alcances: tuple[str, ...] | None = None,
    clave: str | None = None,
    al_fallar: Callable[[Fallo], None] | None = None,
    max_fallos: int = 1000,
    tramo: int = TRAMO,
) -> InformeLote:
    """Aplica cada línea (numeradas desde 1; las vacías se saltan). ``alcances=None``: todos
    (la CLI, que ya habla con la base). ``al_fallar`` recibe cada fallo al momento."""
    informe = InformeLote()

    def anotar(f: Fallo) -> None:
        informe.invalidos += 1
        if len(informe.fallos) < max_fallos:
            informe.fallos.append(f)
        if al_fallar is not None:
            al_fallar(f)

    pendientes: list[tuple[int, object]] = []
    for numero, linea in enumerate(lineas, start=1):
        informe.lineas = numero
        if not linea.strip():
            continue
        try:
            if len(linea) > MAX_LINEA:
                raise RegistroNoValido(f"la línea tiene más de {MAX_LINEA // 1024} KiB")
            registro = leer_linea(linea)
            if alcances is not None and ALCANCE_DE[registro.tipo] not in alcances:
                raise Prohibido(f"la clave no tiene el alcance «{ALCANCE_DE[registro.tipo]}»")
        except (RegistroNoValido, Prohibido) as exc:
            anotar(_fallo(numero, exc))
            continue
        pendientes.append((numero, registro))
        if len(pendientes) >= tramo:
            _tramo(conexion, pendientes, tienda, clave, informe, anotar)
            pendientes = []
    if pendientes:
        _tramo(conexion, pendientes, tienda, clave, informe, anotar)
    return informe


def _en_bloque(cur, tienda: str, bloque: list, clave: str | None) -> list[Aplicado]:
    if not bloque:
        return []
    return EN_BLOQUE[bloque[0].tipo](cur, tienda, bloque, clave)


def _tramo(conexion, pendientes, tienda, clave, informe: InformeLote, anotar) -> None:
    hechos: list[Aplicado] = []
    try:
        with conexion.transaction(), conexion.cursor() as cur:
            # Los clientes seguidos y los pedidos seguidos van en bloque; cualquier otro registro
            # vacía antes el bloque: un cliente que llega antes que sus pedidos ya está.
            bloque: list = []
            for _numero, registro in pendientes:
                if bloque and registro.tipo != bloque[0].tipo:
                    hechos.extend(_en_bloque(cur, tienda, bloque, clave))
                    bloque = []
                if registro.tipo in EN_BLOQUE:
                    bloque.append(registro)
                else:
                    hechos.append(aplicar_registro(cur, tienda, registro, clave))
            hechos.extend(_en_bloque(cur, tienda, bloque, clave))
    except (RegistroRechazado, ErrorDominio, psycopg.errors.IntegrityError, psycopg.errors.DataError):
        # Uno falló y el tramo se deshizo entero: otra vez, cada registro por su cuenta.
        with conexion.transaction(), conexion.cursor() as cur:
            for numero, registro in pendientes:
                try:
                    with conexion.transaction():
                        informe.contar(aplicar_registro(cur, tienda, registro, clave))
                except (ErrorDominio, psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:
                    anotar(_fallo(numero, exc))
        return
    for hecho in hechos:
        informe.contar(hecho)
