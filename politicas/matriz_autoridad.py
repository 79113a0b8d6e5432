"""La matriz de autoridad: qué rol firma qué importe en cada regla y cuántas firmas hacen falta.

Datos (``sql/008_autoridad.sql``): por versión de la matriz (la por defecto, tienda
``None``, o la propia de una tienda), por regla (``reembolso``: el importe;
``sustitucion``: la diferencia de precio) el límite de cada rol (``None`` = sin límite)
y el importe por encima del cual hacen falta dos firmas de dos personas distintas, al
menos una de ellas con un límite que cubra el importe.

Funciones puras sobre una ``Matriz``:

- ``autoridad_necesaria(matriz, regla, importe) -> Requisito(importe, firmas, rol_minimo)``
- ``puede_firmar(matriz, rol, regla, importe) -> Permiso``: si el límite del rol cubre el
  importe (verdadero, o el motivo en español: «tu límite es 300,00 EUR ...»)
- ``admite_firma(matriz, rol, regla, importe, previas=...) -> Permiso``: si su firma cuenta
  ahora, con las ya recogidas (con doble firma, un rol que no cubre puede ser una de dos)
- ``firmas_completas(matriz, regla, importe, roles)`` y ``oleadas_de_aviso``.

Trampas: «hasta 300,00 EUR» incluye 300,00 y «por encima de 500,00 EUR» no incluye
500,00. Se cierra hacia el lado seguro: un importe desconocido en una regla de la matriz,
o un importe en una regla que la matriz no conoce, exige el rol más alto. Por eso una
operación declarada (``nucleo.operaciones``) sin sus filas en una matriz guardada
no arranca el servicio (``agente.servicio.politica.comprobar_operaciones``): si no, pediría en
silencio un regional para cualquier importe. Una regla sin
importe (la consulta al encargado) o con importe <= 0 (un cambio a un producto más
barato) basta con una firma del rol más bajo.

Leer una versión de la base es cosa de ``politicas.lectura_matriz`` (``politicas/`` decide
con datos de la tienda; escribir versiones, de ``agente.servicio.politica.gestion_autoridad``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Any

from nucleo import dinero
from nucleo.operaciones import OPERACIONES

__all__ = [
    "ROLES_POR_DEFECTO",
    "Matriz",
    "Permiso",
    "Requisito",
    "admite_firma",
    "autoridad_necesaria",
    "firmas_completas",
    "oleadas_de_aviso",
    "puede_firmar",
]

ROLES_POR_DEFECTO = ("encargado", "gerente", "regional")


def _cubre(limite: Decimal | None, importe: Decimal) -> bool:
    return limite is None or importe <= limite


@dataclass(frozen=True, kw_only=True)
class Matriz:
    """Una versión de la matriz de autoridad.

    ``roles``: del menor al mayor nivel. ``limites[regla][rol]``: límite (``None`` = sin
    límite); un rol ausente no firma esa regla. ``dos_firmas_por_encima[regla]``: umbral
    de doble firma (``None`` = nunca). ``id``/``tienda``/``version``: qué versión es
    (``tienda=None``: la por defecto).

    Se valida al construir: en cada regla, el rol más alto firma sin límite (si no, un
    importe grande no lo podría firmar nadie) y un rol más alto nunca tiene menos límite
    que uno más bajo (el escalado sube de nivel para cubrir más).
    """

    roles: tuple[str, ...] = ROLES_POR_DEFECTO
    limites: Mapping[str, Mapping[str, Decimal | None]]
    dos_firmas_por_encima: Mapping[str, Decimal | None] = field(default_factory=dict)
    id: int | None = None
    tienda: str | None = None
    version: int = 1
    creada: datetime | None = None
    creada_por: str | None = None

    def __post_init__(self) -> None:
        if not self.roles or len(set(self.roles)) != len(self.roles):
            raise ValueError(f"roles vacíos o repetidos: {self.roles!r}")
        limites = {}
        for regla, por_rol in self.limites.items():
            desconocidos = set(por_rol) - set(self.roles)
            if desconocidos:
                raise ValueError(f"regla {regla}: roles desconocidos {sorted(desconocidos)}")
            por_rol = {r: None if v is None else dinero.cuantizar(v) for r, v in por_rol.items()}
            self._validar_regla(regla, por_rol)
            limites[regla] = MappingProxyType(por_rol)
        umbrales = {}
        for regla, umbral in self.dos_firmas_por_encima.items():
            if regla not in limites:
                raise ValueError(f"umbral de doble firma para una regla sin límites: {regla}")
            umbrales[regla] = None if umbral is None else dinero.cuantizar(umbral)
        object.__setattr__(self, "limites", MappingProxyType(limites))
        object.__setattr__(self, "dos_firmas_por_encima", MappingProxyType(umbrales))
        if self.version < 1:
            raise ValueError(f"versión no válida: {self.version}")

    def _validar_regla(self, regla: str, por_rol: Mapping[str, Decimal | None]) -> None:
        presentes = [r for r in self.roles if r in por_rol]
        if not presentes or por_rol[presentes[-1]] is not None:
            raise ValueError(f"regla {regla}: el rol más alto que firma debe hacerlo sin límite")
        if any(v is not None and v < 0 for v in por_rol.values()):
            raise ValueError(f"regla {regla}: un límite no puede ser negativo")
        for bajo, alto in zip(presentes, presentes[1:], strict=False):
            limite_bajo, limite_alto = por_rol[bajo], por_rol[alto]
            if limite_alto is not None and (limite_bajo is None or limite_alto < limite_bajo):
                raise ValueError(f"regla {regla}: {alto} no puede tener menos límite que {bajo}")

    def nivel(self, rol: str) -> int:
        """Posición del rol (0 = el más bajo); ``ValueError`` si no es de esta matriz."""
        return self.roles.index(rol)

    def limite(self, rol: str, regla: str) -> Decimal | None:
        """El límite del rol en la regla; ``KeyError`` si ese rol no firma esa regla."""
        return self.limites[regla][rol]

    def firma(self, rol: str, regla: str) -> bool:
        return rol in self.limites.get(regla, {})


@dataclass(frozen=True)
class Requisito:
    """La autoridad que exige una llamada: ``firmas`` de personas distintas, al menos una
    de rol ``rol_minimo`` o superior (con límite que cubra ``importe``).

    Es también la autoridad que guarda el veredicto (``politicas.Autoridad``). ``regla``,
    ``matriz_id`` y ``version_matriz`` dicen con qué se calculó (no cuentan al comparar):
    quien la compruebe después relee esa versión exacta, nunca la vigente.
    """

    importe: Decimal | None
    firmas: int = 1
    rol_minimo: str = ROLES_POR_DEFECTO[0]
    regla: str | None = field(default=None, compare=False)
    matriz_id: int | None = field(default=None, compare=False)
    version_matriz: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.importe is not None and dinero.importe_o_none(self.importe) != self.importe:
            raise ValueError(f"importe de autoridad no válido: {self.importe!r}")
        if isinstance(self.firmas, bool) or not isinstance(self.firmas, int) or self.firmas < 1:
            raise ValueError(f"firmas debe ser un entero >= 1: {self.firmas!r}")
        if not self.rol_minimo:
            raise ValueError("la autoridad necesita un rol mínimo")

    def texto(self, roles: Sequence[str] = ROLES_POR_DEFECTO) -> str:
        """Para la tarjeta: «necesita gerente», «2 firmas, una de gerente o regional»
        (``roles``: los de la matriz, del menor al mayor)."""
        if self.firmas == 1:
            return f"necesita {self.rol_minimo}"
        desde = list(roles).index(self.rol_minimo) if self.rol_minimo in roles else len(roles) - 1
        arriba = list(roles)[desde:] or [self.rol_minimo]
        quien = arriba[0] if len(arriba) == 1 else ", ".join(arriba[:-1]) + " o " + arriba[-1]
        return f"{self.firmas} firmas, una de {quien}"


@dataclass(frozen=True)
class Permiso:
    """Si una firma vale; si no, ``motivo`` dice por qué, en español. Se evalúa como bool."""

    permitido: bool
    motivo: str = ""

    def __bool__(self) -> bool:
        return self.permitido


def _importe_positivo(importe: Any) -> Decimal | None:
    if importe is None:
        return None
    valor = dinero.diferencia(importe)
    return valor if valor > 0 else dinero.CERO


def autoridad_necesaria(matriz: Matriz, regla: str | None, importe: Any) -> Requisito:
    """Cuántas firmas y de qué rol mínimo exige ``importe`` en ``regla``.

    ``importe`` se lee con ``dinero.diferencia`` (texto, Decimal...); más de dos
    decimales es ``ImporteNoValido``.
    """
    requisito = _autoridad_necesaria(matriz, regla, importe)
    return replace(requisito, regla=regla, matriz_id=matriz.id, version_matriz=matriz.version)


def _autoridad_necesaria(matriz: Matriz, regla: str | None, importe: Any) -> Requisito:
    valor = _importe_positivo(importe)
    mas_bajo, mas_alto = matriz.roles[0], matriz.roles[-1]
    if regla not in matriz.limites:
        if valor is None or valor == 0:
            return Requisito(importe=None, firmas=1, rol_minimo=mas_bajo)
        return Requisito(importe=valor, firmas=1, rol_minimo=mas_alto)
    if valor is None:
        return Requisito(importe=None, firmas=1, rol_minimo=mas_alto)
    if valor == 0:
        return Requisito(importe=None, firmas=1, rol_minimo=mas_bajo)
    por_rol = matriz.limites[regla]
    rol_minimo = next(r for r in matriz.roles if r in por_rol and _cubre(por_rol[r], valor))
    umbral = matriz.dos_firmas_por_encima.get(regla)
    firmas = 2 if umbral is not None and valor > umbral else 1
    return Requisito(importe=valor, firmas=firmas, rol_minimo=rol_minimo)


def _cubre_rol(matriz: Matriz, rol: str, regla: str | None, requisito: Requisito) -> bool:
    if requisito.importe is None or regla not in matriz.limites:
        return matriz.nivel(rol) >= matriz.nivel(requisito.rol_minimo)
    return _cubre(matriz.limite(rol, regla), requisito.importe)


def _nombre_regla(regla: str | None) -> str:
    """«este reembolso»: el nombre que declara la operación de ``regla`` (si la hay)."""
    return next((op.matriz.singular for op in OPERACIONES if op.regla == regla), "esta operación")


def puede_firmar(matriz: Matriz, rol: str, regla: str | None, importe: Any) -> Permiso:
    """¿Cubre el límite de ``rol`` este importe? Es la autoridad del rol: si firma X, firma
    cualquier importe menor. Si no, ``motivo`` dice su límite («tu límite es 300,00 EUR...»).

    Para decidir si una firma cuenta cuando hacen falta dos, ``admite_firma``.
    """
    if rol not in matriz.roles or (regla in matriz.limites and not matriz.firma(rol, regla)):
        return Permiso(False, f"el rol {rol} no firma {_nombre_regla(regla)} en esta tienda")
    requisito = autoridad_necesaria(matriz, regla, importe)
    if _cubre_rol(matriz, rol, regla, requisito):
        return Permiso(True)
    return Permiso(False, _motivo_sin_limite(matriz, rol, regla, requisito, ultima=False))


def admite_firma(
    matriz: Matriz, rol: str, regla: str | None, importe: Any, *, previas: Sequence[str] = ()
) -> Permiso:
    """¿Cuenta ahora la firma de alguien con ``rol``? ``previas``: roles de las firmas ya
    recogidas de otras personas (que una persona no firme dos veces lo comprueba el
    servicio).

    Con doble firma, alguien cuyo límite no cubre el importe puede ser una de las dos, pero
    no la que cierra si ninguna de las anteriores lo cubre.
    """
    permiso = puede_firmar(matriz, rol, regla, importe)
    if rol not in matriz.roles or (regla in matriz.limites and not matriz.firma(rol, regla)):
        return permiso
    requisito = autoridad_necesaria(matriz, regla, importe)
    if len(previas) >= requisito.firmas:
        return Permiso(False, "ya tiene todas las firmas que necesita")
    if permiso:
        return permiso
    quedan_huecos = len(previas) + 1 < requisito.firmas
    alguna_cubre = any(_cubre_rol(matriz, r, regla, requisito) for r in previas if r in matriz.roles)
    if requisito.firmas > 1 and (quedan_huecos or alguna_cubre):
        return Permiso(True)
    return Permiso(False, _motivo_sin_limite(matriz, rol, regla, requisito, ultima=requisito.firmas > 1))


def _motivo_sin_limite(
    matriz: Matriz, rol: str, regla: str | None, requisito: Requisito, *, ultima: bool
) -> str:
    necesita = f"necesita {requisito.rol_minimo} o superior"
    if requisito.importe is None or regla not in matriz.limites:
        return f"{_nombre_regla(regla)} {necesita}"
    limite = matriz.limite(rol, regla)
    texto_limite = "sin límite" if limite is None else dinero.eur(limite)
    cierre = " para la firma que falta" if ultima else ""
    return (
        f"tu límite es {texto_limite} y {_nombre_regla(regla)} es de "
        f"{dinero.eur(requisito.importe)}: {necesita}{cierre}"
    )


def firmas_completas(matriz: Matriz, regla: str | None, importe: Any, roles: Sequence[str]) -> bool:
    """¿Bastan las firmas de personas distintas con estos ``roles``?"""
    requisito = autoridad_necesaria(matriz, regla, importe)
    validos = [r for r in roles if r in matriz.roles]
    return len(validos) >= requisito.firmas and any(
        _cubre_rol(matriz, r, regla, requisito) for r in validos
    )


def oleadas_de_aviso(matriz: Matriz, requisito: Requisito) -> tuple[tuple[str, ...], ...]:
    """A qué roles avisar, por turnos: la primera al pausar, cada siguiente al escalar.

    La primera: el rol mínimo y, si hacen falta varias firmas, también los de debajo
    (pueden ser la otra firma). Después, un rol más por turno hacia arriba.
    """
    try:
        minimo = matriz.nivel(requisito.rol_minimo)
    except ValueError:
        return (matriz.roles,)
    primera = matriz.roles[: minimo + 1] if requisito.firmas > 1 else (matriz.roles[minimo],)
    return (primera, *((r,) for r in matriz.roles[minimo + 1 :]))
