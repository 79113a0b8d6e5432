"""Auditoría de las firmas: cada efecto tuvo las firmas que exigía la autoridad guardada.

Para cada efecto (la vista ``efectos``: reembolso, sustitución...) cuyo veredicto pidió firma con la matriz de
autoridad (``evaluaciones_politica.autoridad_matriz_id``):

- ``requisito_alterado``: el requisito guardado (firmas, rol mínimo) no es el que da la
  versión de la matriz que dice haber usado para el importe guardado (alguien lo rebajó);
- ``firmas_insuficientes``: las firmas recogidas (``firmas_aprobacion``) de esa pausa que
  aprobaron o editaron esa llamada no cumplen la matriz para el importe del efecto (una
  firma borrada, o de un rol sin límite bastante).

Se relee siempre la versión exacta de la matriz (nunca la vigente). Los veredictos de
antes de la matriz (sin versión) solo los cubre la comprobación ``sin_firma``.
"""

from __future__ import annotations

from typing import Any

import psycopg

from nucleo import dinero
from politicas.lectura_matriz import leer_matriz_por_id
from politicas.matriz_autoridad import autoridad_necesaria, firmas_completas

__all__ = ["firmas_que_no_cumplen"]

# ``efectos``: la vista de todas las operaciones con efecto declaradas (sql/015).
SELECT_EFECTOS_CON_AUTORIDAD_SQL = """
SELECT e.tipo, e.numero, e.thread_id, e.tool_call_id, e.tienda, e.importe, e.creado,
       ev.autoridad_importe, ev.autoridad_firmas, ev.autoridad_rol, ev.autoridad_matriz_id,
       ev.autoridad_regla,
       coalesce((
           SELECT jsonb_agg(f.rol ORDER BY f.id)
           FROM decisiones_encargado d
           CROSS JOIN LATERAL jsonb_array_elements_text(d.peticion -> 'tool_call_ids')
               WITH ORDINALITY AS t(tool_call_id, n)
           JOIN firmas_aprobacion f ON f.thread_id = d.thread_id AND f.interrupt_id = d.interrupt_id
           WHERE d.thread_id = e.thread_id AND t.tool_call_id = e.tool_call_id
             AND f.decisiones -> (t.n::int - 1) ->> 'type' IN ('approve', 'edit', 'respond')
       ), '[]'::jsonb) AS roles
FROM efectos e
JOIN evaluaciones_politica ev ON ev.thread_id = e.thread_id AND ev.tool_call_id = e.tool_call_id
WHERE ev.requiere_encargado AND ev.autoridad_matriz_id IS NOT NULL
ORDER BY e.creado
"""


def firmas_que_no_cumplen(conexion: psycopg.Connection) -> list[dict[str, Any]]:
    """Los efectos cuyo requisito guardado o cuyas firmas no cuadran con la matriz."""
    matrices: dict[int, Any] = {}
    encontrados = []
    for fila in conexion.execute(SELECT_EFECTOS_CON_AUTORIDAD_SQL).fetchall():
        matriz_id = fila["autoridad_matriz_id"]
        if matriz_id not in matrices:
            matrices[matriz_id] = leer_matriz_por_id(conexion, matriz_id)
        matriz = matrices[matriz_id]
        base = {k: fila[k] for k in ("tipo", "numero", "thread_id", "tool_call_id", "tienda", "importe", "creado")}
        base["firmantes"] = ", ".join(fila["roles"]) or "(ninguna)"
        regla = fila["autoridad_regla"]
        esperado = autoridad_necesaria(matriz, regla, fila["autoridad_importe"])
        if (esperado.firmas, esperado.rol_minimo) != (fila["autoridad_firmas"], fila["autoridad_rol"]):
            encontrados.append({**base, "hallazgo": "requisito_alterado", "detalle": (
                f"guardado {fila['autoridad_firmas']} firma(s) de {fila['autoridad_rol']}; la matriz "
                f"v{matriz.version} exige {esperado.firmas} de {esperado.rol_minimo}")})
        importe = dinero.importe_o_none(fila["importe"]) if fila["importe"] is not None else None
        if importe is not None and importe <= 0:
            importe = None
        requerido = autoridad_necesaria(matriz, regla, importe if importe is not None else fila["autoridad_importe"])
        if not firmas_completas(matriz, regla, requerido.importe, list(fila["roles"])):
            encontrados.append({**base, "hallazgo": "firmas_insuficientes", "detalle": (
                f"{requerido.texto(matriz.roles)}; firmaron: {base['firmantes']}")})
    return encontrados
