"""Trazas en Langfuse de cada ejecución del agente: el contrato y las trampas del SDK están en
``trazador``; ``manejador`` es el CallbackHandler del producto y ``mascara`` lo que no sale."""

from agente.trazas.trazador import (
    DECISIONES,
    EVENTO_VEREDICTO,
    PUNTUACION_DECISION,
    PUNTUACION_ESPERA,
    TIPOS_EJECUCION,
    Trazador,
    enmascarar,
    enmascarar_texto,
    id_puntuacion,
)

__all__ = [
    "DECISIONES",
    "EVENTO_VEREDICTO",
    "PUNTUACION_DECISION",
    "PUNTUACION_ESPERA",
    "TIPOS_EJECUCION",
    "Trazador",
    "enmascarar",
    "enmascarar_texto",
    "id_puntuacion",
]
