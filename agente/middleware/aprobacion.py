"""La firma del encargado: ``HumanInTheLoopMiddleware`` con la política de la tienda.

Las decisiones de cada herramienta vienen del registro (``herramientas.registro``),
siempre explícitas: ``True`` permitiría también ``respond``, que finge un resultado
correcto sin ejecutar la herramienta. Las que no tienen decisiones no aparecen: nunca
se interrumpen.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig

AVISO_EDICION = (
    "Aviso: un encargado modificó esta operación antes de ejecutarla; el resultado "
    "refleja lo que se ejecutó, no tu propuesta."
)
PREFIJO_DESCRIPCION = "Operación pendiente de la firma del encargado"



def middleware_aprobacion(
    *, decisiones: Mapping[str, list[str]], politica, descripcion
) -> HumanInTheLoopMiddleware:
    """``politica.necesita_encargado`` decide; ``descripcion`` redacta la tarjeta del encargado.

    ``decisiones``: ``nombre -> decisiones permitidas`` (``Registro.decisiones_permitidas``).
    """
    if not decisiones or any(not d for d in decisiones.values()):
        raise ValueError("cada herramienta con firma necesita al menos una decisión permitida")
    interrupt_on = {
        nombre: InterruptOnConfig(
            allowed_decisions=list(permitidas),
            when=politica.necesita_encargado,
            description=descripcion,
        )
        for nombre, permitidas in decisiones.items()
    }
    return HumanInTheLoopMiddleware(
        interrupt_on=interrupt_on,
        description_prefix=PREFIJO_DESCRIPCION,
        edit_notice=AVISO_EDICION,
    )
