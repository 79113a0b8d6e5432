"""Fixtures de todas las carpetas: un PostgreSQL real por sesión y una base de datos nueva por test.

Sin ``DATABASE_URL`` se arranca el PostgreSQL embebido en una carpeta temporal. Cada
test recibe una base clonada de una plantilla ya migrada (``CREATE DATABASE ...
TEMPLATE``), así que los tests no se ven entre sí y no hay que limpiar nada. Aquí también
el servicio completo (``servicio``) y los canales de aviso reales (``smtp``,
``receptor_webhook``). Al acabar, cada base comprueba que el agente no dijo nada que no
pasó (``tests/apoyo/afirmaciones.py``; ``@pytest.mark.afirmaciones_falsas`` lo permite). Lo propio de un tipo de prueba está en el ``conftest.py`` de su
carpeta (``api``: la app por HTTP; ``navegador``: Chromium; ``unidad``: ninguna base); lo
que no es una fixture, en ``tests/apoyo/``. Ninguna prueba importa otra (ni este fichero).
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
from agente.demo.carga import cargar_demo
from tests.apoyo.afirmaciones import comprobar_afirmaciones
from tests.apoyo.bases import borrar_base, crear_base
from tests.apoyo.rutas import RAIZ

# Los ficheros temporales de las pruebas (el PostgreSQL de la sesión con todas sus bases, los
# servidores que arrancan las pruebas de procesos, los perfiles de Chromium) en memoria si la
# máquina tiene un tmpfs con sitio: en un disco con ``discard``, cada base clonada y borrada
# deja escrituras y TRIM que el disco cobra después, y clonar pasaba de 30 a 400 ms por prueba.
# Se fija al importar, antes de que pytest-xdist lance sus procesos (heredan el entorno).
# Con TMPDIR ya fijado, manda quien lo fijó.
_MEMORIA = Path("/dev/shm")
_LIBRE_MINIMO = 4 * 2**30


def _temporales_en_memoria() -> None:
    if os.environ.get("TMPDIR") or not _MEMORIA.is_dir() or not os.access(_MEMORIA, os.W_OK):
        return
    estado = os.statvfs(_MEMORIA)
    if estado.f_bavail * estado.f_frsize < _LIBRE_MINIMO:
        return
    carpeta = _MEMORIA / "agente-pruebas"
    carpeta.mkdir(mode=0o1777, exist_ok=True)
    os.environ["TMPDIR"] = str(carpeta)
    tempfile.tempdir = None  # que tempfile vuelva a mirar TMPDIR


_temporales_en_memoria()

# Lo que depende del servidor de base de datos (SQL propio, candados, aislamiento serializable,
# migraciones, concurrencia y caídas): ``@pytest.mark.servidor_bd``. .ci/run lo pasa otra vez
# sobre el PostgreSQL de Debian; lo demás (la API, la CLI, el modelo, las trazas) habla con la
# base a través del mismo servicio y no cambia de un servidor a otro.
SERVIDOR_BD = frozenset({
    *(f"tests/integracion/test_{n}.py" for n in (
        "auditoria_serie", "caos", "capacidad", "cimientos", "demo_una_vez", "derivados", "herramientas",
        "historias_concurrentes", "ingesta_concurrencia", "ingesta_contra_el_chat", "libro", "libro_auditoria",
        "libro_estados", "libro_historias", "libro_liquidacion", "libro_migracion", "libro_pendientes",
        "notificaciones", "notificaciones_canales", "politica_serializable", "politicas", "precios_migracion",
        "retencion", "servicio")),
    *(f"tests/procesos/test_{n}.py" for n in (
        "avisos_cliente_caida", "bd_caida", "bench_serializable", "candados", "parada", "reembolso_crash",
        "stripe_crash", "turno_sin_cerrar", "turno_sin_respuesta")),
    "tests/trampas/test_trampas.py",
})


def pytest_collection_modifyitems(config, items):
    faltan = sorted(r for r in SERVIDOR_BD if not (RAIZ / r).exists())
    assert not faltan, f"SERVIDOR_BD (tests/conftest.py) nombra ficheros que no existen: {faltan}"
    for item in items:
        if Path(item.path).resolve().relative_to(RAIZ).as_posix() in SERVIDOR_BD:
            item.add_marker(pytest.mark.servidor_bd)


@pytest.fixture(scope="session")
def url_admin():
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    carpeta = Path(tempfile.mkdtemp(prefix="agente-tests-"))
    servidor = arrancar_embebido(carpeta / "pgdata")
    # Un servidor de pruebas que se tira al acabar (como el de Debian en .ci/postgres-debian):
    # sin esperar al disco en cada COMMIT ni en cada CREATE DATABASE.
    with psycopg.connect(servidor.get_uri(), autocommit=True) as conexion:
        for ajuste in ("fsync", "synchronous_commit", "full_page_writes"):
            conexion.execute(f"ALTER SYSTEM SET {ajuste} = off")
        conexion.execute("SELECT pg_reload_conf()")
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
def bd_url(request, url_admin, plantillas):
    """URL de una base nueva con el esquema y el catálogo de demo.

    Al acabar, ningún mensaje del agente en ella afirma algo que no pasó (issue 42)."""
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["demo"])
    yield url
    try:
        comprobar_afirmaciones(request, url)
    finally:
        borrar_base(url_admin, nombre)


@pytest.fixture
def bd_vacia_url(request, url_admin, plantillas):
    """URL de una base nueva con el esquema migrado y sin datos (y la misma comprobación)."""
    nombre = f"t_{uuid.uuid4().hex[:12]}"
    url = crear_base(url_admin, nombre, plantilla=plantillas["esquema"])
    yield url
    try:
        comprobar_afirmaciones(request, url)
    finally:
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
    from caja.pasarela import PasarelaSimulada
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

