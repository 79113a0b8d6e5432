"""Los movimientos que el sistema termina solo: reembolsos y cobros pendientes.

Un reembolso o un cobro que la pasarela no confirmó en el turno del cliente queda
``pendiente`` en el libro (``caja.movimientos``); nadie más lo completaría. Aquí
se completa en cada pasada de las tareas periódicas y en ``agente reconciliar``, con la
espera exponencial del libro, y el cliente recibe en su chat un mensaje por cada
movimiento completado (el mismo ``NOTIFY`` que usan las decisiones). Tras varios fallos
el movimiento queda marcado para una persona: lo enseñan la auditoría y la bandeja, y el
cliente lee en su chat que lo revisa una persona. Si el cliente no está en el chat, cada
uno de esos mensajes le llega también por correo (``agente.notificaciones.avisos_cliente``).

Trampa: el aviso se escribe antes de marcarlo como avisado; si el proceso muere entre
las dos cosas, el cliente lee el aviso dos veces (mejor dos que ninguno).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from agente.notificaciones.avisos_cliente import AvisoCliente, avisar_cliente
from agente.servicio import textos
from agente.servicio.conversaciones import mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.pagos.eventos import ResultadoEvento, recibir_evento
from caja.movimientos import Movimiento, completar_pendientes
from caja.pasarela import Pasarela, PasarelaConEventos
from herramientas.avisos import avisos_pendientes, marcar_avisado
from nucleo import dinero

__all__ = ["InformePagos", "Pagos"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class InformePagos:
    """Lo que hizo una pasada: referencias completadas, que siguen fallando y avisadas."""

    completados: tuple[str, ...] = ()
    fallidos: tuple[str, ...] = ()
    marcados: tuple[str, ...] = ()
    avisados: tuple[str, ...] = field(default=())
    en_curso: tuple[str, ...] = ()
    caducados: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.completados or self.fallidos or self.avisados or self.caducados)


class Pagos:
    def __init__(self, *, ejecutor: Ejecutor, pasarela: Pasarela) -> None:
        if pasarela is None:
            raise ValueError("Pagos necesita la pasarela con la que se construyó el agente")
        self._ejecutor = ejecutor
        self._pasarela = pasarela

    def completar(self, *, solo_vencidos: bool = True) -> InformePagos:
        """Una pasada de la cola de movimientos y los avisos a los clientes.

        ``solo_vencidos=False`` (la orden de un operador) no espera al próximo intento.
        """
        pool = self._ejecutor.pool
        resultado = completar_pendientes(pool, self._pasarela, solo_vencidos=solo_vencidos)
        avisados = self.enviar_avisos()
        for fallo in resultado.marcados:
            self._avisar_marcado(fallo.movimiento)
        informe = InformePagos(
            completados=tuple(c.movimiento.referencia for c in resultado.completados),
            fallidos=tuple(f.movimiento.referencia for f in resultado.fallidos),
            marcados=tuple(f.movimiento.referencia for f in resultado.marcados),
            avisados=tuple(avisados),
            en_curso=tuple(resultado.en_curso),
            caducados=tuple(resultado.caducados),
        )
        if informe.marcados:
            logger.error("movimientos marcados para una persona: %s", ", ".join(informe.marcados))
        return informe

    def enviar_avisos(self) -> list[str]:
        """Escribe en el chat de cada cliente lo que el sistema completó (o no pudo) por él."""
        pool = self._ejecutor.pool
        avisados = []
        for aviso in avisos_pendientes(pool):
            with pool.connection() as c, c.transaction():
                mensajes.anotar_mensaje(c, aviso.thread_id, "agente", aviso.texto)
                mensajes.avisar(c, aviso.thread_id)
                # Y a su correo si no está en el chat (una vez por movimiento; no urgente).
                # ``marcado`` aquí es un rechazo del proveedor: la misma clave que el aviso de
                # «tardando» de ``_avisar_marcado`` (un correo por movimiento marcado).
                avisar_cliente(c, aviso.thread_id, AvisoCliente(
                    suceso=aviso.suceso, clave=f"{aviso.suceso}:{aviso.tipo}:{aviso.id}",
                    datos={"tipo": aviso.tipo, "importe": aviso.importe, "pedido": aviso.pedido,
                           "concepto": aviso.concepto, "rechazado": aviso.suceso == "marcado"},
                ))
            marcar_avisado(pool, aviso)
            avisados.append(aviso.referencia)
        return avisados

    def recibir_evento(self, cuerpo: bytes, firma: str | None) -> ResultadoEvento:
        """Un webhook del proveedor: se aplica una vez y el cliente se entera en su chat."""
        resultado = recibir_evento(self._ejecutor.pool, self._pasarela, cuerpo, firma)
        if resultado.resultado not in ("repetido", "ajeno", "desconocido"):
            self.enviar_avisos()
        return resultado

    def registros_pasarela(self):
        """Los movimientos del proveedor real, o None con la simulada (su tabla está en la base)."""
        if isinstance(self._pasarela, PasarelaConEventos):
            return self._pasarela.registros()
        return None

    def _avisar_marcado(self, mov: Movimiento) -> None:
        """El cliente sabe que su reembolso o cobro se ha atascado y que lo mira una persona:
        un mensaje en su chat y, si no está en él, un aviso (una vez por movimiento)."""
        texto = textos.movimiento_marcado(mov.tipo, dinero.eur(mov.importe), mov.pedido_id)
        try:
            with self._ejecutor.pool.connection() as c, c.transaction():
                mensajes.anotar_mensaje(c, mov.thread_id, "agente", texto)
                mensajes.avisar(c, mov.thread_id)
                avisar_cliente(c, mov.thread_id, AvisoCliente(
                    suceso="marcado", clave=f"marcado:{mov.tipo}:{mov.id}",
                    datos={"tipo": mov.tipo, "importe": dinero.texto(mov.importe), "pedido": mov.pedido_id},
                ))
        except Exception:  # el asiento ya está marcado: la auditoría y la bandeja lo enseñan igual
            logger.exception("no se pudo avisar al cliente del movimiento %s marcado", mov.referencia)
