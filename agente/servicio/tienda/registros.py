"""Los registros que manda el back office de la tienda: su forma, validada con mensajes en
español que nombran el campo culpable.

La forma (tipos, longitudes, patrones, importes como texto con dos decimales) es lo que
declara el OpenAPI y lo que no la cumple es ``RegistroNoValido`` (422). Lo que el esquema
no puede decir (fechas que no cuadran con el estado, números de línea repetidos) lo
comprueba ``coherencia`` y es ``RegistroRechazado`` (409), como cualquier otro conflicto;
salvo la fecha que el estado exige y no viene (``enviado_en`` de un pedido enviado,
``entregado_en`` de uno entregado): eso es forma, 422 con el campo.

Las fechas tienen dominio (años ``ANIO_MINIMO`` a ``ANIO_MAXIMO`` tal como se escriben,
``RE_FECHA`` en el OpenAPI): una fecha extrema que ni cabe en UTC
(``0001-01-01T00:00:00+14:00``) o que las cuentas de plazos no podrían sumar es 422 con el
campo, nunca un error interno. Un pedido cuyas líneas suman más de lo que cabe en el libro
(``numeric(12,2)``) es 409: cada campo tiene la forma, la suma no cuadra.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from nucleo import dinero
from nucleo.errores import RegistroNoValido, RegistroRechazado

__all__ = [
    "ALCANCES",
    "ANIO_MAXIMO",
    "ANIO_MINIMO",
    "RE_FECHA",
    "RE_PEDIDO",
    "CambioEstado",
    "DatosCliente",
    "DatosPedido",
    "DatosProducto",
    "DatosStock",
    "Direccion",
    "LineaPedido",
    "Registro",
    "coherencia",
    "huella",
    "leer_linea",
    "mensaje_validacion",
]

ALCANCES = ("clientes", "productos", "stock", "pedidos", "estados")
RE_PEDIDO = r"^P-[0-9]{8}-[0-9]{4}$"
RE_ID = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
RE_IMPORTE = r"^[0-9]{1,10}(\.[0-9]{1,2})?$"

Id = Annotated[str, Field(pattern=RE_ID, description="Id propio de la tienda (letras, cifras, . _ -).")]
# Normalizados al validar ("15" -> "15.00"; la hora, en UTC): el mismo valor escrito de otra
# forma da el mismo cuerpo y la misma huella.
Importe = Annotated[str, Field(pattern=RE_IMPORTE, description='Dinero como texto: "24.90".'),
                    AfterValidator(lambda v: f"{Decimal(v):.2f}")]
ANIO_MINIMO, ANIO_MAXIMO = 1970, 2099
TEXTO_FECHA_FUERA = f"debe estar entre {ANIO_MINIMO}-01-01 y {ANIO_MAXIMO}-12-31"
TEXTO_IMPORTE_GRANDE = "el importe del pedido (la suma de las líneas) no puede pasar de 9999999999.99"
# El dominio en el OpenAPI: una fecha y hora RFC 3339 con zona, del año 1970 al 2099 tal como
# se escribe (el 29 de febrero, solo en bisiestos). Lo que el esquema dice válido, la API lo
# acepta (Schemathesis lo comprueba con datos positivos); la validación, además, admite las
# formas que pydantic ya aceptaba (sin segundos, con espacio...) dentro del mismo dominio.
_ANIO = r"(19[7-9][0-9]|20[0-9]{2})"
_MES_DIA = r"((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)"
_BISIESTO = r"(19(7[26]|8[048]|9[26])|20([02468][048]|[13579][26]))-02-29"
RE_FECHA = (rf"^({_ANIO}-{_MES_DIA}|{_BISIESTO})T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{{1,6}})?"
            r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$")


def _fecha_en_utc(fecha: datetime) -> datetime:
    """La fecha en UTC, si su año (tal como se escribe) está en el dominio; si no, un error de
    validación (422), nunca ``OverflowError`` (``0001-01-01T00:00:00+14:00`` no cabe en UTC)."""
    if not ANIO_MINIMO <= fecha.year <= ANIO_MAXIMO:
        raise PydanticCustomError("fecha_fuera_de_rango", TEXTO_FECHA_FUERA)
    try:
        return fecha.astimezone(UTC)
    except OverflowError:  # no pasa con el dominio de arriba; por si se amplía
        raise PydanticCustomError("fecha_fuera_de_rango", TEXTO_FECHA_FUERA) from None


Fecha = Annotated[AwareDatetime, AfterValidator(_fecha_en_utc),
                  WithJsonSchema({"type": "string", "format": "date-time", "pattern": RE_FECHA})]
Texto = Annotated[str, Field(min_length=1, max_length=200)]


class _Forma(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class Direccion(_Forma):
    calle: Texto
    codigo_postal: str = Field(pattern=r"^(0[1-9]|[1-4][0-9]|5[0-2])[0-9]{3}$")
    localidad: str = Field(min_length=1, max_length=100)


class DatosCliente(_Forma):
    nombre: Texto
    email: str | None = Field(default=None, max_length=200, pattern=r"^[^@\s\x00]+@[^@\s\x00]+$")
    telefono: str | None = Field(default=None, max_length=30, pattern=r"^\+?[0-9 ]{3,29}$")
    direccion: Direccion | None = None


class DatosProducto(_Forma):
    nombre: Texto
    categoria: str = Field(min_length=1, max_length=100)
    pvp: Annotated[Importe, Field(description=(
        'Precio de venta en la tienda de la clave, como texto: "24.90". Cada tienda tiene el '
        "suyo: no cambia lo que cobra ni devuelve otra tienda."))]


class DatosStock(_Forma):
    unidades: int = Field(ge=0, le=10_000_000)


class LineaPedido(_Forma):
    linea: int = Field(ge=1, le=1000)
    sku: Id
    unidades: int = Field(ge=1, le=100_000)
    precio_unitario: Importe


ESTADOS = Literal["pendiente", "enviado", "entregado", "cancelado"]


# Lo que el estado exige, también en el OpenAPI: un pedido enviado trae ``enviado_en`` y uno
# entregado, ``entregado_en`` (si no, 422 con el campo).
_EXIGE_FECHA = {"allOf": [
    {"if": {"properties": {"estado": {"const": estado}}, "required": ["estado"]},
     "then": {"required": [campo], "properties": {campo: {"type": "string"}}}}
    for estado, campo in (("enviado", "enviado_en"), ("entregado", "entregado_en"))]}


class DatosPedido(_Forma):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False, json_schema_extra=_EXIGE_FECHA)

    cliente_id: Id = Field(description="Cliente de la misma tienda (enviado antes).")
    fecha: Fecha = Field(description="Fecha y hora de la compra.")
    estado: ESTADOS
    enviado_en: Fecha | None = Field(default=None, description="Obligatoria si está enviado; "
                                                               "opcional si entregado o cancelado.")
    entregado_en: Fecha | None = Field(default=None, description="Obligatoria si y solo si está entregado.")
    lineas: list[LineaPedido] = Field(min_length=1, max_length=200, description=(
        "El pedido entero: las líneas que no vienen se quitan (409 si el libro ya las compensó)."))
    direccion_envio: Direccion | None = None
    referencia_pago: str | None = Field(default=None, min_length=1, max_length=200, description=(
        "El pago original en la pasarela de la tienda (p. ej. un payment_intent de Stripe)."))
    metodo_pago: Literal["tarjeta", "bizum", "transferencia"] | None = Field(default=None, description=(
        "Con qué se pagó: a ese medio vuelve un reembolso y de él sale el plazo que se dice al cliente "
        "(sin dato: tarjeta)."))


class CambioEstado(_Forma):
    estado: Literal["pendiente", "enviado", "entregado", "cancelado"]
    fecha: Fecha | None = Field(
        default=None, description="Cuándo salió o se entregó (por defecto, ahora).")


class _LoteCliente(DatosCliente):
    tipo: Literal["cliente"]
    id: Id


class _LoteProducto(DatosProducto):
    tipo: Literal["producto"]
    sku: Id


class _LoteStock(DatosStock):
    tipo: Literal["stock"]
    sku: Id


class _LotePedido(DatosPedido):
    tipo: Literal["pedido"]
    id: str = Field(pattern=RE_PEDIDO)


class _LoteEstado(CambioEstado):
    tipo: Literal["estado"]
    id: str = Field(pattern=RE_PEDIDO)


Registro = Annotated[
    _LoteCliente | _LoteProducto | _LoteStock | _LotePedido | _LoteEstado, Field(discriminator="tipo")
]
_LECTOR = TypeAdapter(Registro)

_TEXTOS = {
    "missing": "es obligatorio",
    "extra_forbidden": "campo no admitido",
    "string_type": "debe ser un texto",
    "string_too_short": "no puede estar vacío",
    "string_too_long": "es demasiado largo (máximo {max_length} caracteres)",
    "string_pattern_mismatch": "no tiene el formato válido",
    "int_type": "debe ser un número entero",
    "int_parsing": "debe ser un número entero",
    "int_from_float": "debe ser un número entero",
    "greater_than_equal": "debe ser mayor o igual que {ge}",
    "less_than_equal": "debe ser menor o igual que {le}",
    "literal_error": "valor no permitido ({expected})",
    "list_type": "debe ser una lista",
    "too_short": "debe tener al menos {min_length} elemento(s)",
    "too_long": "tiene demasiados elementos (máximo {max_length})",
    "model_type": "debe ser un objeto",
    "model_attributes_type": "debe ser un objeto",
    "datetime_type": "debe ser una fecha y hora ISO 8601 con zona (2026-10-01T10:00:00+02:00)",
    "datetime_parsing": "debe ser una fecha y hora ISO 8601 con zona (2026-10-01T10:00:00+02:00)",
    "datetime_from_date_parsing": "debe ser una fecha y hora ISO 8601 con zona",
    "timezone_aware": "le falta la zona horaria (+02:00 o Z)",
    "fecha_fuera_de_rango": TEXTO_FECHA_FUERA,
    "union_tag_invalid": "tipo desconocido (cliente, producto, stock, pedido o estado)",
    "union_tag_not_found": "falta el campo «tipo» (cliente, producto, stock, pedido o estado)",
    "json_invalid": "la línea no es JSON válido",
    "json_type": "la línea no es JSON válido",
}
_PISTAS = {"precio_unitario": 'un importe con punto y dos decimales como mucho ("24.90")',
           "pvp": 'un importe con punto y dos decimales como mucho ("24.90")',
           "id": "un id de pedido P-AAAAMMDD-NNNN"}


def mensaje_validacion(error: ValidationError) -> RegistroNoValido:
    """El primer error de pydantic como ``RegistroNoValido`` en español, con su campo."""
    primero = error.errors()[0]
    tipo = primero.get("type", "")
    # El primer elemento de loc en un lote es el tipo del registro (la rama de la unión).
    loc = [str(p) for p in primero.get("loc", ())]
    if loc and loc[0] in ("cliente", "producto", "stock", "pedido", "estado") and tipo not in (
            "union_tag_invalid", "union_tag_not_found"):
        loc = loc[1:]
    campo = ".".join(loc) or ("tipo" if tipo.startswith("union_tag") else "")
    try:
        frase = _TEXTOS.get(tipo, "valor no válido").format(**(primero.get("ctx") or {}))
    except (KeyError, IndexError):
        frase = _TEXTOS.get(tipo, "valor no válido")
    if tipo == "string_pattern_mismatch" and loc and loc[-1] in _PISTAS:
        frase = f"debe ser {_PISTAS[loc[-1]]}"
    return RegistroNoValido(f"{campo}: {frase}" if campo else frase, campo=campo)


def leer_linea(texto: str | bytes) -> Any:
    """Un registro de un lote (una línea JSON) ya validado; ``RegistroNoValido`` si no."""
    try:
        return _LECTOR.validate_json(texto)
    except ValidationError as exc:
        raise mensaje_validacion(exc) from None


def _rechazo(campo: str, motivo: str) -> RegistroRechazado:
    return RegistroRechazado(f"{campo}: {motivo}", campo=campo)


def _falta(campo: str, motivo: str) -> RegistroNoValido:
    return RegistroNoValido(f"{campo}: {motivo}", campo=campo)


def coherencia(pedido: DatosPedido) -> None:
    """Lo que la forma no dice: fechas y estado, líneas sin repetir. ``RegistroRechazado``;
    la fecha que el estado exige y falta, ``RegistroNoValido`` (422, es forma)."""
    vistas: set[int] = set()
    for i, linea in enumerate(pedido.lineas):
        if linea.linea in vistas:
            raise _rechazo(f"lineas.{i}.linea", f"la línea {linea.linea} está repetida")
        vistas.add(linea.linea)
    if pedido.estado == "entregado" and pedido.entregado_en is None:
        raise _falta("entregado_en", "un pedido entregado necesita su fecha de entrega")
    if pedido.estado != "entregado" and pedido.entregado_en is not None:
        raise _rechazo("entregado_en", f"un pedido {pedido.estado} no tiene fecha de entrega")
    if pedido.estado == "enviado" and pedido.enviado_en is None:
        raise _falta("enviado_en", "un pedido enviado necesita su fecha de envío")
    if pedido.estado == "pendiente" and pedido.enviado_en is not None:
        raise _rechazo("enviado_en", "un pedido pendiente no tiene fecha de envío")
    if sum((Decimal(lin.precio_unitario) * lin.unidades for lin in pedido.lineas), Decimal(0)) > dinero.MAXIMO:
        raise _rechazo("lineas", "el importe del pedido (la suma de las líneas) no cabe en el libro: "
                                 f"no puede pasar de {dinero.MAXIMO}")
    fechas = [("fecha", pedido.fecha), ("enviado_en", pedido.enviado_en), ("entregado_en", pedido.entregado_en)]
    presentes = [(n, f) for n, f in fechas if f is not None]
    for (antes, f1), (despues, f2) in zip(presentes, presentes[1:], strict=False):
        if f2 < f1:
            raise _rechazo(despues, f"no puede ser anterior a {antes}")


def huella(datos: BaseModel) -> tuple[str, str]:
    """(sha256, JSON) del registro sin su tipo ni su id: el mismo cuerpo, la misma huella.

    Los importes y las fechas ya vienen normalizados de la validación ("24.9" y "24.90" son
    el mismo; la misma hora con otra zona, también). El JSON es lo que se guarda."""
    fuera = {"tipo", "id", "sku"} if hasattr(datos, "tipo") else None
    cuerpo = datos.model_dump_json(exclude=fuera, exclude_none=True)
    return hashlib.sha256(cuerpo.encode()).hexdigest(), cuerpo
