"""Gobierno de la política: qué cambio endurece, cuál amplía, y quién puede firmar uno.

Funciones puras (las usan el servicio al proponer y al firmar, y la auditoría al releer
la historia), sobre un cambio ya validado contra los dominios (``politicas.valores``):

- ``diferencias(antes, matriz, cambio) -> tuple[Diferencia, ...]``: cada valor que cambia,
  antes → después, en español, y si **endurece** o **amplía**. Ampliar es todo lo que deja
  salir más dinero o género con menos firmas o más bajas: un límite de rol más alto (o
  sin límite), un umbral de aprobación automática más alto, dos firmas desde un importe
  más alto (o nunca), un plazo de caducidad más largo, una ventana más generosa.
- ``por_encima_de_su_limite(matriz, rol, diferencias)``: los valores que ese rol no podría
  fijar: nadie pone un límite (ni un umbral de dinero sin firma) por encima del suyo.
- ``puede_firmar_cambio(matriz, autor_rol, firmante_rol, ..., diferencias)``: la firma
  de un cambio que amplía es de alguien **por encima del autor** en la cadena de la
  tienda (el cambio de un gerente lo firma un regional de su región; el de un regional,
  otro regional de la región), nunca del autor, y nunca de un rol cuyo límite el cambio
  sube.

Trampa: ``None`` en un límite es «sin límite» y en un umbral de doble firma «nunca»: los
dos cuentan como infinito al comparar (pasar de 800 a None amplía).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from nucleo import dinero
from nucleo.operaciones import OPERACIONES
from politicas.matriz_autoridad import Matriz
from politicas.valores import VALORES, texto_valor

__all__ = [
    "Cambio",
    "Diferencia",
    "amplia",
    "diferencias",
    "por_encima_de_su_limite",
    "puede_firmar_cambio",
    "roles_que_suben",
]

# «Límite de gerente en reembolsos»: el nombre de cada regla, de su operación declarada.
NOMBRE_REGLA = {op.regla: op.matriz.plural for op in OPERACIONES}


@dataclass(frozen=True, kw_only=True)
class Cambio:
    """Lo que pide un cambio, ya validado: ``umbrales`` {nombre: valor}, ``limites``
    {regla: {rol: importe | None}} y ``dos_firmas`` {regla: importe | None}."""

    umbrales: Mapping[str, Decimal | int]
    limites: Mapping[str, Mapping[str, Decimal | None]]
    dos_firmas: Mapping[str, Decimal | None]

    def vacio(self) -> bool:
        return not (self.umbrales or any(self.limites.values()) or self.dos_firmas)

    def como_json(self) -> dict[str, Any]:
        def _t(v: Any) -> Any:
            return dinero.texto(v) if isinstance(v, Decimal) else v

        return {
            "umbrales": {k: _t(v) for k, v in self.umbrales.items()},
            "limites": {r: {rol: _t(v) for rol, v in d.items()} for r, d in self.limites.items()},
            "dos_firmas": {r: _t(v) for r, v in self.dos_firmas.items()},
        }

    @classmethod
    def de_json(cls, datos: Mapping[str, Any]) -> Cambio:
        def _d(v: Any) -> Decimal | None:
            return None if v is None else Decimal(str(v))

        return cls(
            umbrales={k: (Decimal(str(v)) if VALORES[k].tipo == "dinero" else int(v))
                      for k, v in (datos.get("umbrales") or {}).items()},
            limites={r: {rol: _d(v) for rol, v in d.items()} for r, d in (datos.get("limites") or {}).items()},
            dos_firmas={r: _d(v) for r, v in (datos.get("dos_firmas") or {}).items()},
        )


@dataclass(frozen=True, kw_only=True)
class Diferencia:
    """Un valor que cambia: ``clave`` estable («umbrales.limite_reembolso»,
    «limites.reembolso.gerente», «dos_firmas.reembolso»), ``texto`` en español
    («Límite de gerente en reembolsos: 1.000,00 EUR → 1.200,00 EUR»)."""

    clave: str
    etiqueta: str
    antes: str
    despues: str
    sentido: Literal["endurece", "amplia"]
    rol: str | None = None  # el rol cuyo límite cambia (solo en ``limites``)
    regla: str | None = None  # la regla de la matriz con la que se compara el dinero
    valor: Decimal | None = None  # el dinero nuevo (None = sin límite / nunca)

    @property
    def texto(self) -> str:
        return f"{self.etiqueta}: {self.antes} → {self.despues}"

    def como_json(self) -> dict[str, Any]:
        return {"clave": self.clave, "etiqueta": self.etiqueta, "antes": self.antes,
                "despues": self.despues, "sentido": self.sentido, "texto": self.texto}


def _mayor(a: Decimal | None, b: Decimal | None) -> bool:
    """¿``a`` es mayor que ``b``, con None = infinito?"""
    if a is None:
        return b is not None
    return b is not None and a > b


def _eur_o(valor: Decimal | None, vacio: str) -> str:
    return vacio if valor is None else dinero.eur(valor)


def diferencias(
    umbrales_antes: Mapping[str, Any], matriz: Matriz, cambio: Cambio
) -> tuple[Diferencia, ...]:
    """Cada valor que ``cambio`` modifica respecto a ``umbrales_antes`` y ``matriz`` (los
    vigentes); los que se quedan igual no salen."""
    salida: list[Diferencia] = []
    for nombre, nuevo in cambio.umbrales.items():
        valor = VALORES[nombre]
        antes = umbrales_antes[nombre]
        antes = Decimal(str(antes)) if valor.tipo == "dinero" else int(antes)
        if nuevo == antes:
            continue
        sube = nuevo > antes
        endurece = sube == (valor.endurece == "subir")
        salida.append(Diferencia(
            clave=f"umbrales.{nombre}", etiqueta=valor.etiqueta, antes=texto_valor(valor, antes),
            despues=texto_valor(valor, nuevo), sentido="endurece" if endurece else "amplia",
            regla=valor.regla, valor=nuevo if valor.tipo == "dinero" else None,
        ))
    for regla, por_rol in cambio.limites.items():
        for rol, nuevo in por_rol.items():
            actual = matriz.limites.get(regla, {})
            if rol in actual and actual[rol] == nuevo:
                continue
            antes_valor = actual.get(rol) if rol in actual else Decimal("-1")
            salida.append(Diferencia(
                clave=f"limites.{regla}.{rol}",
                etiqueta=f"Límite de {rol} en {NOMBRE_REGLA.get(regla, regla)}",
                antes="no firma" if rol not in actual else _eur_o(actual[rol], "sin límite"),
                despues=_eur_o(nuevo, "sin límite"),
                sentido="amplia" if _mayor(nuevo, antes_valor) else "endurece",
                rol=rol, regla=regla, valor=nuevo,
            ))
    for regla, nuevo in cambio.dos_firmas.items():
        antes_umbral = matriz.dos_firmas_por_encima.get(regla)
        if antes_umbral == nuevo:
            continue
        salida.append(Diferencia(
            clave=f"dos_firmas.{regla}",
            etiqueta=f"Dos firmas en {NOMBRE_REGLA.get(regla, regla)} por encima de",
            antes=_eur_o(antes_umbral, "nunca"), despues=_eur_o(nuevo, "nunca"),
            sentido="amplia" if _mayor(nuevo, antes_umbral) else "endurece",
            regla=regla,
        ))
    return tuple(salida)


def amplia(difs: Sequence[Diferencia]) -> bool:
    """¿Algún valor amplía? Entonces el cambio entero espera una firma."""
    return any(d.sentido == "amplia" for d in difs)


def roles_que_suben(difs: Sequence[Diferencia]) -> frozenset[str]:
    """Los roles cuyo límite sube con el cambio (ninguno de ellos puede firmarlo)."""
    return frozenset(d.rol for d in difs if d.rol is not None and d.sentido == "amplia")


def por_encima_de_su_limite(matriz: Matriz, rol: str, difs: Sequence[Diferencia]) -> list[str]:
    """Lo que ``rol`` no puede fijar: un valor de dinero que amplía por encima de su
    propio límite en esa regla (None = sin límite cuenta como infinito). Un rol que no
    firma la regla no puede subir nada de ella."""
    fuera = []
    for d in difs:
        if d.sentido != "amplia" or d.regla is None or d.clave.startswith("dos_firmas."):
            continue
        por_rol = matriz.limites.get(d.regla, {})
        if rol not in por_rol:
            fuera.append(f"{d.etiqueta}: tu rol ({rol}) no firma {NOMBRE_REGLA.get(d.regla, d.regla)}")
            continue
        propio = por_rol[rol]
        if _mayor(d.valor, propio):
            fuera.append(f"{d.etiqueta}: {d.despues} supera tu propio límite "
                         f"({_eur_o(propio, 'sin límite')})")
    return fuera


def puede_firmar_cambio(
    matriz: Matriz,
    *,
    autor: str,
    autor_rol: str,
    firmante: str,
    firmante_rol: str,
    difs: Sequence[Diferencia],
) -> str | None:
    """None si ``firmante`` puede firmar el cambio de ``autor``; si no, el motivo en español.

    Por encima del autor: un rol de nivel mayor o, si el autor tiene ya el rol más alto,
    otra persona de ese mismo rol. Nunca el autor, nunca un rol cuyo límite sube, y nunca
    con valores por encima del límite de quien firma.
    """
    if firmante == autor:
        return "nadie firma su propio cambio de política: lo firma alguien por encima de ti"
    roles = matriz.roles
    if firmante_rol not in roles or autor_rol not in roles:
        return f"el rol {firmante_rol} no firma cambios de política"
    nivel_f, nivel_a = roles.index(firmante_rol), roles.index(autor_rol)
    mas_alto = len(roles) - 1
    if nivel_f < nivel_a or (nivel_f == nivel_a and nivel_a != mas_alto):
        return f"un cambio de un {autor_rol} lo firma alguien por encima ({', '.join(roles[nivel_a + 1:]) or roles[-1]})"
    if firmante_rol in roles_que_suben(difs):
        return f"este cambio sube el límite de tu propio rol ({firmante_rol}): no puedes firmarlo"
    fuera = por_encima_de_su_limite(matriz, firmante_rol, difs)
    if fuera:
        return "; ".join(fuera)
    return None
