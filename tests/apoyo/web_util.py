"""Utilidades de las pruebas web: ajustes, tokens, SSE, un servidor real en un hilo o proceso."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psycopg
import uvicorn

from agente.bd.pool import KWARGS_CONEXION
from agente.web.entrada.auth import emitir_token
from nucleo.ajustes import Ajustes

from .rutas import RAIZ

# Pasa la comprobación de fuera del modo demo (nucleo.secretos); solo para pruebas.
SECRETO = "4f0c9a7e2b61d8a35c7e90f1b2d4a6c8e0f13579bdf2468ace0b1d3f5a7c9e1b"
DEVOLVER_CAFETERA = "Quiero devolver la cafetera del pedido P-20260917-0041 porque gotea"
DEVOLVER_BATIDORA = "Quiero devolver la batidora del pedido P-20260922-0077 porque no funciona"
DEVOLVER_SABANAS = "Quiero devolver las sábanas del pedido P-20260801-0007 porque no son de mi talla"
DONDE_ESTA = "¿Dónde está mi pedido P-20260925-0150?"
TIENDA = {"C-0001": "talavera", "C-0002": "talavera", "C-0003": "madrid-centro", "C-0004": "madrid-centro",
          "C-0005": "talavera", "enc-talavera": "talavera", "enc-madrid-centro": "madrid-centro",
          "enc-talavera-baja": "talavera"}


def ajustes_web(bd_url: str, **extra) -> Ajustes:
    valores = {"database_url": bd_url, "demo": True, "secreto": SECRETO, "modelo": "offline",
               "langfuse_public_key": None, "langfuse_secret_key": None, **extra}
    return Ajustes(**valores)


def token(ajustes: Ajustes, sujeto: str, **extra) -> str:
    rol = "encargado" if sujeto.startswith("enc-") else "cliente"
    return emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=extra.pop("tienda", None) or TIENDA[sujeto], **extra)


def cab(tok: str, **extra) -> dict[str, str]:
    return {"Authorization": f"Bearer {tok}", **extra}


# El encargado edita el reembolso de la cafetera (120 EUR, DEVOLVER_CAFETERA) a 90 EUR.
EDITAR_A_90 = {
    "decisiones": [{
        "type": "edit",
        "edited_action": {
            "name": "reembolsar",
            "args": {"pedido": "P-20260917-0041", "importe": "90.00", "motivo": "gotea"},
        },
    }]
}


def cliente_http(ajustes: Ajustes):
    """La app entera en proceso (TestClient): los errores salen como respuestas 500, no como excepciones."""
    from fastapi.testclient import TestClient

    from agente.web.app import crear_app

    return TestClient(crear_app(ajustes), raise_server_exceptions=False)


def abrir_conversacion(http, tok, cliente_id: str) -> str:
    """``cliente_id`` abre una conversación por la API (``http``: un TestClient): da el hilo."""
    r = http.post("/api/conversaciones", headers=cab(tok(cliente_id)))
    assert r.status_code == 201, r.text
    return r.json()["thread_id"]


def conversacion_en_pausa(http, tok, cliente_id="C-0001", texto=DEVOLVER_CAFETERA) -> str:
    """Una conversación que queda esperando a un encargado."""
    hilo = abrir_conversacion(http, tok, cliente_id)
    r = http.post(f"/api/conversaciones/{hilo}/mensajes", json={"texto": texto}, headers=cab(tok(cliente_id)))
    assert r.status_code == 200, r.text
    assert r.json()["estado"] == "esperando_aprobacion"
    return hilo


def eventos_sse(lineas: Iterable[str]) -> Iterator[tuple[str, object]]:
    """(tipo, datos) de cada evento de un flujo text/event-stream (los pings se ignoran)."""
    tipo, datos = "message", []
    for linea in lineas:
        linea = linea.rstrip("\r")
        if not linea:
            if datos:
                texto = "\n".join(datos)
                try:
                    valor = json.loads(texto)
                except ValueError:
                    valor = texto
                yield tipo, valor
            tipo, datos = "message", []
        elif linea.startswith(":"):
            continue
        elif linea.startswith("event:"):
            tipo = linea[6:].strip()
        elif linea.startswith("data:"):
            datos.append(linea[5:].lstrip(" ") if linea[5:6] == " " else linea[5:])


def sql(bd_url: str, consulta: str, params: dict | None = None) -> list[dict]:
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        cursor = c.execute(consulta, params or {})
        return cursor.fetchall() if cursor.description else []


def puerto_libre() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def esperar_salud(base: str, proceso: subprocess.Popen | None = None, limite: float = 60.0, log=None) -> None:
    fin = time.monotonic() + limite
    while time.monotonic() < fin:
        if proceso is not None and proceso.poll() is not None:
            detalle = Path(log.name).read_text() if log is not None else ""
            raise RuntimeError(f"el servidor terminó con código {proceso.returncode}: {detalle}")
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{base} no respondió a tiempo")


@contextmanager
def servidor_en_hilo(app, puerto: int | None = None, *, log_level: str = "warning") -> Iterator[str]:
    """La app servida por uvicorn en un hilo de este proceso; cede la URL base. ``puerto``:
    uno fijo (el que un proveedor OIDC tiene registrado); ``log_level="info"``: con el log
    de accesos de uvicorn (la URL de cada petición)."""
    puerto = puerto or puerto_libre()
    servidor = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=puerto, log_level=log_level,
                                             timeout_graceful_shutdown=1))
    hilo = threading.Thread(target=servidor.run, daemon=True)
    hilo.start()
    base = f"http://127.0.0.1:{puerto}"
    try:
        esperar_salud(base)
        yield base
    finally:
        servidor.should_exit = True
        hilo.join(timeout=10)


class ServidorEnProceso:
    """``agente serve`` de verdad en un subproceso. ``with`` lo arranca sin esperar (para
    solapar arranques); ``esperar()`` devuelve la URL base cuando ``/readyz`` responde."""

    def __init__(self, bd_url: str, *, workers: int = 1, **entorno: str) -> None:
        self.puerto = puerto_libre()
        self.base = f"http://127.0.0.1:{self.puerto}"
        self.env = {**os.environ, "DATABASE_URL": bd_url, "AGENTE_DEMO": "1", "AGENTE_SECRETO": SECRETO,
                    "AGENTE_MODELO": "offline", **entorno}
        for clave in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY", "PROMETHEUS_MULTIPROC_DIR"):
            self.env.pop(clave, None)
        self.workers = workers

    def __enter__(self) -> ServidorEnProceso:
        self.log = tempfile.NamedTemporaryFile(prefix="agente-serve-", suffix=".log", delete=False)
        self.proceso = subprocess.Popen(
            [sys.executable, "-m", "agente.cli", "serve", "--port", str(self.puerto),
             "--workers", str(self.workers)],
            cwd=RAIZ, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        return self

    def esperar(self) -> str:
        esperar_salud(self.base, self.proceso, log=self.log)
        return self.base

    def __exit__(self, *_exc) -> None:
        self.proceso.terminate()
        try:
            self.proceso.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proceso.kill()
            self.proceso.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)
