"""Cuerpos malformados contra TODAS las rutas de la app (las de ``app.routes``), sin token y
con cada rol, en un ``agente serve`` de verdad: anidamiento de miles de niveles (con y sin
``\\u0000``), bytes nulos, UTF-8 no válido, JSON roto y cuerpos de más de 16 KiB. Cada
ruta con cuerpo responde 422 (413 si es demasiado grande) con ``{"detalle"}`` en español
(``{"detail"}`` bajo ``/langgraph``, la forma del protocolo; 400 en el webhook del proveedor
de pagos, cuyo contrato rechaza así)
antes de mirar el token; las demás no lo leen. Nunca un 500, y el log sin trazas."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fastapi.routing import iter_route_contexts
from starlette.routing import Mount

from agente.web.app import crear_app
from agente.web.entrada.auth import emitir_token
from agente.web.infra.cuerpo import (
    DETALLE_JSON,
    DETALLE_PROFUNDIDAD,
    DETALLE_UTF8,
    SIN_CUERPO,
    revisar,
)
from agente.web.infra.texto_seguro import DETALLE_NULO
from tests.apoyo.web_util import DEVOLVER_CAFETERA, ServidorEnProceso, ajustes_web, cab, token

DETALLE_GRANDE = "la petición es demasiado grande (máximo 16 KiB)"
PROFUNDO = 3000

# nombre -> (cuerpo, estado y detalle esperados en las rutas con cuerpo)
CUERPOS = {
    "anidado-con-nulo": (b'{"texto": "\\u0000", "x": ' + b"[" * PROFUNDO + b"]" * PROFUNDO + b"}",
                         422, DETALLE_PROFUNDIDAD),
    "anidado": (b"[" * PROFUNDO + b"]" * PROFUNDO, 422, DETALLE_PROFUNDIDAD),
    "objetos-anidados": (b'{"a":' * 2000 + b"1" + b"}" * 2000, 422, DETALLE_PROFUNDIDAD),  # < 16 KiB
    "anidado-sin-cerrar": (b'{"texto": "\\u0000", "x": ' + b"[" * PROFUNDO, 422, DETALLE_PROFUNDIDAD),
    "nulo-escapado": (b'{"texto": "hola\\u0000", "rol": "cliente", "id": "C-0001\\u0000", "decisiones": '
                      b'[{"type": "reject", "message": "no\\u0000"}]}', 422, DETALLE_NULO),
    "nulo-en-una-clave": (b'{"texto\\u0000": "hola"}', 422, DETALLE_NULO),
    "byte-nulo": (b'{"texto": "hola\x00"}', 422, DETALLE_NULO),
    "utf8-no-valido": (b'{"texto": "\xff\xfe\xc3("}', 422, DETALLE_UTF8),
    "sustituto-suelto": (b'{"texto": "hola \\ud800", "args": {"\\udfff": 1}}', 422, DETALLE_JSON),
    "json-roto": (b'{"texto": ', 422, DETALLE_JSON),
    "entero-enorme": (b'{"texto": ' + b"9" * 5000 + b"}", 422, DETALLE_JSON),
    "demasiado-grande": (b'{"texto": "' + b"a" * 17_000 + b'"}', 413, DETALLE_GRANDE),
    "grande-y-anidado": (b"[" * 20_000, 413, DETALLE_GRANDE),
    # JSON válido y hondo, pero dentro del límite: pasa la puerta y lo juzga cada ruta (sin 500).
    "hondo-pero-valido": (b'{"texto": "hola", "rol": "cliente", "id": "C-0001", "decisiones": [{"type": "edit", '
                          b'"edited_action": {"name": "reembolsar", "args": {"x": ' + b"[" * 180 + b"]" * 180
                          + b"}}}]}", None, None),
}
QUIENES = (None, "C-0001", "enc-talavera", "ger-talavera")
# Los lotes de la tienda son JSON lines, no JSON: su puerta solo mira los bytes (nulos, también
# escapados, y UTF-8); lo demás es de cada línea y, sin clave de API (aquí no hay), un 401.
JSON_LINES = {("POST", "/api/tienda/v1/lotes")}
# Fuera del documento OpenAPI: el webhook del proveedor de pagos (lo llama Stripe, no un cliente).
FUERA_DEL_DOCUMENTO = {("POST", "/api/pasarela/stripe/webhook")}
# Y su contrato (el de Stripe) rechaza con 400, no con 422: el mismo motivo, otro estado.
CON_400 = FUERA_DEL_DOCUMENTO


def _esperado_json_lines(cuerpo: bytes) -> tuple[int, str]:
    if b"\x00" in cuerpo or b"\\u0000" in cuerpo:
        return 422, DETALLE_NULO
    try:
        cuerpo.decode("utf-8")
    except UnicodeDecodeError:
        return 422, DETALLE_UTF8
    return 401, "falta una clave de API válida (cabecera X-Clave-API)"


def _rutas(app) -> list[tuple[str, str]]:
    """(método, ruta) de cada ruta de la app, montajes incluidos (con un fichero que no existe)."""
    rutas = []
    for contexto in iter_route_contexts(app.routes):
        if isinstance(contexto.original_route, Mount):
            rutas.append(("GET", contexto.original_route.path + "/no-existe.js"))
            continue
        rutas.extend((metodo, contexto.path) for metodo in sorted(contexto.methods or ()))
    return rutas


def _json(datos: bytes):
    try:
        return json.loads(datos)
    except ValueError:
        return datos


def _clave(plantilla: str) -> str:
    """La clave del error: ``detail`` bajo el protocolo de LangGraph, ``detalle`` en el resto."""
    return "detail" if plantilla.startswith("/langgraph/") else "detalle"


def _token(ajustes, quien: str) -> str:
    if quien.startswith("ger-"):  # gerente: firma como encargado y administra la política
        return emitir_token(ajustes, rol="encargado", sujeto=quien, tienda="talavera")
    return token(ajustes, quien)


@pytest.mark.lento
def test_ningun_cuerpo_malformado_da_500_en_ninguna_ruta_con_o_sin_token(bd_url):
    ajustes = ajustes_web(bd_url)
    rutas = _rutas(crear_app(ajustes))
    con_cuerpo = [(m, r) for m, r in rutas if m not in SIN_CUERPO]
    # Las rutas con cuerpo de hoy; si aparece otra, entra sola en la prueba.
    assert {("POST", "/api/conversaciones"), ("POST", "/api/conversaciones/{thread_id}/mensajes"),
            ("POST", "/api/aprobaciones/{thread_id}/decision"), ("DELETE", "/api/aprobaciones/{thread_id}/reclamar"),
            ("POST", "/api/politica/{tienda}"), ("POST", "/api/demo/login")} <= set(con_cuerpo)
    tokens = {quien: _token(ajustes, quien) for quien in QUIENES if quien}
    with ServidorEnProceso(bd_url) as servidor, httpx.Client(base_url=servidor.esperar(), timeout=30) as http:
        # Un hilo de verdad, parado en una aprobación: las rutas con id llegan hasta el fondo.
        cliente = cab(tokens["C-0001"])
        hilo = http.post("/api/conversaciones", headers=cliente).json()["thread_id"]
        r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": DEVOLVER_CAFETERA}, headers=cliente)
        assert r.json()["estado"] == "esperando_aprobacion", r.text
        fallos = []
        for metodo, plantilla in rutas:
            ruta = plantilla.replace("{thread_id}", hilo).replace("{tienda}", "talavera")
            for quien in QUIENES:
                cabeceras = {"Content-Type": "application/json", **(cab(tokens[quien]) if quien else {})}
                for nombre, (cuerpo, estado, detalle) in CUERPOS.items():
                    # En streaming: una ruta SSE abre su flujo y basta con ver el estado.
                    caso = f"{metodo} {plantilla} {quien or 'sin token'} {nombre}"
                    try:
                        with http.stream(metodo, ruta, content=cuerpo, headers=cabeceras) as respuesta:
                            obtenido = respuesta.status_code
                            leer = obtenido >= 400 or metodo not in SIN_CUERPO
                            datos = respuesta.read() if leer else b""
                    except httpx.HTTPError as exc:
                        fallos.append(f"{caso}: {exc!r}")
                        continue
                    caso += f": {obtenido} {datos[:120]!r}"
                    if obtenido >= 500:
                        fallos.append(caso)
                    elif (metodo, plantilla) in JSON_LINES:
                        estado_l, detalle_l = _esperado_json_lines(cuerpo)
                        if (obtenido, _json(datos)) != (estado_l, {"detalle": detalle_l}):
                            fallos.append(caso)
                    elif metodo not in SIN_CUERPO and estado is not None and (
                            (obtenido, _json(datos)) != (400 if (metodo, plantilla) in CON_400 and estado == 422
                                                         else estado, {_clave(plantilla): detalle})):
                        fallos.append(caso)
        documento = http.get("/openapi.json").json()
        log = Path(servidor.log.name).read_text(errors="replace")
    # El documento declara lo que se acaba de ver: 413 y 422 en cada operación con cuerpo.
    for metodo, plantilla in set(con_cuerpo) - FUERA_DEL_DOCUMENTO:
        respuestas = documento["paths"][plantilla][metodo.lower()]["responses"]
        assert {"413", "422"} <= set(respuestas), (metodo, plantilla)
    assert fallos == [], "\n".join(fallos)
    assert "Traceback" not in log and "RecursionError" not in log, log[-3000:]
    assert "error no controlado" not in log


def test_un_cuerpo_valido_pasa_la_puerta_y_uno_vacio_tambien():
    assert revisar(b"") is None
    assert revisar(b'{"texto": "C:\\\\u0000 hola", "n": [1, 2, {"a": null}]}') is None
    assert revisar(b'\xef\xbb\xbf{"texto": "con BOM, como lo lee Starlette"}') is None
    assert revisar('{"texto": "¿Dónde está? ñ €"}'.encode()) is None
    assert revisar(b'{"texto": "\\ud83d\\ude00 un emoji en su par de sustitutos"}') is None
    assert revisar(b"[" * 150 + b"]" * 150) is None  # hondo, pero dentro del límite del analizador
