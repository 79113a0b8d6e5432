"""Tareas periódicas del servidor: caducidad, conciliación, reembolsos y cobros pendientes,
avisos a quien firma (escalado y entrega de la bandeja de salida) y retención, si se
configura.

Seguras en varios servidores a la vez: cada pasada toma un advisory lock global con
``pg_try_advisory_lock`` (si otro servidor la está haciendo, esta se salta) y, dentro,
cada hilo se toca solo con su propio candado de hilo libre.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from agente.nucleo.claves_candado import CANDADO_TAREAS
from agente.servicio.aprobaciones.avisos_firma import escalar_y_entregar
from agente.servicio.fachada import Servicio

__all__ = ["arrancar", "una_pasada"]

logger = logging.getLogger(__name__)

TRY_LOCK_SQL = "SELECT pg_try_advisory_lock(%(clave)s) AS ok"
UNLOCK_SQL = "SELECT pg_advisory_unlock(%(clave)s)"


def una_pasada(
    servicio: Servicio, extra: Callable[[], object] | None = None, *, ajustes: Any | None = None
) -> dict | None:
    """Caduca, concilia y avisa una vez. ``None`` si otro servidor tenía el turno.

    Los avisos van al final y nunca lanzan: un canal caído no para lo demás. Sin
    ``ajustes`` se escala pero no se entrega (no hay canales configurados).
    """
    with servicio.pool.connection() as conexion:
        if not conexion.execute(TRY_LOCK_SQL, {"clave": CANDADO_TAREAS}).fetchone()["ok"]:
            return None
        try:
            informe = {"caducadas": servicio.caducar(), "arreglos": servicio.reconciliar(),
                       "solicitudes_caducadas": servicio.caducar_solicitudes_politica(),
                       "ritmos_barridos": servicio.barrer_ritmos()}
            if servicio.pagos is not None:
                informe["movimientos"] = servicio.completar_movimientos()
            if extra is not None:
                informe["extra"] = extra()
            informe["avisos"] = escalar_y_entregar(servicio.pool, ajustes)
            return informe
        finally:
            conexion.execute(UNLOCK_SQL, {"clave": CANDADO_TAREAS})


def arrancar(
    servicio: Servicio, *, cada: float, retencion_dias: int = 0, al_arrancar: bool = False,
    ajustes: Any | None = None,
) -> tuple[threading.Thread, threading.Event]:
    """Hilo en segundo plano que hace una pasada cada ``cada`` segundos hasta ``parar.set()``.

    Con ``retencion_dias`` > 0, cada pasada borra además los checkpoints de las
    conversaciones sin actividad desde hace más de esos días (``agente.retencion``).
    ``ajustes``: con ellos, cada pasada entrega también los avisos pendientes.
    Con ``al_arrancar`` la primera pasada es inmediata: lo que una parada dejó a medias se
    termina al volver a arrancar, sin esperar al primer intervalo.
    """
    if cada <= 0:
        raise ValueError("cada debe ser mayor que cero")
    parar = threading.Event()
    extra = (lambda: servicio.limpiar_checkpoints(retencion_dias)) if retencion_dias > 0 else None

    def bucle() -> None:
        primera = al_arrancar
        while primera or not parar.wait(cada):
            primera = False
            try:
                informe = una_pasada(servicio, extra, ajustes=ajustes)
                if informe and (informe["caducadas"] or informe["arreglos"] or informe.get("movimientos")):
                    logger.info("tareas periódicas: %s", informe)
            except Exception:  # la tarea sigue viva aunque una pasada falle
                logger.exception("fallo en la pasada de tareas periódicas")

    hilo = threading.Thread(target=bucle, name="tareas-periodicas", daemon=True)
    hilo.start()
    return hilo, parar
