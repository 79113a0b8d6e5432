"""La parte 3 de la suite de evaluación con el modelo offline (``tests/apoyo/evaluacion.py``:
una de cada tres tareas; las tres partes juntas son la suite entera)."""

from __future__ import annotations

from tests.apoyo.evaluacion import comprobar_parte_offline


def test_el_modelo_offline_pasa_la_parte_3_de_su_suite(url_admin, plantillas):
    comprobar_parte_offline(url_admin, plantillas, 3)
