"""La firma del encargado: ``HumanInTheLoopMiddleware`` con la política de la tienda.

Cada herramienta lista sus decisiones de forma explícita: ``True`` permitiría también
``respond``, que finge un resultado correcto sin ejecutar la herramienta. Las de
lectura no aparecen: nunca se interrumpen.
"""

from __future__ import annotations

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig

AVISO_EDICION = (
    "Aviso: un encargado modificó esta operación antes de ejecutarla; el resultado "
    "refleja lo que se ejecutó, no tu propuesta."
)
PREFIJO_DESCRIPCION = "Operación pendiente de la firma del encargado"

DECISIONES_PERMITIDAS: dict[str, list[str]] = {
    "reembolsar": ["approve", "edit", "reject"],
    "sustituir": ["approve", "reject"],
    "consultar_encargado": ["respond"],
}


def middleware_aprobacion(*, politica, descripcion) -> HumanInTheLoopMiddleware:
    """``politica.necesita_encargado`` decide; ``descripcion`` redacta la tarjeta del encargado."""
    interrupt_on = {
        nombre: InterruptOnConfig(
            allowed_decisions=list(decisiones),
            when=politica.necesita_encargado,
            description=descripcion,
        )
        for nombre, decisiones in DECISIONES_PERMITIDAS.items()
    }
    return HumanInTheLoopMiddleware(
        interrupt_on=interrupt_on,
        description_prefix=PREFIJO_DESCRIPCION,
        edit_notice=AVISO_EDICION,
    )
