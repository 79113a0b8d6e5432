"""El encargado simulado: convierte la ``Accion`` de la tarea en la decisión del servicio."""

from __future__ import annotations

from typing import Any

from agente.evaluacion.tareas import Accion

__all__ = ["decisiones"]


def decisiones(accion: Accion, pendiente: dict[str, Any], registro: Any) -> list[dict[str, Any]]:
    """La lista de decisiones (una por operación de la pausa) que mandaría la bandeja.

    Editar cambia solo los campos que el registro deja editar (como ``agente decidir``).
    """
    acciones = pendiente["peticion"].get("action_requests", [])
    if accion.accion == "aprobar":
        return [{"type": "approve"} for _ in acciones]
    if accion.accion == "rechazar":
        return [{"type": "reject", "message": accion.motivo} for _ in acciones]
    if accion.accion == "responder":
        return [{"type": "respond", "message": accion.texto} for _ in acciones]
    if accion.accion == "editar":
        salida = []
        for a in acciones:
            herramienta = registro.get(a.get("name"))
            editable = herramienta is not None and "importe" in herramienta.campos_editables
            args = {**a["args"], **({"importe": accion.importe} if editable else {})}
            salida.append({"type": "edit", "edited_action": {"name": a["name"], "args": args}})
        return salida
    raise ValueError(f"la acción {accion.accion!r} no es una decisión")
