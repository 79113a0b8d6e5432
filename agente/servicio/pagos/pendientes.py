"""Los movimientos que el sistema termina solo: reembolsos y cobros pendientes.

Un reembolso o un cobro que la pasarela no confirmó en el turno del cliente queda
``pendiente`` en el libro (``herramientas.movimientos``); nadie más lo completaría. Aquí
se completa en cada pasada de las tareas periódicas y en ``agente reconciliar``, con la
espera exponencial del libro, y el cliente recibe en su chat un mensaje por cada
movimiento completado (el mismo ``NOTIFY`` que usan las decisiones). Tras varios fallos
el movimiento queda marcado para una persona: lo enseñan la auditoría y la bandeja.

Trampa: el aviso se escribe antes de marcarlo como avisado; si el proceso muere entre
las dos cosas, el cliente lee el aviso dos veces (mejor dos que ninguno).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from agente.servicio.conversaciones import mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from herramientas.avisos import avisos_pendientes, marcar_avisado
from herramientas.movimientos import completar_pendientes
from herramientas.pasarela import Pasarela

__all__ = ["InformePagos", "Pagos"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class InformePagos:
    """Lo que hizo una pasada: referencias completadas, que siguen fallando y avisadas."""

    completados: tuple[str, ...] = ()
    fallidos: tuple[str, ...] = ()
    marcados: tuple[str, ...] = ()
    avisados: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.completados or self.fallidos or self.avisados)


class Pagos:
    def __init__(self, *, ejecutor: Ejecutor, pasarela: Pasarela) -> None:
        if pasarela is None:
            raise ValueError("Pagos necesita la pasarela con la que se construyó el agente")
        self._ejecutor = ejecutor
        self._pasarela = pasarela

    def completar(self, *, solo_vencidos: bool = True) -> InformePagos:
        """Una pasada de la bandeja de salida y los avisos a los clientes.

        ``solo_vencidos=False`` (la orden de un operador) no espera al próximo intento.
        """
        pool = self._ejecutor.pool
        resultado = completar_pendientes(pool, self._pasarela, solo_vencidos=solo_vencidos)
        avisados = []
        for aviso in avisos_pendientes(pool):
            with pool.connection() as c, c.transaction():
                mensajes.anotar_mensaje(c, aviso.thread_id, "agente", aviso.texto)
                mensajes.avisar(c, aviso.thread_id)
            marcar_avisado(pool, aviso)
            avisados.append(aviso.referencia)
        informe = InformePagos(
            completados=tuple(c.movimiento.referencia for c in resultado.completados),
            fallidos=tuple(f.movimiento.referencia for f in resultado.fallidos),
            marcados=tuple(f.movimiento.referencia for f in resultado.marcados),
            avisados=tuple(avisados),
        )
        if informe.marcados:
            logger.error("movimientos marcados para una persona: %s", ", ".join(informe.marcados))
        return informe
