"""Un candado por hilo: una sola ejecución del agente por hilo a la vez, en todos los procesos.

Cada proceso abre UNA conexión propia, fuera del pool, que retiene los advisory locks de
sesión (``pg_try_advisory_lock(ESPACIO_HILOS, hashtext(thread_id))``) de todas sus
ejecuciones en curso: una ejecución no ocupa ninguna conexión del pool mientras el modelo
piensa, y cualquier proceso o servidor que comparta la base ve el candado.

Trampas que resuelve:

- Los advisory locks de sesión son reentrantes dentro de una sesión: dos hilos del mismo
  proceso sobre la misma conversación se excluyen antes en Python (registro de tenencias).
- La conexión es una sola: sus sentencias se serializan con un mutex; nunca se bloquea en
  ``pg_advisory_lock`` (pararía a todo el proceso): si otro proceso tiene el hilo, se
  reintenta ``pg_try_advisory_lock`` con pausas crecientes hasta el límite de espera.
- Si el proceso muere, PostgreSQL cierra su sesión y suelta sus candados en el acto: otro
  proceso puede seguir con el hilo.
- Si se pierde la conexión (la base se reinicia, un ``pg_terminate_backend``), PostgreSQL
  ya ha soltado todos los candados: otro proceso podría tomar los hilos. Toda tenencia
  anterior queda anulada (*fencing*): :meth:`CandadosHilo.comprobar` lanza
  :class:`CandadoPerdido` antes de cada efecto (herramienta con efectos, checkpoint,
  cierre del turno) y la ejecución se detiene. Un vigilante detecta la pérdida (latido y
  lectura del socket), vuelve a conectar y vuelve a pedir los candados de los hilos cuyas
  ejecuciones anuladas aún no han terminado, para que nadie entre mientras acaban.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from nucleo.claves_candado import ESPACIO_HILOS
from nucleo.errores import CandadoPerdido, HiloOcupado
from nucleo.esperas import espera_tras

__all__ = ["CandadosHilo", "Tenencia"]

logger = logging.getLogger(__name__)

TRY_LOCK_HILO_SQL = "SELECT pg_try_advisory_lock(%(espacio)s, hashtext(%(hilo)s))"
UNLOCK_HILO_SQL = "SELECT pg_advisory_unlock(%(espacio)s, hashtext(%(hilo)s))"
LATIDO_SQL = "SELECT 1"
NOMBRE_APLICACION = "agente-candados"


@dataclass(eq=False)
class Tenencia:
    """El candado de un hilo en este proceso.

    ``epoca``: la época en la que se obtuvo (-1 mientras se espera); vale mientras
    coincida con la del proceso. ``retenido_en``: época de la conexión que retiene hoy el
    advisory lock en PostgreSQL (``None``: ninguna; tras una pérdida se recupera).
    """

    thread_id: str
    epoca: int = -1
    retenido_en: int | None = None


class CandadosHilo:
    """Los candados de hilo de un proceso sobre su conexión propia. Seguro entre hilos.

    ``conninfo``: la base (la del pool). ``sondeo``: primera pausa al esperar a otro
    proceso (se dobla hasta ``sondeo_max``). ``latido``: cada cuánto mira el vigilante si
    la conexión sigue viva. La conexión se abre en el primer uso.
    """

    def __init__(
        self,
        *,
        conninfo: str,
        espacio: int = ESPACIO_HILOS,
        sondeo: float = 0.02,
        sondeo_max: float = 0.25,
        latido: float = 0.5,
    ) -> None:
        if not conninfo:
            raise ValueError("CandadosHilo necesita la conninfo de la base")
        if sondeo <= 0 or sondeo_max < sondeo or latido <= 0:
            raise ValueError("sondeo > 0, sondeo_max >= sondeo y latido > 0")
        self._conninfo = conninfo
        self._espacio = espacio
        self._sondeo, self._sondeo_max, self._latido = sondeo, sondeo_max, latido
        self._mutex = threading.Lock()  # la conexión: una sentencia a la vez
        self._registro = threading.Condition()  # las tenencias del proceso
        self._tenencias: dict[str, Tenencia] = {}
        self._exclusivos: dict[tuple[int, str], threading.Lock] = {}  # los de ``exclusivo``
        self._conexion: psycopg.Connection | None = None
        self._epoca = 0  # sube al conectar y al perder la conexión
        self._epoca_conexion = 0
        self._parar = threading.Event()
        self._vigilante: threading.Thread | None = None

    # -- uso -----------------------------------------------------------------------------

    @contextmanager
    def hilo(self, thread_id: str, *, esperar: float) -> Iterator[bool]:
        """Retiene el candado del hilo. Con ``esperar=0`` cede ``False`` si otro lo tiene;
        si no, tras ``esperar`` segundos lanza :class:`HiloOcupado` (409 con ``Retry-After``)."""
        tenencia = self.tomar(thread_id, esperar=esperar)
        if tenencia is None:
            if esperar > 0:
                raise HiloOcupado(thread_id=thread_id, reintentar_en=max(1, min(30, round(esperar))))
            yield False
            return
        try:
            yield True
        finally:
            self.soltar(tenencia)

    def tomar(self, thread_id: str, *, esperar: float) -> Tenencia | None:
        """La tenencia del hilo, o ``None`` si no se obtuvo en ``esperar`` segundos."""
        limite = time.monotonic() + max(esperar, 0.0)
        with self._registro:
            while thread_id in self._tenencias:  # otro hilo de este proceso lo ejecuta
                restante = limite - time.monotonic()
                if restante <= 0:
                    return None
                self._registro.wait(restante)
            tenencia = Tenencia(thread_id)
            self._tenencias[thread_id] = tenencia
        try:
            sondeos = 0
            reintentado = False
            while True:
                with self._mutex:
                    try:
                        obtenido = self._ejecutar(TRY_LOCK_HILO_SQL, thread_id)
                    except CandadoPerdido:
                        if reintentado:
                            raise
                        reintentado = True  # la conexión murió en reposo: otra y otra vez
                        continue
                    if obtenido:
                        tenencia.epoca = tenencia.retenido_en = self._epoca
                        return tenencia
                restante = limite - time.monotonic()
                if restante <= 0:
                    break
                sondeos += 1
                time.sleep(min(espera_tras(sondeos, base=self._sondeo, maximo=self._sondeo_max), restante))
        except BaseException:
            self._quitar(tenencia)
            raise
        self._quitar(tenencia)
        return None

    def soltar(self, tenencia: Tenencia) -> None:
        try:
            with self._mutex:
                if (tenencia.retenido_en is not None and tenencia.retenido_en == self._epoca_conexion
                        and self._conexion is not None):
                    try:
                        self._ejecutar(UNLOCK_HILO_SQL, tenencia.thread_id)
                    except CandadoPerdido:
                        pass  # conexión perdida: PostgreSQL ya lo soltó
        finally:
            self._quitar(tenencia)

    def comprobar(self, thread_id: str) -> None:
        """*Fencing*: lanza :class:`CandadoPerdido` si este proceso tuvo el candado del hilo
        y lo perdió. Sin tenencia no comprueba nada (uso del agente fuera del servicio).
        Solo memoria: se puede llamar antes de cada efecto."""
        tenencia = self._tenencias.get(thread_id)
        if tenencia is not None and tenencia.epoca >= 0 and tenencia.epoca != self._epoca:
            raise CandadoPerdido(
                "se perdió el candado de la conversación a mitad de la operación; inténtalo de nuevo",
                thread_id=thread_id, reintentar_en=1,
            )

    @contextmanager
    def exclusivo(self, espacio: int, clave: str) -> Iterator[bool]:
        """Un candado de sesión de otro espacio (``espacio``, ``hashtext(clave)``) en esta misma
        conexión, sin esperar: cede ``False`` si lo tiene otro proceso u otra hebra de este.

        Para las tareas periódicas (``agente.servicio.periodicas``): mientras trabajan no
        retienen ninguna conexión del pool, que sus propias consultas necesitan. Sin
        *fencing*: si la conexión se pierde, PostgreSQL suelta el candado y otro servidor
        puede hacer la misma tarea a la vez (cada tarea toma después el candado de cada hilo).
        """
        with self._registro:
            local = self._exclusivos.setdefault((espacio, clave), threading.Lock())
        if not local.acquire(blocking=False):  # reentrante en la sesión: se excluye aquí
            yield False
            return
        try:
            with self._mutex:
                obtenido = self._ejecutar(TRY_LOCK_HILO_SQL, clave, espacio)
                epoca = self._epoca_conexion
            if not obtenido:
                yield False
                return
            try:
                yield True
            finally:
                with self._mutex:
                    if self._conexion is not None and epoca == self._epoca_conexion:
                        try:
                            self._ejecutar(UNLOCK_HILO_SQL, clave, espacio)
                        except CandadoPerdido:
                            pass  # conexión perdida: PostgreSQL ya lo soltó
        finally:
            local.release()

    def en_curso(self) -> int:
        return len(self._tenencias)

    def cerrar(self) -> None:
        self._parar.set()
        if self._vigilante is not None:
            self._vigilante.join(timeout=5)
        with self._mutex:
            if self._conexion is not None:
                self._conexion.close()
                self._conexion = None

    # -- la conexión (siempre con el mutex tomado) -----------------------------------------

    def _ejecutar(self, consulta: str, thread_id: str, espacio: int | None = None) -> bool:
        if self._conexion is None:
            self._conectar()
        try:
            fila = self._conexion.execute(
                consulta, {"espacio": self._espacio if espacio is None else espacio, "hilo": thread_id}).fetchone()
        except psycopg.OperationalError as exc:
            self._perdida(exc)
            raise CandadoPerdido("la base de datos no responde; inténtalo en unos segundos",
                                 thread_id=thread_id, reintentar_en=2) from exc
        return bool(fila[0])

    def _conectar(self) -> None:
        try:
            conexion = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5,
                                       application_name=NOMBRE_APLICACION)
        except psycopg.OperationalError as exc:
            raise CandadoPerdido("la base de datos no responde; inténtalo en unos segundos",
                                 reintentar_en=2) from exc
        self._conexion = conexion
        self._epoca += 1
        self._epoca_conexion = self._epoca
        # Las ejecuciones anuladas por una pérdida siguen registradas hasta que terminan:
        # que nadie entre en sus hilos mientras tanto (su época vieja las mantiene anuladas).
        with self._registro:
            huerfanas = [t for t in self._tenencias.values() if t.epoca >= 0 and t.retenido_en is None]
        for tenencia in huerfanas:
            if self._ejecutar(TRY_LOCK_HILO_SQL, tenencia.thread_id):
                tenencia.retenido_en = self._epoca_conexion
        if self._vigilante is None:
            self._vigilante = threading.Thread(target=self._vigilar, name="candados-hilo", daemon=True)
            self._vigilante.start()

    def _perdida(self, motivo: BaseException | str) -> None:
        logger.warning("conexión de los candados de hilo perdida (%s): ejecuciones en curso anuladas", motivo)
        try:
            if self._conexion is not None:
                self._conexion.close()
        except Exception:  # ya estaba rota
            pass
        self._conexion = None
        self._epoca += 1
        with self._registro:
            for tenencia in self._tenencias.values():
                tenencia.retenido_en = None

    def _vigilar(self) -> None:
        """Latido: un mensaje sin pedir en el socket (el servidor cierra la sesión) o un
        ``SELECT 1`` fallido es una pérdida; tras ella, reconecta si quedan tenencias."""
        ultimo_ping = time.monotonic()
        while not self._parar.wait(self._latido):
            with self._mutex:
                try:
                    if self._conexion is None:
                        if self._tenencias:
                            self._conectar()
                        continue
                    legible, _, _ = select.select([self._conexion.fileno()], [], [], 0)
                    if legible or time.monotonic() - ultimo_ping > 4 * self._latido:
                        self._conexion.execute(LATIDO_SQL)
                        ultimo_ping = time.monotonic()
                except psycopg.OperationalError as exc:
                    self._perdida(exc)
                except CandadoPerdido:
                    pass  # sin base todavía: se reintenta en el siguiente latido
                except Exception:
                    logger.exception("fallo en el vigilante de los candados de hilo")

    def _quitar(self, tenencia: Tenencia) -> None:
        with self._registro:
            if self._tenencias.get(tenencia.thread_id) is tenencia:
                del self._tenencias[tenencia.thread_id]
            self._registro.notify_all()
