"""Avisos a quien firma: bandeja de salida (outbox), canales, plantillas, escalado y trabajador.

Lo que llama el servicio:

- al pausar, dentro de la transacción que encola la aprobación:
  ``avisar_aprobacion(conexion, AvisoAprobacion(...))`` (nunca lanza: un aviso que no se
  puede encolar no rompe la pausa);
- en sus tareas periódicas: ``escalar_pendientes(conexion)`` (avisa al siguiente nivel de
  las pausas que llevan más de ``escalado_minutos`` de horario esperando) y
  ``entregar_pendientes(pool, canales_desde_ajustes(ajustes), base_url=...)``.

Entrega «al menos una vez» con clave de deduplicación (cabecera ``X-Agente-Aviso-Id``),
reintentos con espera exponencial y seguro en varios procesos (``SKIP LOCKED``).
"""

from agente.notificaciones.bandeja_salida import clave_aviso, encolar_aviso
from agente.notificaciones.canales import (
    CABECERA_AVISO,
    CABECERA_FECHA,
    CABECERA_FIRMA,
    Canal,
    CanalApprise,
    CanalCorreo,
    CanalWebhook,
    Entrega,
    ErrorCanal,
    canales_desde_ajustes,
    firmar,
    verificar_firma,
)
from agente.notificaciones.destinatarios import (
    AvisoAprobacion,
    Escalado,
    avisar_aprobacion,
    avisos_de_escalado,
    escalar_pendientes,
)
from agente.notificaciones.horario import (
    Horario,
    en_horario,
    minutos_en_horario,
    siguiente_apertura,
)
from agente.notificaciones.plantillas import Mensaje, pintar
from agente.notificaciones.trabajador import Pasada, entregar_pendientes, espera_tras

__all__ = [
    "CABECERA_AVISO",
    "CABECERA_FECHA",
    "CABECERA_FIRMA",
    "AvisoAprobacion",
    "Canal",
    "CanalApprise",
    "CanalCorreo",
    "CanalWebhook",
    "Entrega",
    "ErrorCanal",
    "Escalado",
    "Horario",
    "Mensaje",
    "Pasada",
    "avisar_aprobacion",
    "avisos_de_escalado",
    "canales_desde_ajustes",
    "clave_aviso",
    "en_horario",
    "encolar_aviso",
    "entregar_pendientes",
    "escalar_pendientes",
    "espera_tras",
    "firmar",
    "minutos_en_horario",
    "pintar",
    "siguiente_apertura",
    "verificar_firma",
]
