"""La web no habla con la base de datos: todo pasa por el servicio (issue 11)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.apoyo.rutas import RAIZ

WEB = RAIZ / "agente" / "web"

# Lo que delataría SQL o un acceso directo a la base desde agente/web/.
PROHIBIDO = {
    "constante SQL": re.compile(r"^\s*[A-Z_]*_SQL\s*=", re.MULTILINE),
    "execute": re.compile(r"\.execute\("),
    "conexión del pool": re.compile(r"\.connection\("),
    "psycopg": re.compile(r"^\s*(import|from)\s+psycopg", re.MULTILINE),
    "sentencia": re.compile(r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|LISTEN)\s+[\w*(]"),
    "pool del servicio": re.compile(r"servicio\.pool\b"),
}


def _modulos() -> list[Path]:
    return sorted(WEB.rglob("*.py"))


def test_hay_modulos_web_que_revisar():
    assert {p.relative_to(WEB).as_posix() for p in _modulos()} >= {"app.py", "infra/limites.py", "infra/metricas.py", "rutas/demo.py"}


@pytest.mark.parametrize("modulo", _modulos(), ids=lambda p: p.relative_to(WEB).as_posix())
def test_ningun_modulo_web_escribe_sql_ni_toca_la_base(modulo):
    texto = modulo.read_text(encoding="utf-8")
    encontrados = {que: patron.findall(texto) for que, patron in PROHIBIDO.items()}
    assert {que: n for que, n in encontrados.items() if n} == {}


@pytest.mark.parametrize(
    "trozo",
    ['CONTAR_SQL = """SELECT 1"""', "conexion.execute(x)", "with servicio.pool.connection() as c:",
     "import psycopg", 'texto = "SELECT count(*) FROM mensajes"'],
)
def test_la_comprobacion_detecta_sql(trozo):
    assert any(patron.search(trozo) for patron in PROHIBIDO.values())
