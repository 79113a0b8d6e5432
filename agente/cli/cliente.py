"""La CLI como cliente del servidor: la sesión de quien ha entrado y sus peticiones.

Lo que hace una persona (decidir, proponer, firmar o rechazar un cambio de política) no lo
hace la CLI con su propio entorno: lo pide a la API HTTP del servidor en marcha con el token
de quien entró con ``agente entrar`` (como ``gh`` o ``kubectl``). Así usa la pasarela, los
avisos y los ajustes del servidor, y quien firma es quien entró, no lo que diga una opción.

- La sesión se guarda en ``$XDG_CONFIG_HOME/agente/sesion.json`` (o
  ``~/.config/agente/sesion.json``), solo legible por su dueño (0600): el servidor, el token
  y quién es.
- El token es el de una sesión del personal (``AGENTE_SESION_MINUTOS``, con ``can: "cli"``):
  cada orden lo renueva a media vida con ``POST /api/sesion/renovar``, como la bandeja;
  caducado o de alguien de baja, la orden dice en español que hay que volver a entrar.
- El servidor: ``agente entrar --servidor URL``, o ``AGENTE_URL`` (por defecto
  ``http://127.0.0.1:8000``); la sesión recuerda a cuál entró.

Las importaciones pesadas van dentro de cada función: ``agente --help`` no las paga.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nucleo.errores import ErrorDominio, NoAutorizado

__all__ = ["CANAL", "Cliente", "Sesion", "como_persona", "guardar", "leer", "olvidar", "pedir",
           "ruta_sesion", "servidor_por_defecto"]

CANAL = "cli"
FICHERO = "sesion.json"
ESPERA = 120.0  # una decisión reanuda el agente y puede tardar
VOLVER_A_ENTRAR = "vuelve a entrar con «agente entrar»"


@dataclass
class Sesion:
    servidor: str
    token: str
    persona: dict[str, Any] = field(default_factory=dict)

    @property
    def quien(self) -> str:
        """«Lucía Moreno (enc-talavera, encargado)»."""
        p = self.persona
        return f"{p.get('nombre') or p.get('id')} ({p.get('id')}, {p.get('rol')})"


def ruta_sesion() -> Path:
    """``$XDG_CONFIG_HOME/agente/sesion.json`` o ``~/.config/agente/sesion.json``."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agente" / FICHERO


def servidor_por_defecto() -> str:
    from nucleo.ajustes import Ajustes

    return Ajustes().url.rstrip("/")


def leer() -> Sesion | None:
    ruta = ruta_sesion()
    try:
        datos = json.loads(ruta.read_text(encoding="utf-8"))
        return Sesion(servidor=datos["servidor"], token=datos["token"], persona=datos.get("persona") or {})
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        raise NoAutorizado(f"la sesión guardada en {ruta} está dañada: {VOLVER_A_ENTRAR}") from None


def guardar(sesion: Sesion) -> Path:
    """Escribe la sesión con permisos 0600 (la carpeta, 0700), sin dejarla a medias."""
    ruta = ruta_sesion()
    ruta.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    ruta.parent.chmod(0o700)  # la carpeta es solo de la CLI, aunque ya existiera
    temporal = ruta.with_name(f".{FICHERO}.{os.getpid()}")
    descriptor = os.open(temporal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(descriptor, 0o600)  # aunque el fichero ya existiera con otros permisos
        with os.fdopen(descriptor, "w", encoding="utf-8") as fichero:
            json.dump(asdict(sesion), fichero, ensure_ascii=False)
    except BaseException:
        temporal.unlink(missing_ok=True)
        raise
    os.replace(temporal, ruta)
    return ruta


def olvidar() -> bool:
    """Borra la sesión guardada; ``False`` si no había ninguna."""
    try:
        ruta_sesion().unlink()
    except FileNotFoundError:
        return False
    return True


def _datos_token(token: str) -> dict[str, Any]:
    """Lo que dice el token (sin comprobar la firma: eso lo hace el servidor)."""
    import jwt

    try:
        return jwt.decode(token, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return {}


def _error(respuesta) -> ErrorDominio:
    """El error del servidor en español (``detalle``), con su estado."""
    try:
        detalle = respuesta.json().get("detalle")
    except ValueError:
        detalle = None
    detalle = detalle or f"el servidor respondió {respuesta.status_code}"
    if respuesta.status_code == 401:
        return NoAutorizado(f"{detalle} ({VOLVER_A_ENTRAR})")
    error = ErrorDominio(detalle)
    error.estado_http = respuesta.status_code
    return error


def pedir(servidor: str, metodo: str, ruta: str, *, token: str | None = None, **opciones: Any) -> Any:
    """Una petición al servidor; la respuesta en JSON (o ``None`` sin cuerpo). Un error del
    servidor sale como ``ErrorDominio`` con su ``detalle``; sin servidor, lo dice."""
    import httpx

    cabeceras = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(base_url=servidor, timeout=ESPERA) as http:
            respuesta = http.request(metodo, ruta, headers=cabeceras, **opciones)
    except httpx.HTTPError as exc:
        raise ErrorDominio(
            f"no se puede hablar con el servidor {servidor} ({exc.__class__.__name__}): arráncalo con "
            "«agente serve» (o «agente demo»), o di cuál es con «agente entrar --servidor URL» o AGENTE_URL"
        ) from None
    if respuesta.status_code >= 400:
        raise _error(respuesta)
    return respuesta.json() if respuesta.content else None


class Cliente:
    """Las peticiones de la persona que ha entrado, con su token (renovado a media vida)."""

    def __init__(self, sesion: Sesion) -> None:
        self.sesion = sesion

    @property
    def persona(self) -> dict[str, Any]:
        return self.sesion.persona

    def renovar_si_toca(self, ahora: float | None = None) -> None:
        datos = _datos_token(self.sesion.token)
        inicio, fin = datos.get("iat"), datos.get("exp")
        if not isinstance(inicio, int | float) or not isinstance(fin, int | float):
            return  # el servidor dirá si vale
        ahora = time.time() if ahora is None else ahora
        if ahora < inicio + (fin - inicio) / 2:
            return
        if ahora >= fin:
            raise NoAutorizado(f"tu sesión ha caducado: {VOLVER_A_ENTRAR}")
        try:
            nuevo = pedir(self.sesion.servidor, "POST", "/api/sesion/renovar", token=self.sesion.token)
        except ErrorDominio as exc:
            if exc.estado_http in (401, 403):
                raise NoAutorizado(f"no se ha podido renovar tu sesión ({exc.mensaje}): {VOLVER_A_ENTRAR}") from None
            raise
        self.sesion.token = nuevo["token"]
        guardar(self.sesion)

    def pedir(self, metodo: str, ruta: str, **opciones: Any) -> Any:
        self.renovar_si_toca()
        return pedir(self.sesion.servidor, metodo, ruta, token=self.sesion.token, **opciones)

    def get(self, ruta: str, **opciones: Any) -> Any:
        return self.pedir("GET", ruta, **opciones)

    def post(self, ruta: str, **opciones: Any) -> Any:
        return self.pedir("POST", ruta, **opciones)

    def comprobar_que_es(self, quien: str | None, opcion: str) -> None:
        """Una opción como ``--encargado`` solo acota: tiene que ser quien ha entrado."""
        if quien is None or quien == self.persona.get("id"):
            return
        from nucleo.errores import Prohibido

        raise Prohibido(
            f"has entrado como {self.sesion.quien}: {opcion} {quien} no elige quién actúa. "
            f"Para actuar como {quien}, entra como esa persona con «agente entrar»"
        )


@contextmanager
def como_persona() -> Iterator[Cliente]:
    """El cliente de la persona que ha entrado; sin sesión, el error dice cómo entrar."""
    sesion = leer()
    if sesion is None:
        raise NoAutorizado(
            "no has entrado: esta orden actúa como una persona a través del servidor. Entra con "
            "«agente entrar» (o, con el servidor en modo demo, «agente entrar --demo enc-talavera»)"
        )
    yield Cliente(sesion)
