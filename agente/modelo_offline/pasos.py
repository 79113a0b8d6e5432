"""Lo común a los pasos de cada tarea: el ``Paso``, el ``Contexto`` del turno y el pedido leído.

Aparte de ``plan`` para que los módulos de cada operación puedan dar sus propios pasos sin
importar ``plan`` (ni ``lectura``: una tarea aquí es cualquier cosa con ``pedido``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agente.modelo_offline import matices, redaccion
from agente.modelo_offline.resultados import Llamada
from herramientas.registro import CONSULTAR_PEDIDO, REGISTRO, Registro

__all__ = ["ConPedido", "Contexto", "Paso", "fin", "hecha_o_pedido", "lineas_de", "pedido_consultado",
           "unidades_limitadas"]


class ConPedido(Protocol):
    @property
    def pedido(self) -> str | None: ...


@dataclass(frozen=True, kw_only=True)
class Paso:
    """Siguiente paso de una tarea: leer, actuar (operación con firma posible) o terminar.

    ``leer`` y ``actuar`` llevan ``nombre`` (una herramienta) y ``args``; ``fin``, ``texto``.
    """

    tipo: Literal["leer", "actuar", "fin"]
    nombre: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    texto: str = ""

    def __post_init__(self) -> None:
        if self.tipo not in ("leer", "actuar", "fin"):
            raise ValueError(f"tipo de paso desconocido: {self.tipo!r}")
        if (self.tipo == "fin") == bool(self.nombre):
            raise ValueError("un paso leer/actuar nombra una herramienta; un paso fin, no")


def fin(texto: str) -> Paso:
    return Paso(tipo="fin", texto=texto)


class Contexto:
    """Llamadas ya hechas en el turno actual y herramientas disponibles (None = todas)."""

    def __init__(
        self,
        *,
        llamadas: Sequence[Llamada],
        disponibles: set[str] | None,
        registro: Registro = REGISTRO,
    ) -> None:
        self.llamadas = list(llamadas)
        self.disponibles = None if disponibles is None else set(disponibles)
        self.registro = registro

    def hay(self, nombre: str) -> bool:
        return self.disponibles is None or nombre in self.disponibles

    def buscar(self, nombre: str, **filtro: Any) -> Llamada | None:
        """La última llamada a ``nombre`` con esos argumentos (sin distinguir mayúsculas)."""
        for llamada in reversed(self.llamadas):
            if llamada.nombre != nombre:
                continue
            if all(str(llamada.args.get(k, "")).upper() == str(v).upper() for k, v in filtro.items()):
                return llamada
        return None

    def pedir(self, nombre: str, args: dict[str, Any]) -> Paso:
        """La llamada a ``nombre``: ``actuar`` si puede pedir firma, si no ``leer``."""
        if not self.hay(nombre):
            return fin(redaccion.sin_herramienta(nombre))
        definicion = self.registro.get(nombre)
        tipo: Literal["leer", "actuar"] = "actuar" if definicion and definicion.con_firma else "leer"
        return Paso(tipo=tipo, nombre=nombre, args=args)


def pedido_consultado(tarea: ConPedido, ctx: Contexto, accion: str) -> Paso | dict:
    """El JSON del pedido si ya se leyó; si no, el paso que toca (leerlo o explicar por qué no)."""
    if not tarea.pedido:
        return fin(redaccion.pedir_pedido(accion))
    llamada = ctx.buscar(CONSULTAR_PEDIDO, pedido=tarea.pedido)
    if llamada is None:
        return ctx.pedir(CONSULTAR_PEDIDO, {"pedido": tarea.pedido})
    resultado = llamada.resultado
    if resultado.tipo == "pendiente":
        return fin(redaccion.esperando_pedido(tarea.pedido))
    if resultado.tipo != "ok" or not isinstance(resultado.datos, dict):
        return fin(redaccion.pedido_no_consultado(tarea.pedido, resultado))
    return resultado.datos


def hecha_o_pedido(
    tarea: ConPedido, ctx: Contexto, nombre: str, redactar: Callable[[str | None, Llamada], str], accion: str
) -> Paso | dict:
    """Si la operación ``nombre`` ya volvió en este turno, su respuesta; si no, el pedido."""
    hecha = ctx.buscar(nombre, pedido=tarea.pedido) if tarea.pedido else None
    if hecha is not None:
        return fin(redactar(tarea.pedido, hecha))
    return pedido_consultado(tarea, ctx, accion)


def lineas_de(pedido: dict) -> list[dict]:
    return [linea for linea in pedido.get("lineas") or [] if isinstance(linea, dict)]


def unidades_limitadas(texto: str, linea: dict) -> int | None:
    """Las unidades que el cliente limita de ``linea`` («una sartén» de dos); None = las libres."""
    cuantas = matices.unidades_nombradas(texto, str(linea.get("nombre", "")))
    libres = linea.get("unidades_libres", linea.get("unidades"))
    return cuantas if cuantas and isinstance(libres, int) and cuantas < libres else None
