"""El registro de herramientas: el único sitio que dice qué es cada herramienta.

Cada ``Herramienta`` reúne lo que el resto del producto necesita saber de ella: cómo se
construye (el ``@tool`` que lee el modelo), si mueve dinero o stock, si un reintento es
seguro, qué decisiones admite un encargado cuando la política pide firma, con qué regla
de ``politicas/`` se evalúa, cuántas veces cabe en un turno y los textos que leen el
encargado y el cliente. El middleware, el servicio, la auditoría, el modelo offline y la
web leen de aquí; ningún otro módulo guarda su propia lista de nombres.

Añadir una herramienta es añadir una entrada (o ``Registro.con(...)`` en una prueba):

    REGISTRO.con(Herramienta(nombre="consultar_horario", crear=..., resumen="..."))

Una herramienta que mueve dinero o género ejecuta una operación con efecto declarada
(``nucleo.operaciones``): ``Herramienta.de_operacion`` toma de la declaración la
regla, las decisiones, el título, los campos de la tarjeta y el texto de espera.

Trampas que este registro evita:

- ``decisiones`` vacío = la herramienta nunca se interrumpe. Con decisiones, se listan
  explícitas: ``True`` en ``interrupt_on`` permitiría ``respond``, que finge un resultado
  sin ejecutar la herramienta (``docs/trampas.md``).
- ``reintento_seguro`` solo en herramientas idempotentes por ``tool_call_id``: el
  ``ToolRetryMiddleware`` repite la llamada entera.
- Una herramienta con decisiones necesita ``regla``: sin regla, la política firma
  siempre (falla cerrada), pero es un error de configuración que se rechaza aquí.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from langchain.tools import BaseTool

from herramientas import envoltorios
from herramientas.envoltorios import Dependencias
from nucleo.operacion import DECISIONES_VALIDAS, Campo, OperacionConEfecto
from operaciones import carpetas

__all__ = [
    "CONSULTAR_ENCARGADO",
    "CONSULTAR_PEDIDO",
    "CONSULTAR_POLITICA",
    "DECISIONES_VALIDAS",
    "REGISTRO",
    "STOCK_ALTERNATIVAS",
    "Dependencias",
    "Herramienta",
    "Registro",
]

CONSULTAR_PEDIDO = "consultar_pedido"
CONSULTAR_POLITICA = "consultar_politica"
STOCK_ALTERNATIVAS = "stock_alternativas"
CONSULTAR_ENCARGADO = "consultar_encargado"


def _texto_fijo(texto: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda _args: texto


@dataclass(frozen=True, kw_only=True)
class Herramienta:
    """Lo que el producto sabe de una herramienta.

    - ``crear``: recibe ``Dependencias`` (pool y pasarela) y devuelve el ``BaseTool``
      con ese ``nombre``; su docstring y su esquema son lo que lee el modelo.
    - ``efectos``: mueve dinero o stock (la auditoría la vigila).
    - ``reintento_seguro``: idempotente; un error transitorio de base de datos se reintenta.
    - ``decisiones``: las que admite el encargado si la política pide firma; vacío = nunca
      se interrumpe.
    - ``regla``: nombre de la regla de ``politicas/`` que decide si pide firma.
    - ``max_por_turno``: llamadas como mucho en un turno del cliente (None = sin tope).
    - ``titulo_encargado``: título de la tarjeta del encargado.
    - ``texto_espera``: ``args -> str``, lo que espera el cliente («el reembolso de
      120,00 EUR del pedido P-...»); se inserta en el aviso de espera.
    - ``campos_editables``: argumentos que un encargado puede cambiar al editar; un
      importe editado nunca puede subir.
    - ``campos_tarjeta``: cómo enseña la tarjeta cada argumento (etiqueta, si es dinero).
    - ``operacion``: el nombre de la operación con efecto que ejecuta, si ejecuta una.
    """

    nombre: str
    crear: Callable[[Dependencias], BaseTool]
    efectos: bool = False
    reintento_seguro: bool = False
    decisiones: tuple[str, ...] = ()
    regla: str | None = None
    max_por_turno: int | None = None
    titulo_encargado: str = ""
    texto_espera: Callable[[Mapping[str, Any]], str] = field(
        default=_texto_fijo("tu solicitud"), compare=False
    )
    campos_editables: tuple[str, ...] = ()
    campos_tarjeta: tuple[Campo, ...] = ()
    operacion: str | None = None

    @classmethod
    def de_operacion(
        cls,
        operacion: OperacionConEfecto,
        *,
        nombre: str,
        crear: Callable[[Dependencias], BaseTool],
        reintento_seguro: bool = False,
        max_por_turno: int | None = None,
    ) -> Herramienta:
        """La herramienta ``nombre`` de ``operacion``: efectos, regla, decisiones, título,
        campos y texto de espera salen de la declaración."""
        if nombre not in operacion.herramientas:
            raise ValueError(f"{nombre}: la operación {operacion.nombre} no declara esta herramienta")
        return cls(
            nombre=nombre,
            crear=crear,
            efectos=True,
            reintento_seguro=reintento_seguro,
            decisiones=operacion.decisiones,
            regla=operacion.regla,
            max_por_turno=max_por_turno,
            titulo_encargado=operacion.titulo,
            texto_espera=operacion.texto_espera,
            campos_editables=operacion.campos_editables,
            campos_tarjeta=operacion.campos,
            operacion=operacion.nombre,
        )

    def __post_init__(self) -> None:
        if not self.nombre or not self.nombre.isidentifier():
            raise ValueError(f"nombre de herramienta no válido: {self.nombre!r}")
        desconocidas = set(self.decisiones) - DECISIONES_VALIDAS
        if desconocidas:
            raise ValueError(f"{self.nombre}: decisiones desconocidas {sorted(desconocidas)}")
        if self.decisiones and not self.regla:
            raise ValueError(f"{self.nombre}: una herramienta con firma necesita una regla")
        if self.campos_editables and "edit" not in self.decisiones:
            raise ValueError(f"{self.nombre}: campos editables sin la decisión «edit»")
        if self.max_por_turno is not None and self.max_por_turno < 1:
            raise ValueError(f"{self.nombre}: max_por_turno debe ser al menos 1")

    @property
    def con_firma(self) -> bool:
        return bool(self.decisiones)


class Registro:
    """Las herramientas del agente, en orden. Inmutable: ``con`` devuelve uno nuevo.

    ``herramientas`` puede ser una función que las devuelve: entonces se leen la primera
    vez que se usa el registro (``REGISTRO``: una herramienta de carpeta importa este
    paquete, ``operaciones/carpetas.py``).
    """

    def __init__(self, herramientas: tuple[Herramienta, ...] | list[Herramienta]
                 | Callable[[], tuple[Herramienta, ...]]) -> None:
        self._fuente = herramientas
        self._leidas: Mapping[str, Herramienta] | None = None
        if not callable(herramientas):
            self._leidas = self._validar(herramientas)

    @staticmethod
    def _validar(herramientas: tuple[Herramienta, ...] | list[Herramienta]) -> Mapping[str, Herramienta]:
        nombres = [h.nombre for h in herramientas]
        repetidos = {n for n in nombres if nombres.count(n) > 1}
        if repetidos:
            raise ValueError(f"herramientas repetidas en el registro: {sorted(repetidos)}")
        return MappingProxyType({h.nombre: h for h in herramientas})

    @property
    def _por_nombre(self) -> Mapping[str, Herramienta]:
        if self._leidas is None:
            self._leidas = self._validar(tuple(self._fuente()))
        return self._leidas

    def con(self, *nuevas: Herramienta) -> Registro:
        return Registro((*self._por_nombre.values(), *nuevas))

    def __iter__(self) -> Iterator[Herramienta]:
        return iter(self._por_nombre.values())

    def __contains__(self, nombre: object) -> bool:
        return nombre in self._por_nombre

    def __getitem__(self, nombre: str) -> Herramienta:
        return self._por_nombre[nombre]

    def get(self, nombre: str | None) -> Herramienta | None:
        return self._por_nombre.get(nombre or "")

    @property
    def nombres(self) -> tuple[str, ...]:
        return tuple(self._por_nombre)

    def con_firma(self) -> tuple[Herramienta, ...]:
        return tuple(h for h in self if h.con_firma)

    def decisiones_permitidas(self) -> dict[str, list[str]]:
        return {h.nombre: list(h.decisiones) for h in self if h.con_firma}

    def reglas(self) -> dict[str, str | None]:
        """``nombre -> regla`` de cada herramienta: lo que recibe ``PoliticaAprobacion``.

        ``None`` = sin decisiones: la política nunca pide firma para ella (ni consulta la
        base). Una herramienta que no esté aquí, o cuya regla no exista en
        ``politicas/``, pide firma siempre (falla cerrada).
        """
        return {h.nombre: (h.regla if h.con_firma else None) for h in self}

    def reintentables(self) -> list[str]:
        return [h.nombre for h in self if h.reintento_seguro]

    def maximos_por_turno(self) -> dict[str, int]:
        return {h.nombre: h.max_por_turno for h in self if h.max_por_turno is not None}

    def con_efectos(self) -> tuple[str, ...]:
        return tuple(h.nombre for h in self if h.efectos)

    def construir(self, dependencias: Dependencias) -> list[BaseTool]:
        herramientas = []
        for definicion in self:
            construida = definicion.crear(dependencias)
            if construida.name != definicion.nombre:
                raise ValueError(
                    f"la herramienta registrada como {definicion.nombre!r} se construyó "
                    f"como {construida.name!r}"
                )
            herramientas.append(construida)
        return herramientas


def _herramientas() -> tuple[Herramienta, ...]:
    return (
        Herramienta(
            nombre=CONSULTAR_PEDIDO,
            crear=envoltorios.crear_consultar_pedido,
            reintento_seguro=True,
        ),
        Herramienta(
            nombre=CONSULTAR_POLITICA,
            crear=envoltorios.crear_consultar_politica,
            reintento_seguro=True,
        ),
        Herramienta(
            nombre=STOCK_ALTERNATIVAS,
            crear=envoltorios.crear_stock_alternativas,
            reintento_seguro=True,
        ),
        Herramienta(
            nombre=CONSULTAR_ENCARGADO,
            crear=envoltorios.crear_consultar_encargado,
            decisiones=("respond",),
            regla="consulta",
            titulo_encargado="Consulta al encargado",
            texto_espera=_texto_fijo("tu consulta"),
            campos_tarjeta=(Campo(nombre="pregunta", etiqueta="Pregunta"),),
        ),
        # Una por carpeta de ``operaciones/``: su ``herramienta.py`` dice cómo se construye.
        *(
            Herramienta.de_operacion(
                carpetas.pieza(nombre, "declaracion").OPERACION,
                nombre=carpetas.pieza(nombre, "declaracion").OPERACION.herramienta,
                crear=carpetas.pieza(nombre, "herramienta").crear,
                reintento_seguro=True,
                max_por_turno=carpetas.pieza(nombre, "herramienta").MAX_POR_TURNO,
            )
            for nombre in carpetas.nombres()
        ),
    )


REGISTRO = Registro(_herramientas)
