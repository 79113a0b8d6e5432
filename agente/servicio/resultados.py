"""Los resultados con tipo que devuelve el servicio (y los que circulan entre sus módulos)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Arreglo",
    "Ejecucion",
    "Encargado",
    "EstadoHilo",
    "InformeAuditoria",
    "PasoHistoria",
    "RegistroDecision",
    "Respuesta",
]

EstadoRespuesta = Literal["respondida", "esperando_aprobacion"]


@dataclass(frozen=True)
class Respuesta:
    """Lo que recibe quien habla con el agente: el estado del turno y el texto del cliente."""

    estado: EstadoRespuesta
    mensaje_cliente: str
    thread_id: str
    trace_id: str | None = None
    # Tras una decisión: el error de un efecto aprobado que no se pudo hacer (o None).
    fallo: str | None = None


@dataclass(frozen=True)
class Ejecucion:
    """La salida de una ejecución del grafo: el estado (``valores``) y sus interrupciones.

    Se construye desde un ``GraphOutput`` de ``invoke(..., version="v2")`` o desde un
    estado ya guardado (``desde_estado``), cuando la ejecución terminó pero nadie la cerró.
    """

    valores: dict[str, Any]
    interrupciones: tuple[Any, ...] = ()

    @classmethod
    def desde_salida(cls, salida: Any) -> Ejecucion:
        valores = salida.value if hasattr(salida, "value") else salida
        return cls(valores=dict(valores or {}), interrupciones=tuple(getattr(salida, "interrupts", None) or ()))

    @classmethod
    def desde_estado(cls, valores: dict[str, Any]) -> Ejecucion:
        return cls(valores=dict(valores or {}))

    @property
    def mensajes(self) -> list[Any]:
        return list(self.valores.get("messages", []))

    @property
    def pausa(self) -> Any | None:
        """La interrupción pendiente (una por turno en modo por lotes), o None."""
        return self.interrupciones[0] if self.interrupciones else None


@dataclass(frozen=True)
class RegistroDecision:
    """Una decisión ya escrita en ``decisiones_encargado`` (write-ahead) y aún por aplicar."""

    id: int
    thread_id: str
    interrupt_id: str
    encargado_id: str
    decisiones: list[dict[str, Any]]
    trace_id: str | None
    nota: str | None = None  # del encargado: se añade al mensaje final del cliente
    peticion: dict[str, Any] | None = None  # la de la pausa (action_requests, tool_call_ids)

    @classmethod
    def desde_fila(cls, fila: dict[str, Any]) -> RegistroDecision:
        """Desde una fila de ``decisiones_encargado`` (con ``id``, ``decisiones``...)."""
        return cls(
            id=fila["id"],
            thread_id=fila["thread_id"],
            interrupt_id=fila["interrupt_id"],
            encargado_id=fila["encargado_id"],
            decisiones=list(fila["decisiones"]),
            trace_id=fila.get("trace_id"),
            nota=fila.get("nota"),
            peticion=fila.get("peticion"),
        )

    @property
    def resume(self) -> dict[str, Any]:
        """El valor de ``Command(resume=...)``: responde solo a esa interrupción."""
        return {self.interrupt_id: {"decisions": self.decisiones}}

    @property
    def descripciones(self) -> dict[str, str]:
        """{tool_call_id: descripción} que vio quien firmó (vacío sin la petición)."""
        peticion = self.peticion or {}
        ids = peticion.get("tool_call_ids") or []
        acciones = peticion.get("action_requests") or []
        return {i: a["description"] for i, a in zip(ids, acciones, strict=False)
                if isinstance(a, dict) and isinstance(a.get("description"), str)}


@dataclass(frozen=True)
class Encargado:
    """Un firmante activo (el único que puede decidir o recibir un token), de cualquier rol.

    ``tienda``: la suya; ``tiendas``: donde firma (la suya y, si es regional, las de su
    región). ``rol``: ``encargado``, ``gerente`` o ``regional``. ``tienda`` es ``None`` en
    un regional o un administrador sin tienda propia (``sql/037_alta.sql``);
    ``administrador``: gestiona todo el alta (``agente/servicio/alta/``).
    """

    encargado_id: str
    tienda: str | None
    nombre: str
    rol: str = "encargado"
    tiendas: tuple[str, ...] = ()
    administrador: bool = False

    def __post_init__(self) -> None:
        if not self.tiendas and self.tienda is not None:
            object.__setattr__(self, "tiendas", (self.tienda,))


class Arreglo(TypedDict):
    """Lo que el conciliador hizo con un hilo."""

    thread_id: str
    accion: str  # reencolada | decision_aplicada | ejecucion_completada | decision_cerrada | ...


class InformeAuditoria(TypedDict):
    sin_firma: list[dict[str, Any]]
    # Efectos cuyas firmas no cumplen la autoridad guardada, o cuyo requisito se alteró.
    firmas: list[dict[str, Any]]
    # Decisiones aplicadas cuyo efecto aprobado no se pudo hacer (no son hallazgos).
    fallidas: list[dict[str, Any]]
    tiempos: list[dict[str, Any]]
    # Comprobaciones del libro (``auditoria_libro.COMPROBACIONES``) -> hallazgos.
    libro: dict[str, list[dict[str, Any]]]
    # El plano de control (``auditoria_politica.COMPROBACIONES``) -> hallazgos.
    politica: dict[str, list[dict[str, Any]]]
    # Lo que un orden en serie no habría dejado (``auditoria_serie.COMPROBACIONES``) -> hallazgos.
    serie: dict[str, list[dict[str, Any]]]
    # Por qué canal llegaron las firmas (web, cli, protocolo) por tienda; no son hallazgos.
    canales: NotRequired[list[dict[str, Any]]]
    # Lo que el agente dijo al cliente y no pasó (``auditoria.verdad``): hallazgos.
    afirmaciones: NotRequired[list[dict[str, Any]]]


@dataclass(frozen=True)
class PasoHistoria:
    checkpoint_id: str | None
    paso: int | None
    siguiente: tuple[str, ...]
    mensajes: int


@dataclass(frozen=True)
class EstadoHilo:
    """Lo que un ingeniero ve de un hilo (``agente hilo``)."""

    consulta: dict[str, Any]
    siguiente: tuple[str, ...]
    interrupciones: list[dict[str, Any]]
    mensajes: list[Any]
    historia: list[PasoHistoria]
