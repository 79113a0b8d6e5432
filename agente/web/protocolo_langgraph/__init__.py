"""El subconjunto del protocolo de LangGraph (Agent Server API) que usan los clientes
oficiales, servido bajo ``/langgraph`` y siempre por el servicio, como quien llama."""

from agente.web.protocolo_langgraph.enrutador import PREFIJO, router
from agente.web.protocolo_langgraph.forma_error import FormaErrorProtocolo

__all__ = ["PREFIJO", "FormaErrorProtocolo", "router"]
