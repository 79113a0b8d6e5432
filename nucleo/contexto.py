"""El contexto del cliente de cada ejecución del agente (``context_schema``).

Las herramientas y la política leen al cliente de aquí, nunca de los argumentos del
modelo. Trampa: al reanudar tras una pausa, LangGraph no conserva el contexto; quien
reanuda debe pasar ``context=`` otra vez (la cola de aprobaciones lo guarda).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from nucleo.errores import ContextoAusente


@dataclass(frozen=True)
class ContextoCliente:
    cliente_id: str
    tienda: str
    nombre: str
    canal: str = "web"

    def como_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def desde_json(cls, datos: dict[str, Any]) -> ContextoCliente:
        return cls(**{k: datos[k] for k in ("cliente_id", "tienda", "nombre", "canal") if k in datos})


def contexto_de(runtime: Any) -> ContextoCliente:
    """El contexto del cliente de ``runtime``, o un error claro si falta."""
    contexto = getattr(runtime, "context", None)
    if contexto is None:
        raise ContextoAusente(
            "falta el contexto del cliente en esta ejecución (al reanudar hay que pasar "
            "context= con el cliente guardado en la cola de aprobaciones)"
        )
    if isinstance(contexto, dict):
        contexto = ContextoCliente.desde_json(contexto)
    if not isinstance(contexto, ContextoCliente):
        raise ContextoAusente(f"contexto del cliente con tipo inesperado: {type(contexto).__name__}")
    return contexto
