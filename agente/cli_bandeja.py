"""La CLI de la bandeja: pistas con la sintaxis exacta, el historial y lo que llega al chat.

- ``pista_decidir``: lo que ``agente chat`` imprime al pausar, una orden que funciona tal
  cual (id completo, acción y un encargado de la tienda);
- ``historial``: ``agente aprobaciones --historial`` con los filtros de ``GET /api/decisiones``
  y todas las firmas de cada decisión (quién, con qué rol, cuándo y qué decidió);
- ``EscuchaChat``: durante ``agente chat``, lo que el agente escribe más tarde (la decisión
  de un encargado, un pago completado) aparece sin esperar al siguiente mensaje.

Las horas van en la zona de las tiendas y lo dicen (``nucleo.fechas.fecha_hora``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agente.nucleo import dinero
from agente.nucleo.errores import DecisionNoValida
from agente.nucleo.fechas import fecha_hora
from agente.servicio.decididas import lo_que_decidio

__all__ = ["ACCIONES", "EscuchaChat", "filas_historial", "pista_decidir", "sin_accion"]

ACCIONES = "aprobar | rechazar --motivo TEXTO | editar --importe 90 | responder --texto TEXTO"


def pista_decidir(thread_id: str, encargado: str | None) -> str:
    """La orden para decidir, con la sintaxis exacta (se puede copiar y pegar)."""
    quien = encargado or "ID-DEL-ENCARGADO"
    return (f"[pendiente de un encargado: agente decidir {thread_id} aprobar --encargado {quien}"
            f"  (o en vez de aprobar: {ACCIONES.split(' | ', 1)[1]})]")


def sin_accion(hilo: str, accion: str | None = None) -> DecisionNoValida:
    """El error de ``agente decidir`` sin acción o sin ``--encargado``, con la orden completa."""
    falta = "la acción" if accion is None else "--encargado"
    return DecisionNoValida(
        f"falta {falta}: agente decidir {hilo} {accion or 'ACCION'} --encargado ID, con ACCION = {ACCIONES}"
    )


def _hora(valor: Any) -> str:
    return fecha_hora(valor) if isinstance(valor, datetime) else ""


_VERBOS = {"approve": "aprobó", "edit": "editó", "reject": "rechazó", "respond": "respondió"}


def _firmas(firmas: list[dict[str, Any]], n: int) -> str:
    """Una línea por firmante: «Lucía Moreno (enc-talavera, encargado) aprobó · 01/12/2026 10:30
    (hora de Madrid)», con lo que decidió en la operación ``n``."""
    lineas = []
    for f in firmas:
        decidio = lo_que_decidio(f, n)
        texto = _VERBOS.get(decidio["tipo"], decidio["tipo"] or "firmó")
        if decidio["importe"]:
            texto += f" a {dinero.eur(decidio['importe'])}"
        if decidio["motivo"]:
            texto += f": {decidio['motivo']}"
        lineas.append(f"{f['nombre']} ({f['encargado']}, {f['rol']}) {texto} · {_hora(f['fecha'])}")
    return "\n".join(lineas)


def filas_historial(decisiones: list[dict[str, Any]]) -> list[list[Any]]:
    """Una fila por operación decidida, como el CSV; en «Firmas», cada persona que firmó."""
    filas = []
    for d in decisiones:
        for n, a in enumerate(d["acciones"] or [{}]):
            importe = a.get("importe_final") or a.get("importe_propuesto") or ""
            filas.append([
                _hora(d["decidida"]), d["thread_id"], d["tienda"],
                f"{d['cliente']['nombre']} ({d['cliente']['id']})",
                _firmas(d.get("firmas") or [], n) or d["encargado"]["id"],
                f"{d['tipo']} (fallida: {d['fallo']})" if d.get("fallo") else d["tipo"],
                " ".join(filter(None, [a.get("nombre"), a.get("pedido")])), importe,
                a.get("motivo") or "", d["nota"] or "",
            ])
    return filas


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
                    self._imprimir(f"\nagente ({_hora(m['creado'])})> {m['texto']}")
