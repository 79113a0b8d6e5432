"""Enmascarado de datos personales en todo lo que se envía a Langfuse.

Se ocultan correos, teléfonos españoles, IBAN, números de tarjeta y DNI/NIE. Quedan
a la vista los identificadores del negocio (``P-20260917-0041``, ``RE-000001``,
``CAF-001``) y los importes (``120,00 EUR``, ``120.00``): sin ellos una traza no sirve
para depurar.

Es deliberadamente por patrones: no detecta nombres ni direcciones escritos en texto
libre. El orden de aplicación importa (IBAN y tarjeta antes que el teléfono sin
prefijo, para que un número largo no se quede a medio tapar).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from pydantic import BaseModel

CORREO = "[CORREO]"
TELEFONO = "[TELÉFONO]"
IBAN = "[IBAN]"
TARJETA = "[TARJETA]"
DNI = "[DNI]"

_CIFRA_RE = re.compile(r"\d")
_CORREO_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")

# IBAN con los grupos solo de cifras (el español y la mayoría de los que se
# escriben a mano): 2 letras, 2 de control, 10-30 cifras con espacios o guiones
# sueltos. Los grupos son numéricos para no tragarse la palabra siguiente, y sin
# guion alrededor para no confundir bloques de un UUID (ef206766-6544-4142-...).
_IBAN_NUMERICO_RE = re.compile(r"(?<![\w-])[A-Za-z]{2}\d{2}(?:[ -]?\d){10,30}(?![\w-])")
# IBAN compacto con letras (GB29NWBK60161331926819): mayúsculas y sin espacios;
# se confirma con el dígito de control para no tapar identificadores al azar.
_IBAN_ALFANUMERICO_RE = re.compile(r"(?<![\w])[A-Z]{2}\d{2}[A-Z0-9]{11,30}(?![\w])")

# 13-19 cifras con espacios o guiones sueltos entre ellas (sin Luhn: mejor tapar de
# más). Sin guion alrededor: tres bloques de cifras de un UUID no son una tarjeta.
_TARJETA_RE = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")

# Teléfono español: 9 cifras que empiezan por 6, 7, 8 o 9, agrupadas como sea
# (600 111 001, 91 123 45 67, 600-111-001), con prefijo +34/0034/(+34) o sin él.
# Con prefijo va antes que la tarjeta ("0034 600 111 001" son 13 cifras). Tras las 9
# cifras no puede seguir letra ni cifra (87810803-0e5... es un UUID).
_NUEVE_CIFRAS = r"[6-9](?:[\s.-]?\d){8}(?![\w])"
_TELEFONO_PREFIJO_RE = re.compile(
    r"(?<![\w+])(?:(?:\+|00)\s?34[\s.-]?|\(\+?34\)\s?)" + _NUEVE_CIFRAS
)
_TELEFONO_RE = re.compile(r"(?<![\w+])" + _NUEVE_CIFRAS)

_DNI_RE = re.compile(r"(?<![\w-])(?:\d{8}|[XYZ]-?\d{7})-?[A-HJ-NP-TV-Z](?![\w])")


_MAX_RECORDADO = 20_000


@functools.lru_cache(maxsize=4096)
def _enmascarar_recordado(texto: str) -> str:
    return _enmascarar(texto)


def _iban_valido(candidato: str) -> bool:
    compacto = candidato.upper()
    reordenado = compacto[4:] + compacto[:4]
    numero = "".join(str(int(c, 36)) for c in reordenado)
    return int(numero) % 97 == 1


def _iban_alfanumerico(m: re.Match[str]) -> str:
    return IBAN if _iban_valido(m.group(0)) else m.group(0)


def enmascarar_texto(texto: str) -> str:
    """Devuelve ``texto`` con los datos personales sustituidos por marcadores."""
    if not texto or len(texto) > _MAX_RECORDADO:
        return _enmascarar(texto)
    # Cada llamada al modelo reenvía el historial entero: casi todo es texto ya visto.
    return _enmascarar_recordado(texto)


def _enmascarar(texto: str) -> str:
    if not texto:
        return texto
    # Atajo barato: sin '@' ni cifras no hay nada que tapar.
    if "@" not in texto and not _CIFRA_RE.search(texto):
        return texto
    texto = _CORREO_RE.sub(CORREO, texto)
    texto = _IBAN_NUMERICO_RE.sub(IBAN, texto)
    texto = _IBAN_ALFANUMERICO_RE.sub(_iban_alfanumerico, texto)
    texto = _TELEFONO_PREFIJO_RE.sub(TELEFONO, texto)
    texto = _TARJETA_RE.sub(TARJETA, texto)
    texto = _TELEFONO_RE.sub(TELEFONO, texto)
    texto = _DNI_RE.sub(DNI, texto)
    return texto


def _enmascarar_entero(n: int) -> int | str:
    # Un teléfono o una tarjeta también pueden llegar como número en un JSON.
    cifras = str(abs(n))
    if len(cifras) > 19:  # fuera del rango seguro de JavaScript: texto, como hace el SDK
        return str(n)
    if 13 <= len(cifras) <= 19:
        return TARJETA
    if len(cifras) == 9 and cifras[0] in "6789":
        return TELEFONO
    return n


def enmascarar_valor(valor: Any) -> Any:
    """Enmascara recursivamente y devuelve algo serializable a JSON.

    Los objetos que no son JSON (mensajes de LangChain, modelos pydantic, Decimal...)
    se pasan antes a JSON con el serializador del propio SDK de Langfuse, para
    enmascarar exactamente lo que se habría enviado.
    """
    # Cada generación trae el historial entero: los tipos exactos de JSON van primero y
    # sin isinstance (una traza recorre miles de nodos); las subclases, por el camino largo.
    tipo = type(valor)
    if tipo is str:
        return enmascarar_texto(valor)
    if tipo is dict:
        return {k if type(k) is str else str(k): enmascarar_valor(v) for k, v in valor.items()}
    if tipo is list or tipo is tuple:
        return [enmascarar_valor(v) for v in valor]
    if valor is None or tipo is bool or tipo is float:
        return valor
    if tipo is int:
        return _enmascarar_entero(valor)
    return _enmascarar_otro(valor)


def _enmascarar_otro(valor: Any) -> Any:
    if isinstance(valor, str):
        return enmascarar_texto(valor)
    if isinstance(valor, bool | float):
        return valor
    if isinstance(valor, int):
        return _enmascarar_entero(valor)
    if isinstance(valor, Decimal):
        return str(valor)  # el dinero viaja como texto "120.00"
    if isinstance(valor, Mapping):
        return {k if isinstance(k, str) else str(k): enmascarar_valor(v) for k, v in valor.items()}
    if isinstance(valor, list | tuple | set | frozenset):
        return [enmascarar_valor(v) for v in valor]
    if isinstance(valor, datetime | date):
        return valor.isoformat()
    if isinstance(valor, Enum):
        return enmascarar_valor(valor.value)
    if dataclasses.is_dataclass(valor) and not isinstance(valor, type):
        return enmascarar_valor(dataclasses.asdict(valor))
    if isinstance(valor, BaseModel):
        # Los mensajes de LangChain: la misma rama del ``EventSerializer`` del SDK
        # (``model_dump()`` y recorrer), sin su ida y vuelta por ``json.dumps``/``loads``,
        # que era más de la mitad del coste de enmascarar un historial.
        try:
            volcado = valor.model_dump()
        except Exception:  # un modelo que no se deja volcar: por el serializador del SDK
            return enmascarar_valor(_a_json(valor))
        return enmascarar_valor(volcado)
    return enmascarar_valor(_a_json(valor))


def _a_json(valor: Any) -> Any:
    try:
        from langfuse._utils.serializer import EventSerializer
    except ImportError:  # módulo interno del SDK: si cambia, basta con str()
        return json.loads(json.dumps(valor, default=str))
    return json.loads(json.dumps(valor, cls=EventSerializer))


def enmascarar(*, data: Any, **_: Any) -> Any:
    """La firma que espera ``Langfuse(mask=...)``.

    Una lista (la entrada de cada generación: el historial entero) sale ya como texto
    JSON. El SDK deja pasar un ``str`` tal cual (``_serialize``) y, si no, vuelve a
    recorrer en Python con su ``EventSerializer`` lo que aquí ya es JSON puro: era el
    ≈ 6 % de la CPU de un turno con trazas. El texto es el mismo, byte a byte, que habría
    escrito el SDK (``json.dumps`` con sus opciones de serie).

    Trampa: los diccionarios no se adelantan, porque los metadatos también pasan por aquí
    (sin decir qué campo son) y el SDK los escribe clave a clave; los metadatos nunca son
    una lista.
    """
    if type(data) is list:
        texto = _lista_como_texto(data)
        if texto is not None:
            return texto
    limpio = enmascarar_valor(data)
    if type(limpio) is list:
        try:
            return json.dumps(limpio, allow_nan=False)
        except ValueError:  # NaN o infinito: que el SDK los pase a texto, como siempre
            return limpio
    return limpio


def _lista_como_texto(lista: list[Any]) -> str | None:
    """La lista ya como texto JSON, elemento a elemento por su texto crudo (None: hay algo
    que no es JSON puro, y va por el camino largo). Cada generación repite el prompt de
    sistema, las definiciones de las herramientas y el historial: casi todo ya visto."""
    partes = []
    for elemento in lista:
        try:
            crudo = json.dumps(elemento, allow_nan=False)
        except (TypeError, ValueError):
            return None
        if len(crudo) > _MAX_RECORDADO:
            partes.append(_elemento_enmascarado.__wrapped__(crudo))
        else:
            partes.append(_elemento_enmascarado(crudo))
    return "[" + ", ".join(partes) + "]"  # lo mismo que json.dumps de la lista


@functools.lru_cache(maxsize=1024)
def _elemento_enmascarado(crudo: str) -> str:
    return json.dumps(enmascarar_valor(json.loads(crudo)), allow_nan=False)


# Atributos que el ``mask=`` del SDK ya cubre (entrada, salida y metadatos de cada
# observación) o que son nuestros identificadores seudónimos.
_YA_CUBIERTOS = (
    "langfuse.observation.input",
    "langfuse.observation.output",
    "langfuse.observation.metadata.",
    "session.id",
    "user.id",
    "langfuse.trace.tags",
)


def enmascarar_spans_otel(*, params: Any) -> Any:
    """Red de seguridad en la exportación (``Langfuse(mask_otel_spans=...)``).

    ``mask=`` no cubre todo: el SDK escribe, por ejemplo, el texto de la interrupción
    de HITL (con los argumentos de la herramienta) en
    ``langfuse.observation.status_message``. Aquí se enmascara cualquier otro atributo
    de texto. Corre en el hilo exportador, fuera del camino de la petición.
    """
    from langfuse.types import MaskOtelSpansResult, OtelSpanPatch

    parches = {}
    for identificador, span in params.spans.items():
        cambios: dict[str, Any] = {}
        for clave, valor in span.attributes.items():
            if clave.startswith(_YA_CUBIERTOS):
                continue
            if isinstance(valor, str):
                nuevo = enmascarar_texto(valor)
                if nuevo != valor:
                    cambios[clave] = nuevo
            elif (
                isinstance(valor, list | tuple) and valor and all(isinstance(v, str) for v in valor)
            ):
                nuevos = [enmascarar_texto(v) for v in valor]
                if nuevos != list(valor):
                    cambios[clave] = nuevos
        if cambios:
            parches[identificador] = OtelSpanPatch(set_attributes=cambios)
    return MaskOtelSpansResult(span_patches=parches)
