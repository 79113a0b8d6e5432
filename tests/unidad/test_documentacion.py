"""El README se lee de una vez: lo que es, cómo empezar, las historias y dónde leer más.

La referencia (API, CLI, operación, política, libro...) vive en ``docs/``; las pruebas que
la contrastan con el código leen esos ficheros (``test_ajustes``, ``test_contrato_api``).
"""

from __future__ import annotations

from tests.apoyo.rutas import RAIZ

MAX_README = 15_000  # caracteres, como los cuenta `wc -m`


def test_el_readme_cabe_en_quince_mil_caracteres():
    readme = (RAIZ / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= MAX_README, f"README.md tiene {len(readme)} caracteres: lo de referencia va a docs/"


def test_el_readme_conserva_las_dos_ordenes_de_empezar():
    readme = (RAIZ / "README.md").read_text(encoding="utf-8")
    bloque = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [linea.split("#", 1)[0].strip() for linea in bloque.splitlines()] == ["make demo", "make test"]


def test_make_demo_en_otro_puerto_y_make_test_en_tres_procesos():
    import subprocess

    def orden(*args: str) -> str:
        # -n: solo imprime lo que haría; el sello de .venv se da por hecho (-o).
        return subprocess.run(["make", "-n", "-o", ".venv/.instalado", "-o", "lint", *args], cwd=RAIZ,
                              capture_output=True, text=True, check=True).stdout

    assert "agente demo --port 8123" in orden("demo", "PUERTO=8123")
    assert "agente demo --port 8000" in orden("demo")
    assert "pytest -n 3 --dist loadfile" in orden("test")
