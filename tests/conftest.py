"""Fixtures comunes: un PostgreSQL real por sesión y una base de datos nueva por test.

Sin ``DATABASE_URL`` se arranca el PostgreSQL embebido en una carpeta temporal. Cada
test recibe una base clonada de una plantilla ya migrada (``CREATE DATABASE ...
TEMPLATE``), así que los tests no se ven entre sí y no hay que limpiar nada.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest

from agente.bd.migraciones import migrar
from agente.bd.pool import KWARGS_CONEXION, abrir_pool
from agente.bd.url import arrancar_embebido
from agente.demo import cargar_demo
from tests.apoyo.bases import borrar_base, crear_base


@pytest.fixture(scope="session")
def url_admin():
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    carpeta = Path(tempfile.mkdtemp(prefix="agente-tests-"))
    servidor = arrancar_embebido(carpeta / "pgdata")
    yield servidor.get_uri()
    servidor.cleanup()
    shutil.rmtree(carpeta, ignore_errors=True)


@pytest.fixture(scope="session")
def plantillas(url_admin):
    """Dos plantillas por sesión: solo el esquema, y esquema + demo."""
    sufijo = uuid.uuid4().hex[:8]
    esquema = f"plantilla_esquema_{sufijo}"
    demo = f"plantilla_demo_{sufijo}"
    url_esquema = crear_base(url_admin, esquema)
    migrar(url_esquema)
    url_demo = crear_base(url_admin, demo, plantilla=esquema)
    with psycopg.connect(url_demo, **KWARGS_CONEXION) as conexion:
        cargar_demo(conexion)
    yield {"esquema": esquema, "demo": demo}
    borrar_base(url_admin, demo)
    borrar_base(url_admin, esquema)


@pytest.fixture
def bd_url(url_admin, plantillas):
    """URL de una base nueva con el esquema y el catálogo de demo."""
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["demo"])
    yield url
    borrar_base(url_admin, nombre)


@pytest.fixture
def bd_vacia_url(url_admin, plantillas):
    """URL de una base nueva con el esquema migrado y sin datos."""
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["esquema"])
    yield url
    borrar_base(url_admin, nombre)


@pytest.fixture
def bd_sin_migrar_url(url_admin):
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    url = crear_base(url_admin, nombre)
    yield url
    borrar_base(url_admin, nombre)


@pytest.fixture
def pool(bd_url):
    p = abrir_pool(bd_url, max_size=8)
    yield p
    p.close()


@pytest.fixture
def conexion(bd_url):
    with psycopg.connect(bd_url, **KWARGS_CONEXION) as c:
        yield c


@pytest.fixture
def pasarela(pool):
    """La pasarela simulada, contando las llamadas: instrumenta si la herramienta se ejecutó."""
    from herramientas.pasarela import PasarelaSimulada
    from tests.apoyo.fabricas import PasarelaContada

    return PasarelaContada(PasarelaSimulada(pool=pool))


@pytest.fixture
def servicio(bd_url, pasarela):
    """El servicio completo con el modelo offline, sin trazas, sobre la base del test."""
    from agente.servicio.fabrica import crear_servicio
    from tests.apoyo.fabricas import ajustes_prueba

    s = crear_servicio(ajustes_prueba(bd_url), url=bd_url, pasarela=pasarela, pausa_reintentos=0.01)
    yield s
    s.cerrar()


# --- la app por HTTP en proceso -------------------------------------------------------------


@pytest.fixture
def ajustes(bd_url):
    """Los ajustes de la app web sobre la base del test (demo, modelo offline, sin trazas)."""
    from tests.apoyo.web_util import ajustes_web

    return ajustes_web(bd_url)


@pytest.fixture
def http(ajustes):
    """La app entera en proceso (TestClient) con esos ajustes."""
    from tests.apoyo.web_util import cliente_http

    with cliente_http(ajustes) as cliente:
        yield cliente


@pytest.fixture
def tok(ajustes):
    """``tok(sujeto)``: un token de cliente o de encargado (``enc-*``) de la tienda de la demo."""
    from tests.apoyo.web_util import token

    return lambda sujeto, **extra: token(ajustes, sujeto, **extra)


@pytest.fixture
def como(ajustes):
    """``como(sujeto)``: cabeceras con el token de un cliente o de un firmante de cualquier rol."""
    from agente.web.auth import emitir_token
    from tests.apoyo.firmas import TIENDA_DE
    from tests.apoyo.web_util import cab

    def _como(sujeto: str) -> dict[str, str]:
        rol = "cliente" if sujeto.startswith("C-") else "encargado"
        return cab(emitir_token(ajustes, rol=rol, sujeto=sujeto, tienda=TIENDA_DE[sujeto]))
    return _como


# --- canales de aviso reales en 127.0.0.1 ---------------------------------------------------


@pytest.fixture
def smtp():
    """Un servidor SMTP de verdad (aiosmtpd) que guarda los correos que recibe."""
    from tests.apoyo.fabricas_avisos import ServidorSmtp

    servidor = ServidorSmtp()
    yield servidor
    servidor.cerrar()


@pytest.fixture
def receptor_webhook():
    """Un receptor HTTP de webhooks que guarda lo que recibe (y puede fallar a propósito)."""
    from tests.apoyo.fabricas_avisos import ReceptorWebhook

    servidor = ReceptorWebhook()
    yield servidor
    servidor.cerrar()


# --- Chromium -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def navegador():
    """Chromium headless, uno por módulo; sin él se salta, salvo con ``AGENTE_EXIGIR_NAVEGADOR=1``."""
    from tests.apoyo.navegador import CHROMIUM

    if not CHROMIUM.exists():
        if os.environ.get("AGENTE_EXIGIR_NAVEGADOR") == "1":
            pytest.fail("falta /usr/bin/chromium (apt-get install -y chromium) y AGENTE_EXIGIR_NAVEGADOR=1")
        pytest.skip("sin /usr/bin/chromium: pruebas de navegador omitidas")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        navegador = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield navegador
        navegador.close()


@pytest.fixture
def base(bd_url):
    """La URL de la app servida por uvicorn en un hilo, sobre la base del test."""
    from agente.web.app import crear_app
    from tests.apoyo.web_util import ajustes_web, servidor_en_hilo

    with servidor_en_hilo(crear_app(ajustes_web(bd_url))) as url:
        yield url
