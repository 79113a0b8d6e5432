"""Trazas en Langfuse de cada ejecución del agente: el contrato y las trampas del SDK están en
``trazador``; ``ids`` son los ids y nombres de una traza y su validación; ``manejador`` es el
CallbackHandler del producto y ``mascara`` lo que no sale."""

from agente.trazas.ids import (
    DECISIONES,
    EVENTO_VEREDICTO,
    PUNTUACION_AFIRMACIONES,
    PUNTUACION_DECISION,
    PUNTUACION_ESPERA,
    TIPOS_EJECUCION,
    id_puntuacion,
)
from agente.trazas.mascara import enmascarar, enmascarar_texto
from agente.trazas.trazador import Trazador

__all__ = [
    "DECISIONES",
    "EVENTO_VEREDICTO",
    "PUNTUACION_AFIRMACIONES",
    "PUNTUACION_DECISION",
    "PUNTUACION_ESPERA",
    "TIPOS_EJECUCION",
    "Trazador",
    "enmascarar",
    "enmascarar_texto",
    "id_puntuacion",
]
