"""Tareas periódicas del servidor, cada una con su ritmo, su hilo y su candado.

Caducidad, conciliación, solicitudes de política, ritmos, movimientos pendientes de la
pasarela, avisos a quien firma y, si se configura, la retención de checkpoints. Cada tarea
corre en su propio hilo con su propio intervalo y toma su propio advisory lock
(``pg_try_advisory_lock(espacio, hashtext(nombre))``): un SMTP lento retrasa los avisos,
nunca la caducidad ni la conciliación; y en varios servidores a la vez cada tarea la hace
uno solo (los demás se la saltan en esa vuelta). Dentro, cada hilo de conversación se toca
solo con su propio candado de hilo libre.

Trampa: el candado de una tarea no puede retener una conexión del pool mientras la tarea
trabaja (sus consultas necesitan el pool: con seis tareas y un pool pequeño, se lo comen y
las peticiones dan 503). Va en la conexión propia de los candados de hilo del proceso
(``CandadosHilo.exclusivo``), que ya cuenta en ``AGENTE_POOL_MAX``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agente.servicio.aprobaciones.avisos_firma import escalar_y_entregar
from agente.servicio.fachada import Servicio
from nucleo.claves_candado import ESPACIO_TAREAS

__all__ = ["Tarea", "arrancar", "tareas", "una_pasada"]

logger = logging.getLogger(__name__)

# La retención borra checkpoints viejos: no hace falta cada pocos segundos.
RETENCION_CADA_MINIMO = 600.0


@dataclass(frozen=True, kw_only=True)
class Tarea:
    """Una tarea periódica: ``hacer`` cada ``cada`` segundos, bajo el candado de ``nombre``."""

    nombre: str
    hacer: Callable[[], object]
    cada: float

    def __post_init__(self) -> None:
        if not self.nombre.isidentifier():
            raise ValueError(f"tarea periódica: nombre no válido {self.nombre!r}")
        if self.cada <= 0:
            raise ValueError("cada debe ser mayor que cero")


def tareas(
    servicio: Servicio, *, cada: float = 30.0, retencion_dias: int = 0, ajustes: Any | None = None,
) -> list[Tarea]:
    """Las tareas de este servidor. Sin ``ajustes`` se escala pero no se entrega (no hay canales)."""
    lista = [
        Tarea(nombre="caducadas", hacer=servicio.caducar, cada=cada),
        Tarea(nombre="arreglos", hacer=servicio.reconciliar, cada=cada),
        Tarea(nombre="solicitudes_caducadas", hacer=servicio.caducar_solicitudes_politica, cada=cada),
        Tarea(nombre="ritmos_barridos", hacer=servicio.barrer_ritmos, cada=cada),
        Tarea(nombre="avisos", hacer=lambda: escalar_y_entregar(servicio.pool, ajustes), cada=cada),
    ]
    if servicio.pagos is not None:
        lista.append(Tarea(nombre="movimientos", hacer=servicio.completar_movimientos, cada=cada))
    if retencion_dias > 0:
        lista.append(Tarea(nombre="retencion", hacer=lambda: servicio.limpiar_checkpoints(retencion_dias),
                           cada=max(cada, RETENCION_CADA_MINIMO)))
    return lista


def _bajo_candado(servicio: Servicio, tarea: Tarea) -> tuple[bool, object]:
    """``(False, None)`` si otro servidor la está haciendo; si no, ``(True, resultado)``."""
    with servicio.candados.exclusivo(ESPACIO_TAREAS, tarea.nombre) as obtenido:
        if not obtenido:
            return False, None
        return True, tarea.hacer()


def una_pasada(
    servicio: Servicio, extra: Callable[[], object] | None = None, *, ajustes: Any | None = None,
    solo: Iterable[str] | None = None,
) -> dict | None:
    """Hace cada tarea una vez, en orden; devuelve ``{nombre: resultado}`` de las que hizo.

    Una tarea que otro servidor tiene en curso no aparece en el informe; ``None`` si no se
    hizo ninguna. ``extra``: una tarea más (``extra`` en el informe). Los avisos nunca
    lanzan: un canal caído no para lo demás.
    """
    lista = tareas(servicio, ajustes=ajustes)
    if extra is not None:
        lista.append(Tarea(nombre="extra", hacer=extra, cada=1.0))
    if solo is not None:
        lista = [t for t in lista if t.nombre in set(solo)]
    informe = {}
    for tarea in lista:
        hecha, resultado = _bajo_candado(servicio, tarea)
        if hecha:
            informe[tarea.nombre] = resultado
    return informe or None


def _registrar(tarea: Tarea, resultado: object) -> None:
    if tarea.nombre in {"caducadas", "arreglos", "movimientos"} and resultado:
        logger.info("tarea periódica %s: %s", tarea.nombre, resultado)


def arrancar(
    servicio: Servicio, *, cada: float, retencion_dias: int = 0, al_arrancar: bool = False,
    ajustes: Any | None = None, lista: list[Tarea] | None = None,
) -> tuple[list[threading.Thread], threading.Event]:
    """Un hilo por tarea, cada uno a su ritmo, hasta ``parar.set()``.

    Con ``retencion_dias`` > 0 se borran además los checkpoints de las conversaciones sin
    actividad desde hace más de esos días (``agente.retencion``). ``ajustes``: con ellos se
    entregan también los avisos pendientes. Con ``al_arrancar`` la primera vuelta de cada
    tarea es inmediata: lo que una parada dejó a medias se termina al volver a arrancar.
    ``lista``: otras tareas en vez de las del servidor (pruebas).
    """
    if cada <= 0:
        raise ValueError("cada debe ser mayor que cero")
    parar = threading.Event()
    lista = lista if lista is not None else tareas(servicio, cada=cada, retencion_dias=retencion_dias,
                                                   ajustes=ajustes)

    def bucle(tarea: Tarea) -> None:
        primera = al_arrancar
        while primera or not parar.wait(tarea.cada):
            primera = False
            try:
                hecha, resultado = _bajo_candado(servicio, tarea)
                if hecha:
                    _registrar(tarea, resultado)
            except Exception:  # la tarea sigue viva aunque una vuelta falle
                logger.exception("fallo en la tarea periódica %s", tarea.nombre)

    hilos = [threading.Thread(target=bucle, args=(t,), name=f"tarea-{t.nombre}", daemon=True) for t in lista]
    for hilo in hilos:
        hilo.start()
    return hilos, parar
