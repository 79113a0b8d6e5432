"""Las órdenes de una conversación: ``agente chat`` (hablar como un cliente) y ``agente hilo``
(lo que guarda el checkpointer de un hilo, para un ingeniero).

``EscuchaChat``: durante ``agente chat``, lo que el agente escribe más tarde (la decisión de
un encargado, un pago completado) aparece sin esperar al siguiente mensaje.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import typer

from agente.cli.bandeja import hora, pista_decidir
from agente.cli.comun import errores_en_una_linea, servicio, tabla

__all__ = ["EscuchaChat", "chat", "hilo"]


@errores_en_una_linea
def chat(
    cliente: str = typer.Option(..., "--cliente", help="Id del cliente (p. ej. C-0001)."),
    hilo: str | None = typer.Option(None, "--hilo", help="Continuar una conversación existente."),
) -> None:
    """Conversación por terminal como ese cliente (Ctrl-D para salir).

    Orden local de pruebas: el agente corre en este proceso, con su entorno; no actúa como
    ninguna persona de la tienda (para decidir lo que pausa: «agente entrar» y «agente decidir»)."""
    from nucleo.errores import AprobacionPendiente, HiloOcupado

    with servicio() as abierto:
        ctx = abierto.contexto_de_cliente(cliente, canal="terminal")
        thread_id = abierto.resolver_hilo(hilo) if hilo else abierto.iniciar_conversacion(ctx)
        abierto.consulta(thread_id, ctx)  # 403 si el hilo es de otro cliente
        typer.echo(f"Conversación {thread_id} como {ctx.nombre} ({ctx.tienda}). Ctrl-D para salir.")
        # Lo que llegue más tarde (la decisión de un encargado) se imprime en cuanto llega.
        with EscuchaChat(abierto, thread_id, ctx, typer.echo) as escucha:
            while True:
                try:
                    texto = input("tú> ")
                except EOFError:
                    typer.echo("")
                    break
                if not texto.strip():
                    continue
                try:
                    with escucha.turno():
                        respuesta = abierto.conversar(thread_id, texto, ctx)
                except (AprobacionPendiente, HiloOcupado) as exc:
                    typer.echo(f"agente> {exc.mensaje}")
                    continue
                typer.echo(f"agente> {respuesta.mensaje_cliente}")
                if respuesta.estado == "esperando_aprobacion":
                    typer.echo(pista_decidir(thread_id, abierto.encargado_sugerido(ctx.tienda)))


@errores_en_una_linea
def hilo(thread_id: str = typer.Argument(..., help="thread_id de la conversación (o un prefijo único).")) -> None:
    """Estado de un hilo: mensajes, siguiente paso, pausa pendiente e historia de checkpoints.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    import json

    with servicio() as abierto:
        thread_id = abierto.resolver_hilo(thread_id)
        estado = abierto.estado_hilo(thread_id)
        consulta = estado.consulta
        typer.echo(f"Hilo {thread_id} · cliente {consulta['cliente_id']} · tienda {consulta['tienda']} · "
                   f"estado {consulta['estado']}")
        typer.echo(f"Siguiente paso: {', '.join(estado.siguiente) or '(ninguno: terminado)'}")
        for interrupcion in estado.interrupciones:
            typer.echo(f"Pausa pendiente {interrupcion['id']}:")
            typer.echo(json.dumps(interrupcion["valor"], ensure_ascii=False, indent=2, default=str))
        filas = []
        for m in estado.mensajes:
            llamadas = ", ".join(f"{t['name']}({json.dumps(t['args'], ensure_ascii=False, default=str)})"
                                 for t in getattr(m, "tool_calls", []) or [])
            filas.append([m.type, (str(m.content) or llamadas)[:200], getattr(m, "tool_call_id", "") or ""])
        tabla("Mensajes", ["Tipo", "Contenido", "tool_call_id"], filas)
        tabla("Historia de checkpoints (reciente primero)", ["checkpoint_id", "Paso", "Siguiente", "Mensajes"],
              [[h.checkpoint_id, h.paso, ", ".join(h.siguiente), h.mensajes] for h in estado.historia])


class EscuchaChat:
    """Imprime los mensajes del agente que llegan al hilo fuera de un turno (``LISTEN``).

    ``visto(id)`` marca hasta dónde se ha enseñado ya (los del turno en curso los imprime el
    propio chat). Trampa: el aviso llega en otro hilo; la impresión va bajo un candado.
    """

    def __init__(self, servicio, thread_id: str, ctx, imprimir: Callable[[str], None]) -> None:
        self._servicio, self._hilo, self._ctx, self._imprimir = servicio, thread_id, ctx, imprimir
        self._candado = threading.Lock()
        self._ultimo = max((m["id"] for m in servicio.historial(thread_id, ctx)["mensajes"]), default=0)
        self._ocupado = False
        self._escucha = servicio.escucha(self._avisado)

    def __enter__(self) -> EscuchaChat:
        self._escucha.iniciar()
        return self

    def __exit__(self, *_exc) -> None:
        self._escucha.parar()

    def turno(self):
        """Durante un turno propio no se imprime nada (la respuesta la imprime el chat)."""
        escucha = self

        class _Turno:
            def __enter__(self):
                with escucha._candado:
                    escucha._ocupado = True

            def __exit__(self, *_exc):
                with escucha._candado:
                    escucha._ocupado = False
                    escucha._ultimo = max(
                        (m["id"] for m in escucha._servicio.historial(escucha._hilo, escucha._ctx)["mensajes"]),
                        default=escucha._ultimo)

        return _Turno()

    def _avisado(self, thread_id: str | None) -> None:
        if thread_id not in (None, self._hilo):
            return
        with self._candado:
            if self._ocupado:
                return
            try:
                nuevos = self._servicio.historial(self._hilo, self._ctx, desde=self._ultimo)["mensajes"]
            except Exception:  # noqa: BLE001 - la escucha no tumba el chat; se reintenta al siguiente aviso
                return
            for m in nuevos:
                self._ultimo = max(self._ultimo, m["id"])
                if m["rol"] == "agente":
                    self._imprimir(f"\nagente ({hora(m['creado'])})> {m['texto']}")

