"""Cada ajuste está documentado en la tabla de docs/explotacion.md, con su nombre de variable."""

from __future__ import annotations

from nucleo.ajustes import Ajustes
from tests.apoyo.rutas import RAIZ


def _variable(nombre: str, campo) -> str:
    alias = campo.validation_alias
    if alias is not None:
        return alias.choices[0]
    return f"AGENTE_{nombre.upper()}"


def test_docs_operacion_documenta_cada_ajuste():
    operacion = (RAIZ / "docs" / "explotacion.md").read_text(encoding="utf-8")
    tabla = operacion.split("\n## Ajustes\n", 1)[1].split("\n## ", 1)[0]
    faltan = [
        _variable(nombre, campo)
        for nombre, campo in Ajustes.model_fields.items()
        if f"`{_variable(nombre, campo)}`" not in tabla
    ]
    assert faltan == []


def test_los_ajustes_se_leen_del_entorno(monkeypatch):
    monkeypatch.setenv("AGENTE_MODELO", "openai:gpt-4.1-mini")
    monkeypatch.setenv("DATABASE_URL", "postgresql://x@localhost/y")
    monkeypatch.setenv("AGENTE_PASARELA_RETARDO", "1.5")
    aj = Ajustes()
    assert aj.modelo == "openai:gpt-4.1-mini"
    assert aj.database_url == "postgresql://x@localhost/y"
    assert str(aj.pasarela_retardo) == "1.5"


def test_secreto_de_demo_se_detecta():
    assert Ajustes(secreto="").secreto_es_de_demo()
    assert Ajustes().secreto_es_de_demo()
    assert not Ajustes(secreto="s" * 40).secreto_es_de_demo()
