"""Lo que el protocolo de LangGraph (``/langgraph``) pide a la base: los hilos vistos como
*threads* (con su transcripción y su pausa) y las ejecuciones (*runs*) que entran por él."""

from agente.servicio.protocolo.ejecuciones import Ejecuciones
from agente.servicio.protocolo.hilos import FiltroHilos, buscar_hilos, hilo_visible

__all__ = ["Ejecuciones", "FiltroHilos", "buscar_hilos", "hilo_visible"]
