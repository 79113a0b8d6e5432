"""Las tareas de comprensión están separadas de las frases del modelo offline, y las métricas
nuevas del informe (pass^k por categoría, aclaraciones, afirmaciones falsas) cuentan bien."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agente.evaluacion import cargar_tareas
from agente.evaluacion.metricas import aclaraciones, tasa
from agente.evaluacion.suite import COMPRENSION, Informe, debe_preguntar
from agente.modelo_offline.texto import normalizar
from tests.apoyo.rutas import RAIZ

N = 5  # palabras seguidas que una tarea de comprensión no puede compartir con las otras tareas
_ID = re.compile(r"\b(?:P-\d{8}-\d{4}|[A-Z]{3}-\d{3})\b", re.IGNORECASE)


def _ngramas(texto: str) -> set[tuple[str, ...]]:
    palabras = re.findall(r"[a-z#]+", normalizar(_ID.sub(" # ", texto)))
    return {tuple(palabras[i:i + N]) for i in range(len(palabras) - N + 1)}


def _literales_del_modelo() -> list[str]:
    """Las cadenas de ``agente/modelo_offline`` y de los patrones offline de cada operación."""
    ficheros = [*(RAIZ / "agente" / "modelo_offline").glob("*.py"), *(RAIZ / "nucleo" / "operaciones").glob("*.py")]
    cadenas = []
    for fichero in ficheros:
        for nodo in ast.walk(ast.parse(fichero.read_text(encoding="utf-8"))):
            if isinstance(nodo, ast.Constant) and isinstance(nodo.value, str):
                cadenas.append(nodo.value)
    return cadenas


def _solapes(nuevas, fuentes: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    vistos = set().union(*(_ngramas(f) for f in fuentes))
    return [(t.id, g) for t in nuevas for turno in t.turnos for g in _ngramas(turno) if g in vistos]


def test_hay_al_menos_150_tareas_y_50_de_comprension_de_cada_clase_y_operacion():
    tareas = cargar_tareas()
    nuevas = [t for t in tareas if COMPRENSION in t.etiquetas]
    assert len(tareas) >= 150 and len(nuevas) >= 50
    etiquetas = {e for t in nuevas for e in t.etiquetas}
    assert {"parafrasis", "negacion", "correccion", "alternativa", "multi", "ambigua"} <= etiquetas
    assert {"reembolso", "cambio", "cancelacion", "reenvio", "vale", "direccion"} <= etiquetas
    assert all(debe_preguntar(t) for t in nuevas if "ambigua" in t.etiquetas)


def _frases_del_modelo() -> list[str]:
    """Las frases de texto llano (no expresiones) de tres o más palabras del modelo offline."""
    return [normalizar(c).strip(" .,;:¿?¡!«»") for c in _literales_del_modelo()
            if not re.search(r"[\\(|\[{]", c) and len(c.split()) >= 3]


def test_ninguna_tarea_de_comprension_contiene_una_frase_del_modelo_offline():
    frases = [f for f in _frases_del_modelo() if f]
    nuevas = [t for t in cargar_tareas() if COMPRENSION in t.etiquetas]
    assert [(t.id, f) for t in nuevas for turno in t.turnos for f in frases if f in normalizar(turno)] == []


def test_ninguna_tarea_de_comprension_repite_cinco_palabras_seguidas_de_las_otras_tareas():
    tareas = cargar_tareas()
    viejas = [turno for t in tareas if COMPRENSION not in t.etiquetas for turno in t.turnos]
    assert _solapes([t for t in tareas if COMPRENSION in t.etiquetas], viejas) == []


def test_la_comprobacion_de_solapes_detecta_una_tarea_copiada_de_la_plantilla():
    [vieja] = cargar_tareas("reembolso-sin-firma")
    assert _solapes([vieja], ["Quiero devolver la sartén del pedido P-20260920-0102"]) != []
    assert _solapes([vieja], list(vieja.turnos)) != []


# ------------------------------------------------------------------ métricas


def test_tasa_y_aclaraciones_cuentan_solo_lo_que_toca():
    assert tasa([]) == 0.0
    assert tasa([True, False, False, False]) == 0.25
    pares = [(True, True), (True, False), (False, True), (False, False), (False, False), (None, True)]
    assert aclaraciones(pares) == {"ambiguas": 0.5, "innecesarias": 1 / 3}
    assert aclaraciones([(True, True)]) == {"ambiguas": 1.0, "innecesarias": 0.0}


class _Intento:  # lo que el informe lee de un intento
    def __init__(self, exito: bool, pregunto: bool = False, falsas: int = 0) -> None:
        self.exito, self.pregunto_primero = exito, pregunto
        self.afirmaciones_falsas = [{}] * falsas
        self.escalados: list[str] = []
        self.fallos, self.transcripcion, self.trace_id, self.tokens, self.segundos = [], [], None, 0, 0.0


def test_el_informe_separa_comprension_del_resto_y_cuenta_aclaraciones_y_afirmaciones():
    tareas = {t.id: t for t in cargar_tareas("comp-reembolso-ambigua-una-cosa,comp-cancelacion-faltas,saludo")}
    informe = Informe(modelo="x", k=2, tareas=tareas, intentos={
        "comp-reembolso-ambigua-una-cosa": [_Intento(True, pregunto=True), _Intento(False)],
        "comp-cancelacion-faltas": [_Intento(True), _Intento(True, pregunto=True, falsas=2)],
        "saludo": [_Intento(False), _Intento(False)],
    })
    assert informe.pass_k(comprension=True) == {"1": 0.75, "2": 0.5}
    assert informe.pass_k(comprension=False) == {"1": 0.0, "2": 0.0}
    assert informe.aclaraciones() == {"ambiguas": 0.5, "innecesarias": 0.5}
    assert informe.tasa_afirmaciones_falsas() == 1 / 6
    datos = informe.como_json()
    assert datos["tareas_comprension"] == 2 and datos["afirmaciones_falsas"] == 2
    assert Path(RAIZ / "agente" / "evaluacion" / "tareas" / "11_comprension.yaml").exists()
