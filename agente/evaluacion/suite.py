"""La pasada completa: k intentos de cada tarea, cada uno en su base, y el informe.

Las tareas que piden algo que el servicio no tiene (``requiere``) se omiten con su motivo;
``CAPACIDADES`` dice lo que sí tiene (``firmas``: varias firmas por operación, la matriz de
autoridad por niveles).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agente.evaluacion.bases import Bases
from agente.evaluacion.cliente import ClienteGuion, ClienteLLM
from agente.evaluacion.ensayo import Intento, ensayar
from agente.evaluacion.metricas import aclaraciones, pass_k, precision_recall, tasa
from agente.evaluacion.tareas import Tarea
from nucleo.ajustes import Ajustes

__all__ = ["CAPACIDADES", "COMPRENSION", "Informe", "debe_preguntar", "evaluar", "omision"]

# La etiqueta de las tareas de comprensión (``tareas/11_comprension.yaml``): su pass^k va aparte.
COMPRENSION = "comprension"


def debe_preguntar(tarea: Tarea) -> bool | None:
    """True si la petición es ambigua (nada antes de la confirmación del cliente), False si es
    clara y hay algo que hacer (preguntar sobra), None si no es ni lo uno ni lo otro."""
    if tarea.esperado.sin_efectos_antes_del_turno is not None:
        return True
    if tarea.esperado.escalado or any(tarea.esperado.bd.values()):
        return False
    return None

# Lo que el servicio sabe hacer y alguna tarea puede exigir en ``requiere``.
CAPACIDADES: frozenset[str] = frozenset({"firmas"})
MOTIVOS_OMISION = {
    "firmas": "el servicio aún no admite varias firmas por operación (autoridad por niveles)",
}


@dataclass(kw_only=True)
class Informe:
    modelo: str
    k: int
    intentos: dict[str, list[Intento]]
    tareas: dict[str, Tarea]
    omitidas: dict[str, str] = field(default_factory=dict)
    segundos: float = 0.0

    def pass_k(self, comprension: bool | None = None) -> dict[str, float]:
        """pass^1..pass^k; ``comprension`` True/False: solo las tareas de comprensión o el resto."""
        resultados = [(sum(i.exito for i in lista), len(lista)) for tid, lista in self.intentos.items()
                      if comprension is None or (COMPRENSION in self.tareas[tid].etiquetas) == comprension]
        return {str(n): pass_k(resultados, n) for n in range(1, self.k + 1)} if resultados else {}

    def escalado(self) -> dict[str, float]:
        return precision_recall(
            (self.tareas[tid].esperado.escalado, i.escalados)
            for tid, lista in self.intentos.items() for i in lista
        )

    def afirmaciones_falsas(self) -> int:
        """Cuántas afirmaciones falsas dijo el agente en todos los intentos (debe ser 0)."""
        return sum(len(i.afirmaciones_falsas) for lista in self.intentos.values() for i in lista)

    def tasa_afirmaciones_falsas(self) -> float:
        """La fracción de intentos en los que el agente dijo algo que no pasó."""
        return tasa(bool(i.afirmaciones_falsas) for lista in self.intentos.values() for i in lista)

    def aclaraciones(self) -> dict[str, float]:
        """Preguntas aclaratorias: en las ambiguas (debe preguntar) y en las claras (sobra)."""
        return aclaraciones((debe_preguntar(self.tareas[tid]), i.pregunto_primero)
                            for tid, lista in self.intentos.items() for i in lista)

    def como_json(self) -> dict[str, Any]:
        """El contrato del issue 17 (``modelo``, ``k``, ``tareas``, ``pass_k``, ``escalado``) y más."""
        tareas = []
        for tid, lista in self.intentos.items():
            tareas.append({
                "id": tid,
                "intentos": len(lista),
                "exitos": sum(i.exito for i in lista),
                "fallos": [
                    {"intento": n, "motivos": i.fallos, "transcripcion": i.transcripcion,
                     "trace_id": i.trace_id}
                    for n, i in enumerate(lista, start=1) if not i.exito
                ],
                "tokens": sum(i.tokens for i in lista) / max(len(lista), 1),
                "segundos": round(sum(i.segundos for i in lista) / max(len(lista), 1), 3),
            })
        return {
            "modelo": self.modelo,
            "k": self.k,
            "tareas": tareas,
            "pass_k": self.pass_k(),
            "pass_k_comprension": self.pass_k(comprension=True),
            "pass_k_resto": self.pass_k(comprension=False),
            "tareas_comprension": sum(COMPRENSION in self.tareas[t].etiquetas for t in self.intentos),
            "escalado": self.escalado(),
            "afirmaciones_falsas": self.afirmaciones_falsas(),
            "tasa_afirmaciones_falsas": self.tasa_afirmaciones_falsas(),
            "aclaraciones": self.aclaraciones(),
            "omitidas": [{"id": t, "motivo": m} for t, m in self.omitidas.items()],
            "segundos": round(self.segundos, 1),
        }


def omision(tarea: Tarea, capacidades: frozenset[str] = CAPACIDADES) -> str | None:
    """Por qué se omite ``tarea`` (lo que pide y el servicio no tiene), o None."""
    faltan = [r for r in tarea.requiere if r not in capacidades]
    if not faltan:
        return None
    return "; ".join(MOTIVOS_OMISION.get(r, f"el servicio no tiene «{r}»") for r in faltan)


def evaluar(
    tareas: list[Tarea],
    *,
    ajustes: Ajustes,
    url: str,
    k: int = 1,
    plantilla: str | None = None,
    cliente: str = "guion",
    capacidades: frozenset[str] = CAPACIDADES,
    al_intento: Callable[[Intento], None] | None = None,
    crear_servicio: Callable[..., Any] | None = None,
) -> Informe:
    """``k`` intentos de cada tarea con el modelo de ``ajustes``; cada uno en una base nueva.

    ``url``: un servidor donde crear bases (rol con ``CREATEDB``); ``plantilla``: una base ya
    migrada y con la demo (si no, se crea una). ``cliente``: ``guion`` o ``llm`` (el mismo
    modelo hace de cliente). ``crear_servicio``: para las pruebas (por defecto, el de fábrica).
    """
    import time

    from agente.modelos import crear_modelo

    if k < 1:
        raise ValueError("k debe ser al menos 1")
    if crear_servicio is None:
        from agente.servicio.fabrica import crear_servicio
    modelo_cliente = (
        crear_modelo(ajustes.modelo, base_url=ajustes.modelo_base_url) if cliente == "llm" else None
    )
    inicio = time.monotonic()
    informe = Informe(modelo=ajustes.modelo, k=k, intentos={}, tareas={t.id: t for t in tareas})
    with Bases(url=url, plantilla=plantilla) as bases:
        for tarea in tareas:
            motivo = omision(tarea, capacidades)
            if motivo:
                informe.omitidas[tarea.id] = motivo
                continue
            informe.intentos[tarea.id] = []
            for _ in range(k):
                with bases.intento() as url_intento:
                    aj = ajustes.model_copy(update={"pasarela_fallo": tarea.pasarela == "falla"})
                    servicio = crear_servicio(aj, url=url_intento, pausa_reintentos=0.01)
                    try:
                        simulado = (ClienteLLM(tarea=tarea, modelo=modelo_cliente) if modelo_cliente
                                    else ClienteGuion(tarea=tarea))
                        intento = ensayar(tarea, servicio=servicio, url=url_intento, cliente=simulado)
                    finally:
                        servicio.cerrar()
                informe.intentos[tarea.id].append(intento)
                if al_intento:
                    al_intento(intento)
    informe.segundos = time.monotonic() - inicio
    return informe
