"""Evaluación del agente: pass^k en español con un cliente y un encargado simulados.

Capa de arriba (como la web y la CLI): conduce el servicio de verdad. Por módulos:
``tareas`` (los datos YAML), ``bases`` (una base por intento), ``cliente`` y
``encargado`` (los simulados), ``ensayo`` (un intento), ``comprobaciones`` e
``instantanea`` (qué cuenta como éxito), ``metricas`` (pass^k, escalado), ``suite`` (la
pasada), ``informe`` (Markdown) y ``langfuse_conjunto`` (dataset y dataset run).
Cómo se usa: ``docs/evaluacion.md``.
"""

from agente.evaluacion.metricas import pass_k, precision_recall
from agente.evaluacion.suite import CAPACIDADES, Informe, evaluar
from agente.evaluacion.tareas import Tarea, cargar_tareas

__all__ = ["CAPACIDADES", "Informe", "Tarea", "cargar_tareas", "evaluar", "pass_k", "precision_recall"]
