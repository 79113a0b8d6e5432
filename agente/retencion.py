"""Retención: borra los checkpoints de las conversaciones que ya no los necesitan.

Cada turno deja en ``checkpoints``/``checkpoint_blobs``/``checkpoint_writes`` una
decena de filas, y el blob de ``messages`` guarda la conversación entera en cada
versión: una conversación que nadie va a retomar solo ocupa sitio. El borrado lo hace
el propio checkpointer (``PostgresSaver.prune(..., strategy="delete")``), no SQL
escrito a mano contra sus tablas.

Qué conversación se limpia (``dias`` = N):

- su última actividad (``consultas_asistente.actualizada``: cada turno y cada pausa la
  ponen al día) es de hace más de N días, esté ``cerrada`` o se quedara abierta;
- NO espera a un encargado: ni estado ``esperando_aprobacion``, ni fila en
  ``aprobaciones_pendientes``, ni una decisión registrada sin aplicar
  (``decisiones_encargado.aplicada IS NULL``), ni una interrupción en su último
  checkpoint (por si la cola se perdió y el conciliador aún no la ha reencolado);
- nadie la está ejecutando: se toma el candado de cada hilo
  (``agente.servicio.conversaciones.candados``, sin esperar) y se vuelve a comprobar todo lo anterior
  con el candado tomado; un hilo ocupado se deja para la próxima vez.

Nunca toca las tablas de negocio ni de auditoría: la transcripción que ve el cliente
(``mensajes_conversacion``), la consulta, la cola, las decisiones, los veredictos, los
reembolsos y sustituciones siguen ahí. Si el cliente vuelve a escribir en una
conversación limpiada, el agente empieza sin memoria de ella (el cliente sigue viendo
su transcripción). Los hilos con checkpoints pero sin fila en ``consultas_asistente``
(creados fuera del servicio) no se tocan.

Varios servidores pueden ejecutarla a la vez: un advisory lock de sesión
(``CANDADO_RETENCION``) deja pasar a uno; los demás vuelven con ``omitida=True``.
El borrado no encoge los ficheros de la tabla: PostgreSQL reutiliza el espacio tras el
``VACUUM`` (autovacuum); devolverlo al sistema exige ``VACUUM FULL`` o ``pg_repack``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg_pool import ConnectionPool

from nucleo.claves_candado import CANDADO_RETENCION, ESPACIO_HILOS

logger = logging.getLogger(__name__)

LOTE = 200  # hilos por vuelta: candados y borrado duran milisegundos, no segundos

TRY_CANDADO_RETENCION_SQL = "SELECT pg_try_advisory_lock(%(clave)s) AS ok"
UNLOCK_CANDADO_RETENCION_SQL = "SELECT pg_advisory_unlock(%(clave)s)"

# Una página de candidatos (``desde`` avanza por thread_id: un hilo ocupado no se
# vuelve a pedir en la misma ejecución) o, con ``ids``, la comprobación de esos hilos
# ya con su candado tomado. El índice de clave primaria de checkpoints y
# checkpoint_writes sirve las subconsultas (prefijo thread_id, checkpoint_ns).
SELECT_LIMPIABLES_SQL = """
SELECT c.thread_id
FROM consultas_asistente c
WHERE c.actualizada < now() - make_interval(days => %(dias)s)
  AND c.estado <> 'esperando_aprobacion'
  AND c.thread_id > %(desde)s
  AND (%(ids)s::text[] IS NULL OR c.thread_id = ANY(%(ids)s::text[]))
  AND NOT EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = c.thread_id)
  AND NOT EXISTS (SELECT 1 FROM decisiones_encargado d
                  WHERE d.thread_id = c.thread_id AND d.aplicada IS NULL)
  AND EXISTS (SELECT 1 FROM checkpoints k WHERE k.thread_id = c.thread_id)
  AND NOT EXISTS (
      SELECT 1 FROM checkpoint_writes w
      WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = '' AND w.channel = '__interrupt__'
        AND w.checkpoint_id = (SELECT max(k.checkpoint_id) FROM checkpoints k
                               WHERE k.thread_id = c.thread_id AND k.checkpoint_ns = ''))
ORDER BY c.thread_id
LIMIT %(lote)s
"""
# Candado de cada hilo, sin esperar: devuelve los que se han podido tomar.
TRY_LOCK_HILOS_SQL = """
SELECT t.thread_id FROM unnest(%(ids)s::text[]) AS t (thread_id)
WHERE pg_try_advisory_lock(%(espacio)s, hashtext(t.thread_id))
"""
UNLOCK_HILOS_SQL = """
SELECT pg_advisory_unlock(%(espacio)s, hashtext(t.thread_id))
FROM unnest(%(ids)s::text[]) AS t (thread_id)
"""


@dataclass
class InformeLimpieza:
    dias: int
    omitida: bool = False  # otro servidor tenía el trabajo en marcha: no se hizo nada
    hilos: list[str] = field(default_factory=list)  # hilos cuyos checkpoints se borraron
    ocupados: list[str] = field(default_factory=list)  # en uso: quedan para la próxima vez

    @property
    def limpiados(self) -> int:
        return len(self.hilos)


def limpiar(
    pool: ConnectionPool,
    *,
    dias: int,
    lote: int = LOTE,
    saver: PostgresSaver | None = None,
) -> InformeLimpieza:
    """Borra los checkpoints de las conversaciones sin actividad desde hace más de ``dias``.

    Necesita dos conexiones del pool: una retiene los candados, el checkpointer usa otra.
    """
    if dias < 1:
        raise ValueError("dias debe ser al menos 1: con 0 se borraría la memoria de conversaciones vivas")
    if lote < 1:
        raise ValueError("lote debe ser al menos 1")
    saver = saver or PostgresSaver(pool)
    informe = InformeLimpieza(dias=dias)
    with pool.connection() as c:
        if not c.execute(TRY_CANDADO_RETENCION_SQL, {"clave": CANDADO_RETENCION}).fetchone()["ok"]:
            informe.omitida = True
            return informe
        try:
            desde = ""
            while True:
                candidatos = [
                    f["thread_id"]
                    for f in c.execute(
                        SELECT_LIMPIABLES_SQL,
                        {"dias": dias, "desde": desde, "ids": None, "lote": lote},
                    )
                ]
                if not candidatos:
                    break
                desde = candidatos[-1]
                tomados = [
                    f["thread_id"]
                    for f in c.execute(TRY_LOCK_HILOS_SQL, {"ids": candidatos, "espacio": ESPACIO_HILOS})
                ]
                try:
                    # Con el candado tomado nadie ejecuta el hilo: se decide otra vez.
                    confirmados = [
                        f["thread_id"]
                        for f in c.execute(
                            SELECT_LIMPIABLES_SQL,
                            {"dias": dias, "desde": "", "ids": tomados, "lote": len(tomados) or 1},
                        )
                    ] if tomados else []
                    if confirmados:
                        saver.prune(confirmados, strategy="delete")
                finally:
                    if tomados:
                        c.execute(UNLOCK_HILOS_SQL, {"ids": tomados, "espacio": ESPACIO_HILOS})
                informe.hilos.extend(confirmados)
                informe.ocupados.extend(sorted(set(candidatos) - set(tomados)))
        finally:
            c.execute(UNLOCK_CANDADO_RETENCION_SQL, {"clave": CANDADO_RETENCION})
    logger.info(
        "retención (%s días): %s hilos limpiados, %s ocupados",
        dias, informe.limpiados, len(informe.ocupados),
    )
    return informe
