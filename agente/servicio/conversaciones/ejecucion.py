"""Ejecutar el agente sobre un hilo: configuración, candado, invocación y lectura del estado.

El ``Ejecutor`` es lo que comparten conversaciones, decisiones y conciliación. Trampas
(``docs/trampas.md``):

- cada ejecución lleva ``context=`` (al reanudar LangGraph no lo conserva) y
  ``durability="sync"`` (el ``tool_call_id`` solo es clave de idempotencia así);
- la metadata se copia en cada fila de checkpoint: solo identificadores;
- «esperando a una persona» se detecta por las interrupciones del estado, nunca por el
  nombre de un nodo.

Un turno en directo recorre ``stream`` en vez de ``invoke`` (``conversaciones.en_directo``);
los callbacks de quien llama (p. ej. las métricas de la web) van en ``config["callbacks"]``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from psycopg_pool import ConnectionPool

from agente.servicio.conversaciones.candados import CandadosHilo
from agente.servicio.conversaciones.en_directo import AlTrozo, recorrer
from agente.servicio.conversaciones.limite import LimiteEjecuciones
from agente.servicio.resultados import Ejecucion
from herramientas import Registro
from nucleo.contexto import ContextoCliente
from politicas.lectura_matriz import VersionesMatriz

__all__ = ["Ejecutor", "config_lectura"]


def config_lectura(thread_id: str) -> dict[str, Any]:
    """La configuración mínima para leer el estado de un hilo (sin ejecutar nada)."""
    return {"configurable": {"thread_id": thread_id}}


class Ejecutor:
    """El agente, su pool, el trazador y el registro, con las reglas de cada ejecución.

    ``candados``: los candados de hilo del proceso (una conexión propia, no el pool).
    ``limite``: cuántas ejecuciones a la vez; lo comparten todas las entradas del servicio.
    """

    def __init__(
        self,
        *,
        pool: ConnectionPool,
        agente: Any,
        trazador: Any,
        registro: Registro,
        espera_candado: float,
        candados: CandadosHilo,
        limite: LimiteEjecuciones,
    ) -> None:
        if espera_candado < 0:
            raise ValueError("espera_candado no puede ser negativa")
        self.pool = pool
        self.agente = agente
        self.trazador = trazador
        self.registro = registro
        self.espera_candado = espera_candado
        self.candados = candados
        self.limite = limite
        self.versiones_matriz = VersionesMatriz()  # inmutables: una lectura por proceso

    def sitio(self):
        """Un sitio entre las ejecuciones a la vez (``Saturado`` si no llega a tiempo).
        Reentrante: quien ya lo tiene (decidir → aplicar) no ocupa otro."""
        return self.limite.ejecucion()

    @contextmanager
    def candado(self, thread_id: str, *, esperar: float | None = None) -> Iterator[bool]:
        """Un sitio y el candado del hilo (``HiloOcupado`` si no llega en ``espera_candado``).
        Ninguno de los dos ocupa una conexión del pool mientras dura la ejecución."""
        with self.sitio(), self.candados.hilo(
            thread_id, esperar=self.espera_candado if esperar is None else esperar
        ) as obtenido:
            yield obtenido

    def comprobar(self, thread_id: str) -> None:
        """*Fencing* antes de escribir: ``CandadoPerdido`` si esta ejecución perdió su hilo."""
        self.candados.comprobar(thread_id)

    def config(
        self,
        thread_id: str,
        ctx: ContextoCliente,
        *,
        trace_id: str | None,
        tipo: str,
        encargado_id: str | None = None,
        callbacks: Sequence[Any] = (),
    ) -> dict[str, Any]:
        """La configuración de una ejecución; ``callbacks``: los de quien llama, tras los de
        las trazas."""
        metadata: dict[str, Any] = {
            "thread_id": thread_id,
            "cliente_id": ctx.cliente_id,
            "tienda": ctx.tienda,
            "trace_id": trace_id,
            "tipo_ejecucion": tipo,
        }
        if encargado_id:
            metadata["aprobado_por"] = encargado_id
        trazas = self.trazador.config_ejecucion(
            trace_id=trace_id,
            thread_id=thread_id,
            cliente_id=ctx.cliente_id,
            tienda=ctx.tienda,
            canal=ctx.canal,
            encargado_id=encargado_id,
            tipo=tipo,
        )
        metadata.update(trazas.get("metadata", {}))
        return {
            "configurable": {"thread_id": thread_id},
            "metadata": metadata,
            "callbacks": [*trazas.get("callbacks", []), *callbacks],
            "run_name": tipo,
        }

    def invocar_grafo(self, entrada: Any, config: dict[str, Any], ctx: ContextoCliente) -> Any:
        """La llamada cruda al grafo (el bench la sustituye para medir variantes)."""
        return self.agente.invoke(entrada, config, context=ctx, durability="sync", version="v2")

    def transmitir_grafo(self, entrada: Any, config: dict[str, Any], ctx: ContextoCliente) -> Any:
        """Como ``invocar_grafo``, con ``stream``: las partes de los modos ``messages`` y ``values``."""
        return self.agente.stream(entrada, config, context=ctx, durability="sync", version="v2",
                                  stream_mode=["messages", "values"])

    def ejecutar(
        self, entrada: Any, config: dict[str, Any], ctx: ContextoCliente, *, al_trozo: AlTrozo | None = None
    ) -> Ejecucion:
        """Ejecuta el grafo. Con ``al_trozo``, en directo: recibe el texto del modelo según
        llega (``conversaciones.en_directo``); el resultado es el mismo."""
        if al_trozo is None:
            return Ejecucion.desde_salida(self.invocar_grafo(entrada, config, ctx))
        return recorrer(self.transmitir_grafo(entrada, config, ctx), al_trozo)

    def estado(self, thread_id: str) -> Any:
        return self.agente.get_state(config_lectura(thread_id))

    def pausa_pendiente(self, thread_id: str) -> tuple[Any, Any | None]:
        """El estado guardado del hilo y su interrupción pendiente (o None)."""
        estado = self.estado(thread_id)
        pendientes = [i for tarea in estado.tasks for i in tarea.interrupts]
        return estado, (pendientes[0] if pendientes else None)
