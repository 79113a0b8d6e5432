"""La suite de evaluación entera con el modelo offline, partida en ``PARTES`` trozos (la tarea
``i`` va a la parte ``i % PARTES``): cada parte es un fichero de prueba
(``tests/integracion/test_evaluacion_suite_1.py``...), así que ``--dist loadfile`` las reparte
entre los procesos. Entre todas pasan cada tarea una vez, como la prueba única de antes; que no
se pierda ninguna lo comprueba ``test_evaluacion.py``."""

from __future__ import annotations

from agente.evaluacion import cargar_tareas, evaluar
from agente.evaluacion.suite import omision
from agente.evaluacion.tareas import Tarea
from nucleo.ajustes import Ajustes

__all__ = ["PARTES", "comprobar_parte_offline", "parte"]

PARTES = 3


def parte(n: int, tareas: list[Tarea] | None = None) -> list[Tarea]:
    """Las tareas de la parte ``n`` (de 1 a ``PARTES``)."""
    assert 1 <= n <= PARTES, n
    return (cargar_tareas() if tareas is None else tareas)[n - 1::PARTES]


def comprobar_parte_offline(url_admin: str, plantillas: dict, n: int) -> None:
    """La parte ``n`` con el modelo offline: ningún fallo, pass^1 = 1, precisión y recall del
    escalado 1 (sin falsos positivos ni negativos en la parte: sumadas, tampoco en la suite),
    ninguna afirmación falsa, y las omitidas son justo las que la suite omite."""
    tareas = parte(n)
    informe = evaluar(tareas, url=url_admin, plantilla=plantillas["demo"], ajustes=Ajustes(modelo="offline"), k=1)
    datos = informe.como_json()
    fallidas = {t["id"]: t["fallos"][0]["motivos"] for t in datos["tareas"] if t["fallos"]}
    assert fallidas == {}
    activas = [t for t in tareas if not omision(t)]
    assert [t["id"] for t in datos["tareas"]] == [t.id for t in activas]
    assert len(activas) >= 10
    assert datos["pass_k"] == {"1": 1.0}
    assert datos["escalado"] == {"precision": 1.0, "recall": 1.0}
    assert datos["afirmaciones_falsas"] == 0  # nada de lo que dijo el agente dejó de pasar
    assert {o["id"] for o in datos["omitidas"]} == {t.id for t in tareas if omision(t)}
