"""La pasarela de pagos con una línea de log por movimiento (evento ``movimiento_pasarela``).

Envuelve cualquier ``Pasarela`` (la simulada o la de un proveedor real) sin cambiarla:
cada ``emitir_reembolso`` y cada ``cobrar`` deja ``tipo``, ``referencia``, ``importe``, ``movimiento_id``, ``nuevo``
(False si era una repetición idempotente), ``estado`` (``en_curso`` en un proveedor que
termina después) y ``duracion_ms``; un fallo deja
``movimiento_pasarela_fallido`` con el tipo de error (el texto del proveedor no: puede
llevar datos del cliente) y se relanza tal cual.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from decimal import Decimal

from nucleo.registro_log import evento

__all__ = ["PasarelaRegistrada"]

logger = logging.getLogger("agente.pasarela")


class PasarelaRegistrada:
    def __init__(self, *, interna) -> None:
        for operacion in ("emitir_reembolso", "cobrar"):
            if not callable(getattr(interna, operacion, None)):
                raise TypeError(f"la pasarela debe tener {operacion}(referencia, importe)")
        self.interna = interna

    def emitir_reembolso(self, referencia: str, importe: Decimal):
        return self._registrar("reembolso", self.interna.emitir_reembolso, referencia, importe)

    def cobrar(self, referencia: str, importe: Decimal):
        return self._registrar("cobro", self.interna.cobrar, referencia, importe)

    @staticmethod
    def _registrar(tipo: str, operacion: Callable, referencia: str, importe: Decimal):
        inicio = time.perf_counter()
        try:
            movimiento = operacion(referencia, importe)
        except Exception as exc:
            evento(logger, "movimiento_pasarela_fallido", nivel=logging.WARNING, tipo=tipo,
                   referencia=referencia, importe=str(importe), error=type(exc).__name__,
                   duracion_ms=round((time.perf_counter() - inicio) * 1000, 1))
            raise
        evento(logger, "movimiento_pasarela", tipo=tipo, referencia=referencia,
               importe=str(movimiento.importe), movimiento_id=movimiento.id, nuevo=movimiento.nuevo,
               estado=getattr(movimiento, "estado", "completado"),
               duracion_ms=round((time.perf_counter() - inicio) * 1000, 1))
        return movimiento

    def __getattr__(self, nombre: str):  # lo demás, tal cual (p. ej. ``retardo`` de la simulada)
        return getattr(self.interna, nombre)
