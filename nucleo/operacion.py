"""Qué declara una operación con efecto: todo lo que el resto del producto lee de ella.

Una operación con efecto (un reembolso, un cambio de producto...) mueve dinero o
género. Cada sitio que la trata (la política, la matriz de autoridad, la auditoría, la
tarjeta del encargado, el historial del cliente, el modelo offline, la instantánea de la
evaluación) lee su ``OperacionConEfecto`` en vez de nombrarla a mano. Las declaraciones
de la tienda están en ``nucleo.operaciones``.

Todo se valida al construir (``ValueError`` que nombra la parte que falta o no vale),
también al copiar con ``dataclasses.replace``. Lo que cruza capas (que la regla exista en
``politicas/``, que la herramienta esté en el registro, que la matriz guardada tenga sus
filas...) lo comprueban ``agente.servicio.politica.comprobar_operaciones`` al arrancar y
``tests/integracion/test_operaciones_declaradas.py``.

Trampa: las partes SQL (``EnHistorial.sql``, ``EnInstantanea``) son texto del producto,
nunca del usuario; los nombres de tabla y columna se validan como identificadores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

__all__ = [
    "DECISIONES_VALIDAS",
    "Campo",
    "EnHistorial",
    "EnInstantanea",
    "EnLibro",
    "EnMatriz",
    "EnTarjeta",
    "Numeracion",
    "Offline",
    "OperacionConEfecto",
]

DECISIONES_VALIDAS = frozenset({"approve", "edit", "reject", "respond"})
# Lo que la pasarela sabe hacer (caja.pasarela: REEMBOLSO y COBRO).
MOVIMIENTOS_PASARELA = frozenset({"reembolso", "cobro"})

_REGLA = re.compile(r"^[a-z_]+$")  # el CHECK de reglas_autoridad.regla (sql/008)
_PREFIJO = re.compile(r"^[A-Z]{2}$")  # «RE» de RE-000001
_MARCA = re.compile(r"\{(\w+)(?::euros)?\}")  # «{importe:euros}» en EnHistorial.detalle


def _identificador(valor: Any, que: str) -> None:
    if not isinstance(valor, str) or not valor.isidentifier():
        raise ValueError(f"{que}: {valor!r} no es un identificador")


def _texto(valor: Any, que: str) -> None:
    if not isinstance(valor, str) or not valor.strip():
        raise ValueError(f"{que}: falta el texto")


@dataclass(frozen=True, kw_only=True)
class Campo:
    """Un argumento de la herramienta tal como lo enseña la tarjeta: ``etiqueta`` en español;
    ``dinero``: un importe (se escribe «120,00 EUR» y se edita en euros)."""

    nombre: str
    etiqueta: str
    dinero: bool = False

    def __post_init__(self) -> None:
        _identificador(self.nombre, "campo de la tarjeta")
        _texto(self.etiqueta, f"etiqueta del campo {self.nombre}")

    def como_json(self) -> dict[str, Any]:
        return {"campo": self.nombre, "etiqueta": self.etiqueta, "dinero": self.dinero}


@dataclass(frozen=True, kw_only=True)
class EnMatriz:
    """La operación en la matriz de autoridad y en el gobierno de la política.

    ``singular``: «este reembolso» (el motivo de una firma que no vale); ``plural``:
    «reembolsos» («Límite de gerente en reembolsos»). ``limites`` (rol -> importe, None =
    sin límite) y ``dos_firmas_por_encima``: las filas de la matriz por defecto (las escribe
    ``migrar`` en cada matriz vigente, ``agente/bd/derivados.py``); sin ellas en la base, el
    servicio no arranca.
    """

    singular: str
    plural: str
    limites: Mapping[str, Decimal | None]
    dos_firmas_por_encima: Decimal | None = None

    def __post_init__(self) -> None:
        _texto(self.singular, "nombre de la operación en la matriz (singular)")
        _texto(self.plural, "nombre de la operación en la matriz (plural)")
        if not self.limites:
            raise ValueError("filas de la matriz: faltan los límites por rol")
        if list(self.limites.values())[-1] is not None:
            raise ValueError("filas de la matriz: el rol más alto firma sin límite")
        object.__setattr__(self, "limites", MappingProxyType(dict(self.limites)))


@dataclass(frozen=True, kw_only=True)
class EnLibro:
    """Cómo entra en el libro y en la pasarela.

    ``tabla``: donde se asienta (una fila por efecto, idempotente por ``thread_id`` y
    ``tool_call_id``, con ``id``, ``numero``, ``pedido_id``, ``cliente_id``, ``tienda`` y
    ``aprobado_por``); ``prefijo``: el de su número («RE»); ``importe``: la columna con lo
    que autoriza la firma; ``creado``: su fecha. La vista ``efectos`` (la que lee la
    auditoría) la une a las demás con esa forma. ``movimientos``: lo que mueve por la
    pasarela («reembolso», «cobro»). ``compensa``: si consume unidades del pedido, su
    columna en ``compensaciones_unidad`` (la CHECK «una operación por unidad» las suma
    todas). ``conceptos``: los de sus reembolsos, si no son los de ``sql/``. La vista y las CHECK se generan de aquí (``agente.bd.derivados``): ninguna
    migración las copia.
    """

    tabla: str
    prefijo: str
    importe: str
    creado: str
    movimientos: tuple[str, ...] = ()
    compensa: str | None = None
    # Los conceptos de reembolso que añade (la CHECK de ``reembolsos.concepto`` los suma a
    # los de ``sql/``; la genera ``agente.bd.derivados``).
    conceptos: tuple[str, ...] = ()
    # Solo se hace con el pedido sin enviar: sus reembolsos ajustan el precio y el pedido sigue
    # pendiente (la auditoría no lo toma por un pedido reembolsado que volvió a pendiente).
    antes_del_envio: bool = False
    # Sus pausas reservan unidades del pedido: otra conversación del cliente que pide lo mismo
    # mientras espera no abre otra tarjeta (la vista ``reservas_pendientes``, derivada).
    reserva: bool = False

    def __post_init__(self) -> None:
        for que, valor in (("tabla", self.tabla), ("columna del importe", self.importe),
                           ("columna de la fecha", self.creado)):
            _identificador(valor, f"libro: {que}")
        if self.compensa is not None:
            _identificador(self.compensa, "libro: columna en compensaciones_unidad")
        for concepto in self.conceptos:
            _identificador(concepto, "libro: concepto de reembolso")
        if not _PREFIJO.match(self.prefijo or ""):
            raise ValueError(f"libro: prefijo de número no válido: {self.prefijo!r}")
        desconocidos = set(self.movimientos) - MOVIMIENTOS_PASARELA
        if desconocidos:
            raise ValueError(f"libro: movimientos que la pasarela no hace: {sorted(desconocidos)}")


@dataclass(frozen=True, kw_only=True)
class EnHistorial:
    """La operación en el historial del cliente de la ficha (los últimos 90 días).

    ``sql``: una expresión que da la lista JSON de sus filas, más reciente primero, con
    ``%(cliente)s`` y ``%(dias)s`` (cada fila con ``numero``, ``pedido`` y ``fecha``);
    ``clave``: su nombre en la respuesta; ``etiqueta``: «Reembolso RE-000001»; ``plural``:
    «3 reembolsos»; ``detalle``: la plantilla de cada fila (``{campo}``, ``{campo:euros}``).
    """

    clave: str
    etiqueta: str
    plural: str
    detalle: str
    sql: str

    def __post_init__(self) -> None:
        _identificador(self.clave, "historial: clave")
        _texto(self.etiqueta, "historial: etiqueta")
        _texto(self.plural, "historial: plural")
        _texto(self.sql, "historial: consulta")
        if not _MARCA.search(self.detalle or ""):
            raise ValueError("historial: el detalle no enseña ningún campo")
        for parametro in ("%(cliente)s", "%(dias)s"):
            if parametro not in self.sql:
                raise ValueError(f"historial: la consulta no filtra por {parametro}")

    def como_json(self) -> dict[str, str]:
        return {"clave": self.clave, "etiqueta": self.etiqueta, "plural": self.plural, "detalle": self.detalle}


@dataclass(frozen=True, kw_only=True)
class Numeracion:
    """Un número que el cliente puede leer: ``marcador`` (``{reembolso}`` en una tarea de
    evaluación), ``prefijo`` («RE») y ``sql`` (``SELECT numero, id ...``)."""

    marcador: str
    prefijo: str
    sql: str

    def __post_init__(self) -> None:
        _identificador(self.marcador, "numeración: marcador")
        if not _PREFIJO.match(self.prefijo or ""):
            raise ValueError(f"numeración {self.marcador}: prefijo no válido: {self.prefijo!r}")
        _texto(self.sql, f"numeración {self.marcador}: consulta")


@dataclass(frozen=True, kw_only=True)
class EnInstantanea:
    """Lo que registra la instantánea de la evaluación (``agente.evaluacion.instantanea``).

    ``tablas``: tabla -> ``SELECT`` normalizado (sin ids, números ni fechas) y ordenado;
    ``numeros``: los números reales que una tarea puede citar.
    """

    tablas: Mapping[str, str]
    numeros: tuple[Numeracion, ...]

    def __post_init__(self) -> None:
        if not self.tablas:
            raise ValueError("instantánea: ninguna tabla")
        for tabla, consulta in self.tablas.items():
            _identificador(tabla, "instantánea: tabla")
            _texto(consulta, f"instantánea: consulta de {tabla}")
        if not self.numeros:
            raise ValueError("instantánea: ninguna numeración")
        object.__setattr__(self, "tablas", MappingProxyType(dict(self.tablas)))


@dataclass(frozen=True, kw_only=True)
class Offline:
    """La operación en el modelo offline (``agente.modelo_offline``).

    ``intencion``: la de ``lectura.Tarea``; ``patron``: lo que la reconoce en el texto
    normalizado (minúsculas, sin tildes); ``palabra``: cómo la nombra al cliente («el
    reembolso del pedido...»); ``clave_numero``: la clave del número en el JSON de la
    herramienta.
    """

    intencion: str
    patron: str
    palabra: str
    clave_numero: str

    def __post_init__(self) -> None:
        _identificador(self.intencion, "offline: intención")
        _texto(self.patron, "offline: patrón")
        re.compile(self.patron)
        _texto(self.palabra, "offline: palabra")
        _identificador(self.clave_numero, "offline: clave del número")


@dataclass(frozen=True, kw_only=True)
class EnTarjeta:
    """Lo que la tarjeta del encargado enseña además de los argumentos de la llamada.

    ``sql``: una consulta de solo lectura sobre los argumentos (``%(args)s``, jsonb) y el
    cliente de la aprobación (``%(cliente)s``) que da una fila o ninguna; cada columna es un
    dato, con su etiqueta en español como alias («"Producto nuevo"»). ``dinero``: las
    etiquetas que son importes (se enseñan en euros). Trampa: filtra siempre por
    ``%(cliente)s``, los argumentos los escribió el modelo.
    """

    sql: str
    dinero: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _texto(self.sql, "tarjeta: consulta")
        for parametro in ("%(args)s", "%(cliente)s"):
            if parametro not in self.sql:
                raise ValueError(f"tarjeta: la consulta no usa {parametro}")


@dataclass(frozen=True, kw_only=True)
class OperacionConEfecto:
    """Una clase de efecto (reembolso, cambio...) y todo lo que el producto lee de ella.

    - ``nombre``: su tipo en la vista ``efectos`` y en la auditoría («reembolso»).
    - ``herramientas``: las del registro que la ejecutan (``Herramienta.de_operacion``).
    - ``regla``: la regla de ``politicas/reglas`` que decide si pide firma, que es también
      su regla en la matriz de autoridad; ``hechos``: los de ``politicas.hechos`` que lee.
    - ``matriz``: nombres y filas por defecto en la matriz de autoridad.
    - ``libro``: tabla, número e importe en el libro y movimientos de la pasarela.
    - ``titulo``, ``decisiones``, ``campos``, ``campos_editables``: la tarjeta del
      encargado (título, botones, etiquetas de cada argumento y lo que se puede editar).
    - ``historial``: cómo la enseña el historial del cliente en la ficha; ``tarjeta``: lo
      que la ficha añade a los argumentos (nombres, precios, direcciones...), si algo.
    - ``texto_espera``: ``args -> str``, lo que lee el cliente mientras espera la firma
      («el reembolso de 120,00 EUR del pedido P-...»).
    - ``offline``: su intención en el modelo offline; ``instantanea``: lo que registra la
      instantánea de la evaluación.
    """

    nombre: str
    herramientas: tuple[str, ...]
    regla: str
    hechos: tuple[str, ...]
    matriz: EnMatriz
    libro: EnLibro
    titulo: str
    decisiones: tuple[str, ...]
    campos: tuple[Campo, ...]
    campos_editables: tuple[str, ...] = ()
    historial: EnHistorial
    texto_espera: Callable[[Mapping[str, Any]], str] = field(compare=False)
    offline: Offline
    instantanea: EnInstantanea
    tarjeta: EnTarjeta | None = None

    def __post_init__(self) -> None:
        _identificador(self.nombre, "nombre de la operación")
        que = f"operación {self.nombre}"
        if not self.herramientas:
            raise ValueError(f"{que}: ninguna herramienta")
        for herramienta in self.herramientas:
            _identificador(herramienta, f"{que}: herramienta")
        if not _REGLA.match(self.regla or ""):
            raise ValueError(f"{que}: regla no válida: {self.regla!r}")
        if not self.hechos:
            raise ValueError(f"{que}: la regla no lee ningún hecho")
        for hecho in self.hechos:
            _identificador(hecho, f"{que}: hecho")
        _texto(self.titulo, f"{que}: título de la tarjeta")
        if not self.decisiones or set(self.decisiones) - DECISIONES_VALIDAS:
            raise ValueError(f"{que}: decisiones vacías o desconocidas: {self.decisiones!r}")
        if not self.campos:
            raise ValueError(f"{que}: la tarjeta no enseña ningún campo")
        nombres = {c.nombre for c in self.campos}
        sobran = set(self.campos_editables) - nombres
        if sobran:
            raise ValueError(f"{que}: campos editables que la tarjeta no enseña: {sorted(sobran)}")
        if self.campos_editables and "edit" not in self.decisiones:
            raise ValueError(f"{que}: campos editables sin la decisión «edit»")
        if not callable(self.texto_espera):
            raise ValueError(f"{que}: falta el texto de espera para el cliente")

    @property
    def herramienta(self) -> str:
        """La herramienta principal (la primera)."""
        return self.herramientas[0]

    def campo(self, nombre: str) -> Campo | None:
        return next((c for c in self.campos if c.nombre == nombre), None)
