"""Caducidad: una aprobación que nadie revisa a tiempo se rechaza (o se responde) sola.

El plazo es ``politicas_tienda.horas_caducidad`` de la tienda; sin fila, el de la
política por defecto (``politicas.DEFECTOS["horas_caducidad"]``). La caducidad decide como
``sistema`` por el mismo camino que un encargado (registro previo, validación, candado),
así que es segura en varios servidores a la vez: si otro la decidió antes, se salta.
"""

from __future__ import annotations

from typing import Any

from agente.nucleo.errores import HiloOcupado, YaDecidida
from agente.servicio import cola, textos
from agente.servicio.decisiones import Decisiones
from agente.servicio.ejecucion import Ejecutor
from politicas import DEFECTOS

__all__ = ["HORAS_CADUCIDAD_POR_DEFECTO", "Caducidad", "decisiones_de_caducidad"]

# El plazo de una tienda sin fila en politicas_tienda: el defecto de la política (una sola
# fuente, politicas/defectos.py; un test lo compara con el DEFAULT de SQL).
HORAS_CADUCIDAD_POR_DEFECTO: int = DEFECTOS["horas_caducidad"]

SELECT_CADUCADAS_SQL = """
SELECT a.thread_id FROM aprobaciones_pendientes a
LEFT JOIN politicas_tienda p ON p.tienda = a.tienda
WHERE a.estado = 'pendiente'
  AND a.creada < now() - make_interval(hours => coalesce(p.horas_caducidad, %(horas_caducidad)s))
ORDER BY a.creada
"""


def decisiones_de_caducidad(peticion: dict[str, Any]) -> list[dict[str, Any]]:
    """Un rechazo por operación; ``respond`` donde la pausa no admite rechazo (una consulta)."""
    return [
        {"type": "reject", "message": textos.MOTIVO_CADUCIDAD}
        if "reject" in config.get("allowed_decisions", [])
        else {"type": "respond", "message": textos.RESPUESTA_CADUCIDAD}
        for config in peticion.get("review_configs", [])
    ]


def _horas_validas(horas: int) -> int:
    if isinstance(horas, bool) or not isinstance(horas, int) or horas < 1:
        raise ValueError(f"las horas de caducidad deben ser un entero >= 1, no {horas!r}")
    return horas


class Caducidad:
    def __init__(
        self,
        *,
        ejecutor: Ejecutor,
        decisiones: Decisiones,
        horas_por_defecto: int = HORAS_CADUCIDAD_POR_DEFECTO,
    ) -> None:
        self._ejecutor = ejecutor
        self._decisiones = decisiones
        self._horas = _horas_validas(horas_por_defecto)

    def caducar(self) -> list[str]:
        """Decide las aprobaciones vencidas; devuelve los hilos caducados en esta pasada.

        Un hilo ocupado cuenta como caducado: la decisión ya está registrada y la aplica
        quien suelte el hilo o el conciliador.
        """
        pool = self._ejecutor.pool
        with pool.connection() as c:
            hilos = [f["thread_id"] for f in c.execute(SELECT_CADUCADAS_SQL, {"horas_caducidad": self._horas})]
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
            caducadas.append(thread_id)
        return caducadas
