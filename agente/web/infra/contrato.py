"""El documento OpenAPI tal como se comporta la API (lo verifica Schemathesis en ``make test``).

FastAPI documenta lo que ve en cada ruta; lo que entra por las capas comunes se añade
aquí, en un solo sitio, a cada operación que lo puede devolver:

- ``422`` con la forma real ``{"detalle": "..."}`` (FastAPI pondría ``HTTPValidationError``,
  que esta API nunca devuelve): datos no válidos, un cuerpo ilegible (``cuerpo``: no es
  JSON, no es UTF-8, anida demasiado) o un texto con el carácter nulo;
  ya no hay ningún 400;
- ``413`` en cada operación con cuerpo (``POST``, ``DELETE``...): cuerpo de más de 16 KiB
  (``limites.LimiteCuerpo``);
- ``404`` en cada ruta con id: no existe (o el id trae un carácter nulo);
- ``401``/``403`` en cada ruta con token; ``404`` y ``403`` en la demo;
- ``503`` con ``Retry-After`` en cada ruta que usa la base de datos (caída, o el servidor
  se está parando: ``disponibilidad``, ``parada``);
- ``pattern`` sin el carácter nulo en cada texto que entra (cuerpo y query) que no tenga
  ya uno: la puerta (``cuerpo``, ``texto_seguro``) lo rechaza en cualquier texto, y el
  esquema lo dice;
- enlaces (``links``) de OpenAPI: la conversación creada lleva a sus mensajes, su lectura,
  su aprobación y su decisión, que es lo que recorren las pruebas con estado.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

__all__ = ["ajustar", "instalar"]

ERROR = {"$ref": "#/components/schemas/Error"}
# Bajo /langgraph, la forma de error del protocolo ({"detail"}; protocolo_langgraph.forma_error).
PROTOCOLO = "/langgraph/"
ERROR_PROTOCOLO = {"$ref": "#/components/schemas/ErrorProtocolo"}
RETRY_AFTER = {"Retry-After": {"description": "Segundos tras los que reintentar.",
                               "schema": {"type": "integer"}}}
DESCRIPCIONES = {
    "401": "Sin token o token no válido o caducado.",
    "403": "No tienes permiso: otro rol, otra tienda, otro cliente o encargado de baja.",
    "404": "No existe (también si el id trae un carácter nulo).",
    "413": "Cuerpo de más de 16 KiB.",
    "422": "Datos no válidos: campos, un cuerpo que no es JSON UTF-8 (o anida demasiado) "
           "o un texto con el carácter nulo (\\u0000).",
    "503": "No disponible: la base de datos no responde o el servidor se está parando (Retry-After).",
}
SIN_NULO = r"^[^\x00]*$"
SIN_BASE = {("get", "/api/demo/identidades"), ("get", "/langgraph/info")}  # datos fijos
CON_CUERPO = {"post", "put", "patch", "delete"}  # los métodos cuyo cuerpo se lee (y se acota)
DEMO = "/api/demo/"
# (operación origen, código) -> {nombre del enlace: (operación destino, expresión del thread_id)}
ENLACES = {
    (("post", "/api/conversaciones"), "201"): {
        "EnviarMensaje": (("post", "/api/conversaciones/{thread_id}/mensajes"), "$response.body#/thread_id"),
        "LeerConversacion": (("get", "/api/conversaciones/{thread_id}"), "$response.body#/thread_id"),
        "VerAprobacion": (("get", "/api/aprobaciones/{thread_id}"), "$response.body#/thread_id"),
        "Decidir": (("post", "/api/aprobaciones/{thread_id}/decision"), "$response.body#/thread_id"),
    },
    (("post", "/api/conversaciones/{thread_id}/mensajes"), "200"): {
        "VerAprobacion": (("get", "/api/aprobaciones/{thread_id}"), "$request.path.thread_id"),
        "Decidir": (("post", "/api/aprobaciones/{thread_id}/decision"), "$request.path.thread_id"),
        "LeerConversacion": (("get", "/api/conversaciones/{thread_id}"), "$request.path.thread_id"),
    },
    (("get", "/api/aprobaciones/{thread_id}"), "200"): {
        "Decidir": (("post", "/api/aprobaciones/{thread_id}/decision"), "$response.body#/thread_id"),
    },
    (("post", "/api/aprobaciones/{thread_id}/decision"), "200"): {
        "LeerConversacion": (("get", "/api/conversaciones/{thread_id}"), "$request.path.thread_id"),
    },
}


def _error(respuestas: dict[str, Any], codigo: str, *, cabeceras: dict | None = None,
           esquema: dict[str, str] = ERROR) -> None:
    """Documenta ``codigo`` con el esquema ``Error`` (conserva la descripción de la ruta)."""
    actual = respuestas.setdefault(codigo, {"description": DESCRIPCIONES.get(codigo, "")})
    actual["content"] = {"application/json": {"schema": esquema}}
    if cabeceras:
        actual.setdefault("headers", {}).update(cabeceras)


def ajustar(esquema: dict[str, Any]) -> dict[str, Any]:
    """Añade a cada operación los códigos de las capas comunes y los enlaces (en el sitio)."""
    for ruta, operaciones in esquema.get("paths", {}).items():
        for metodo, operacion in operaciones.items():
            respuestas = operacion.setdefault("responses", {})
            if ruta.startswith(PROTOCOLO):
                _comunes_protocolo(ruta, metodo, operacion, respuestas)
                continue
            if "422" in respuestas:
                _error(respuestas, "422")
            if not ruta.startswith("/api/"):
                if ruta == "/metrics":
                    _error(respuestas, "503", cabeceras=RETRY_AFTER)
                continue
            _error(respuestas, "422")
            if metodo in CON_CUERPO:
                _error(respuestas, "413")
            if "{" in ruta or ruta.startswith(DEMO):
                _error(respuestas, "404")
            if operacion.get("security"):
                _error(respuestas, "401")
                _error(respuestas, "403")
            if ruta.startswith(DEMO) and metodo == "post":
                _error(respuestas, "403")
            if (metodo, ruta) not in SIN_BASE:
                _error(respuestas, "503", cabeceras=RETRY_AFTER)
    esquemas = esquema.get("components", {}).get("schemas", {})
    for sobrante in ("HTTPValidationError", "ValidationError"):
        esquemas.pop(sobrante, None)
    _sin_nulo(esquema)
    _enlazar(esquema)
    return esquema


def _comunes_protocolo(ruta: str, metodo: str, operacion: dict[str, Any],
                       respuestas: dict[str, Any]) -> None:
    """Lo mismo que en /api, con la forma de error del protocolo (``{"detail"}``)."""
    def error(codigo: str, **extra: Any) -> None:
        _error(respuestas, codigo, esquema=ERROR_PROTOCOLO, **extra)

    if "422" in respuestas or metodo in CON_CUERPO or "{" in ruta or operacion.get("parameters"):
        error("422")
    if metodo in CON_CUERPO:
        error("413")
    if "{" in ruta:
        error("404")
    if operacion.get("security"):
        error("401")
        error("403")
    if (metodo, ruta) not in SIN_BASE:
        error("503", cabeceras=RETRY_AFTER)
    for codigo in ("409", "429"):
        if codigo in respuestas:
            error(codigo, **({"cabeceras": RETRY_AFTER} if codigo == "429" else {}))


def _sin_nulo(esquema: dict[str, Any]) -> None:
    """Pone ``SIN_NULO`` en cada texto de entrada sin ``pattern``, ``enum`` ni ``format``
    (solo en lo que entra: los esquemas de los cuerpos, con sus ``$ref``, y la query)."""
    componentes = esquema.get("components", {}).get("schemas", {})
    vistos: set[str] = set()

    def recorrer(nodo: Any) -> None:
        if isinstance(nodo, list):
            for x in nodo:
                recorrer(x)
            return
        if not isinstance(nodo, dict):
            return
        ref = nodo.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            nombre = ref.rsplit("/", 1)[1]
            if nombre not in vistos:
                vistos.add(nombre)
                recorrer(componentes.get(nombre))
        if nodo.get("type") == "string" and not {"pattern", "enum", "const", "format"} & nodo.keys():
            nodo["pattern"] = SIN_NULO
        if nodo.get("type") == "object" and nodo.get("additionalProperties") and "propertyNames" not in nodo:
            nodo["propertyNames"] = {"pattern": SIN_NULO}  # las claves también son textos
        for clave, valor in nodo.items():
            if clave in ("properties", "patternProperties"):
                for sub in valor.values():
                    recorrer(sub)
            elif clave not in ("$ref", "enum", "const", "examples", "default"):
                recorrer(valor)

    for operaciones in esquema.get("paths", {}).values():
        for operacion in operaciones.values():
            if not isinstance(operacion, dict):
                continue
            for parametro in operacion.get("parameters", []):
                if parametro.get("in") == "query":
                    recorrer(parametro.get("schema"))
            for medio in (operacion.get("requestBody") or {}).get("content", {}).values():
                recorrer(medio.get("schema"))


def _enlazar(esquema: dict[str, Any]) -> None:
    paths = esquema.get("paths", {})

    def operacion(metodo: str, ruta: str) -> dict[str, Any] | None:
        return paths.get(ruta, {}).get(metodo)

    for ((metodo, ruta), codigo), enlaces in ENLACES.items():
        origen = operacion(metodo, ruta)
        if origen is None or codigo not in origen.get("responses", {}):
            continue
        destino_links = {}
        for nombre, ((metodo_d, ruta_d), expresion) in enlaces.items():
            destino = operacion(metodo_d, ruta_d)
            if destino is not None and destino.get("operationId"):
                destino_links[nombre] = {
                    "operationId": destino["operationId"],
                    "parameters": {"thread_id": expresion},
                }
        if destino_links:
            origen["responses"][codigo]["links"] = destino_links


def instalar(app: FastAPI) -> None:
    """``app.openapi()`` devuelve el documento ajustado (calculado una vez)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = ajustar(get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes,
            ))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
