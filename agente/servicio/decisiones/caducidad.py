"""Caducidad: una aprobación que nadie revisa a tiempo se rechaza (o se responde) sola.

El plazo (``aprobaciones_pendientes.caduca``) se fija al encolar con
``politicas_tienda.horas_caducidad`` de la tienda o, sin fila, el de la política por
defecto (``politicas.DEFECTOS["horas_caducidad"]``); un encargado ya no puede decidir
pasado el plazo (``PlazoVencido``) y esta pasada la caduca. La caducidad decide como
``sistema`` por el mismo camino que un encargado (registro previo, validación, candado),
así que es segura en varios servidores a la vez: si otro la decidió antes, se salta.
"""

from __future__ import annotations

from typing import Any

from agente.servicio import textos
from agente.servicio.aprobaciones import cola
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.decisiones.decidir import Decisiones
from nucleo.errores import HiloOcupado, Saturado, YaDecidida

__all__ = ["Caducidad", "decisiones_de_caducidad"]


# ``caduca`` se fijó al encolar con las horas de la tienda (o el defecto de la política).
SELECT_CADUCADAS_SQL = """
SELECT a.thread_id FROM aprobaciones_pendientes a
WHERE a.estado = 'pendiente' AND a.caduca <= now()
ORDER BY a.caduca
"""


def decisiones_de_caducidad(peticion: dict[str, Any]) -> list[dict[str, Any]]:
    """Un rechazo por operación; ``respond`` donde la pausa no admite rechazo (una consulta)."""
    return [
        {"type": "reject", "message": textos.MOTIVO_CADUCIDAD}
        if "reject" in config.get("allowed_decisions", [])
        else {"type": "respond", "message": textos.RESPUESTA_CADUCIDAD}
        for config in peticion.get("review_configs", [])
    ]


class Caducidad:
    def __init__(
        self,
        *,
        ejecutor: Ejecutor,
        decisiones: Decisiones,
    ) -> None:
        self._ejecutor = ejecutor
        self._decisiones = decisiones

    def caducar(self) -> list[str]:
        """Decide las aprobaciones vencidas; devuelve los hilos caducados en esta pasada.

        Un hilo ocupado cuenta como caducado: la decisión ya está registrada y la aplica
        quien suelte el hilo o el conciliador.
        """
        pool = self._ejecutor.pool
        with pool.connection() as c:
            hilos = [f["thread_id"] for f in c.execute(SELECT_CADUCADAS_SQL)]
        caducadas = []
        for thread_id in hilos:
            with pool.connection() as c:
                fila = cola.aprobacion(c, thread_id)
            if fila is None or fila["estado"] != "pendiente":
                continue
            try:
                self._decisiones.decidir_como_sistema(thread_id, decisiones_de_caducidad(fila["peticion"]))
            except YaDecidida:
                continue
            except HiloOcupado:
                pass
            except Saturado:
                break  # el proceso va lleno: lo demás, en la pasada siguiente
            caducadas.append(thread_id)
        return caducadas
