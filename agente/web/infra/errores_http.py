"""Traducción a HTTP de los errores, en un solo sitio: ``{"detalle": <mensaje en español>}``.

Un 405 lleva ``Allow`` con todos los métodos de la URL (``metodos_permitidos``)."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agente.servicio.operador.plataforma import ERRORES_BD_CAIDA
from agente.web.infra.disponibilidad import DETALLE_BD_CAIDA, REINTENTAR_SEGUNDOS, no_disponible
from nucleo.errores import (
    DemasiadasPeticiones,
    ErrorDominio,
    HiloOcupado,
    NoAutorizado,
    NoDisponible,
)

logger = logging.getLogger(__name__)

TEXTOS_HTTP = {
    400: "petición no válida",
    401: "falta una credencial válida",
    403: "no tienes permiso para esto",
    404: "no encontrado",
    405: "método no permitido",
    406: "formato de respuesta no disponible",
    413: "la petición es demasiado grande",
    415: "tipo de contenido no admitido",
    429: "demasiadas peticiones",
    500: "error interno del servidor",
    503: "servicio no disponible",
}

# Tipos de error de pydantic -> texto en español (el resto cae en "valor no válido").
_TEXTOS_VALIDACION = {
    "missing": "es obligatorio",
    "string_too_short": "no puede estar vacío",
    "string_too_long": "es demasiado largo (máximo {max_length} caracteres)",
    "string_type": "debe ser un texto",
    "int_parsing": "debe ser un número entero",
    "int_type": "debe ser un número entero",
    "greater_than_equal": "debe ser mayor o igual que {ge}",
    "less_than_equal": "debe ser menor o igual que {le}",
    "too_short": "debe tener al menos {min_length} elemento(s)",
    "too_long": "tiene demasiados elementos (máximo {max_length})",
    "list_type": "debe ser una lista",
    "dict_type": "debe ser un objeto",
    "model_type": "debe ser un objeto",
    "model_attributes_type": "debe ser un objeto",
    "json_invalid": "el cuerpo no es JSON válido",
    "union_tag_invalid": "tipo de decisión desconocido (approve, edit, reject o respond)",
    "union_tag_not_found": "falta el campo «type» de la decisión",
    "literal_error": "valor no permitido",
    "extra_forbidden": "campo no admitido",
    "value_error": "{error}",
    "string_pattern_mismatch": "no tiene el formato válido",
    "datetime_type": "debe ser una fecha y hora ISO 8601 con zona (2026-10-01T10:00:00+02:00)",
    "datetime_parsing": "debe ser una fecha y hora ISO 8601 con zona (2026-10-01T10:00:00+02:00)",
    "datetime_from_date_parsing": "debe ser una fecha y hora ISO 8601 con zona",
    "timezone_aware": "le falta la zona horaria (+02:00 o Z)",
    "fecha_fuera_de_rango": "debe estar entre 1970-01-01 y 2099-12-31",
}


def _campo(loc: tuple[Any, ...]) -> str:
    partes = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(partes)


def texto_validacion(errores: list[dict[str, Any]]) -> str:
    frases = []
    for error in errores[:5]:
        plantilla = _TEXTOS_VALIDACION.get(error.get("type", ""), "valor no válido")
        try:
            frase = plantilla.format(**(error.get("ctx") or {}))
        except (KeyError, IndexError):
            frase = plantilla
        campo = "" if error.get("type") == "json_invalid" else _campo(tuple(error.get("loc", ())))
        frases.append(f"{campo}: {frase}" if campo else frase)
    return "; ".join(frases) or "petición no válida"


def respuesta_error(estado: int, detalle: str, cabeceras: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detalle": detalle}, status_code=estado, headers=cabeceras)


def metodos_permitidos(app: FastAPI, request: Request) -> str:
    """Los métodos que el documento OpenAPI declara para esa URL, para ``Allow`` en un 405.

    Starlette pone en ``Allow`` solo los de la primera ruta que casa con la URL, y aquí cada
    método es su propia ruta (``GET`` y ``POST /api/conversaciones``): se leen del documento,
    que es lo que promete la API."""
    ruta = request.url.path
    paths = app.openapi().get("paths", {})
    por_parametros: dict[int, set[str]] = {}
    for plantilla, operaciones in paths.items():
        if re.fullmatch(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(plantilla)), ruta):
            # Las plantillas con menos parámetros son las más concretas: mandan ellas.
            por_parametros.setdefault(plantilla.count("{"), set()).update(
                m.upper() for m in operaciones if m in _METODOS)
    return ", ".join(sorted(por_parametros[min(por_parametros)])) if por_parametros else ""


_METODOS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def instalar(app: FastAPI) -> None:
    @app.exception_handler(ErrorDominio)
    async def _dominio(_request: Request, exc: ErrorDominio) -> JSONResponse:
        cabeceras = {}
        if isinstance(exc, NoAutorizado):
            cabeceras["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, DemasiadasPeticiones | HiloOcupado):
            # 429 por ritmo, o 409 porque otra ejecución tiene el hilo: basta con esperar.
            cabeceras["Retry-After"] = str(exc.datos.get("reintentar_en", 60))
        if isinstance(exc, NoDisponible):
            # 503 (parada, saturación, candado perdido): el suyo si lo trae, si no el de serie.
            cabeceras["Retry-After"] = str(exc.datos.get("reintentar_en", REINTENTAR_SEGUNDOS))
            logger.warning("503: %s", exc.mensaje)
        elif exc.estado_http >= 500:
            logger.error("error %s: %s", exc.estado_http, exc.mensaje)
        return respuesta_error(exc.estado_http, exc.mensaje, cabeceras or None)

    @app.exception_handler(RequestValidationError)
    async def _validacion(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return respuesta_error(422, texto_validacion(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI da 400 cuando no puede leer el cuerpo (bytes que no son UTF-8): para el
            # cliente es lo mismo que un JSON roto, 422 (la API no tiene ningún 400).
            return respuesta_error(422, _TEXTOS_VALIDACION["json_invalid"])
        detalle = TEXTOS_HTTP.get(exc.status_code, "error en la petición")
        cabeceras = getattr(exc, "headers", None)
        if exc.status_code == 405:
            cabeceras = {**(cabeceras or {}), "Allow": metodos_permitidos(app, _request)}
        return respuesta_error(exc.status_code, detalle, cabeceras)

    async def _bd_caida(_request: Request, exc: Exception) -> JSONResponse:
        # PoolTimeout (sin conexión libre en AGENTE_POOL_ESPERA s) y conexiones rotas: 503.
        logger.warning("base de datos no disponible: %s", type(exc).__name__)
        return no_disponible(DETALLE_BD_CAIDA)

    for tipo in ERRORES_BD_CAIDA:
        app.add_exception_handler(tipo, _bd_caida)

    @app.exception_handler(Exception)
    async def _inesperado(_request: Request, exc: Exception) -> JSONResponse:
        logger.exception("error no controlado", exc_info=exc)
        return respuesta_error(500, TEXTOS_HTTP[500])
