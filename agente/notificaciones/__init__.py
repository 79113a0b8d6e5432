"""Avisos a quien firma: cola de avisos (outbox), canales, plantillas, escalado y trabajador.

Lo que llama el servicio:

- al pausar, dentro de la transacción que encola la aprobación:
  ``avisar_aprobacion(conexion, AvisoAprobacion(...))`` (nunca lanza: un aviso que no se
  puede encolar no rompe la pausa);
- en sus tareas periódicas: ``escalar_pendientes(conexion)`` (avisa al siguiente nivel de
  las pausas que llevan más de ``escalado_minutos`` de horario esperando) y
  ``entregar_segun_ajustes(pool, ajustes)`` (``entregar_pendientes`` con los canales,
  la URL base y los reintentos de los ajustes).

Entrega «al menos una vez» con clave de deduplicación (cabecera ``X-Agente-Aviso-Id``),
reintentos con espera exponencial y seguro en varios procesos (``SKIP LOCKED``).
"""

from agente.notificaciones.canales import Canal, ErrorCanal, canales_desde_ajustes, verificar_firma
from agente.notificaciones.cola_avisos import clave_aviso, encolar_aviso
from agente.notificaciones.destinatarios import (
    AvisoAprobacion,
    Escalado,
    avisar_aprobacion,
    avisos_de_escalado,
    escalar_pendientes,
)
from agente.notificaciones.trabajador import Pasada, entregar_pendientes, entregar_segun_ajustes

__all__ = [
    "AvisoAprobacion",
    "Canal",
    "ErrorCanal",
    "Escalado",
    "Pasada",
    "avisar_aprobacion",
    "avisos_de_escalado",
    "canales_desde_ajustes",
    "clave_aviso",
    "encolar_aviso",
    "entregar_pendientes",
    "entregar_segun_ajustes",
    "escalar_pendientes",
    "verificar_firma",
]
