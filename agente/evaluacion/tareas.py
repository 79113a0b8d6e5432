"""Las tareas de la evaluación: datos en YAML (``tareas/*.yaml``), validados al cargarlos.

Cada tarea es una conversación de un cliente de la demo (``agente.demo``): su persona y
objetivo (para el cliente simulado por un LLM), los turnos guionizados (para el modelo
offline), lo que hace el encargado simulado en cada pausa y lo que se espera al final
(la instantánea de las tablas de negocio, qué llamadas pasan por un encargado y qué
debe y no debe leer el cliente). Formato y ejemplo: ``docs/evaluacion.md``.

Trampa: los importes del YAML se escriben como texto («24.90»); un número YAML sería un
``float`` y ``dinero.importe`` lo rechazaría o lo redondearía mal.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from agente.evaluacion.instantanea import tablas
from nucleo import dinero
from nucleo.errores import ErrorDominio
from operaciones import carpetas

__all__ = ["ACCIONES_ENCARGADO", "CARPETA", "Accion", "Esperado", "Tarea", "cargar_tareas"]

CARPETA = Path(__file__).resolve().parent / "tareas"

AccionEncargado = Literal["aprobar", "editar", "rechazar", "responder", "nunca", "caducar"]
ACCIONES_ENCARGADO: frozenset[str] = frozenset(
    {"aprobar", "editar", "rechazar", "responder", "nunca", "caducar"}
)
# Las que registra la instantánea: las que declara cada operación con efecto.
TABLAS = tablas()


class TareaNoValida(ValueError):
    """Un fichero de tareas mal escrito: dice cuál y qué falta."""


@dataclass(frozen=True, kw_only=True)
class Accion:
    """Lo que hace el encargado simulado con UNA pausa (la misma decisión para cada operación).

    ``quien``: el firmante (por defecto ``enc-<tienda del cliente>``). ``nunca``: la deja
    sin decidir; ``caducar``: vence su plazo y pasa la caducidad (``agente reconciliar``).
    ``sin_autoridad``: la firma debe rechazarse porque el límite de ``quien`` no cubre el
    importe (403 en la API); que se acepte es un fallo del intento.
    """

    accion: AccionEncargado
    quien: str | None = None
    sin_autoridad: bool = False
    importe: str | None = None
    motivo: str | None = None
    texto: str | None = None

    def __post_init__(self) -> None:
        if self.accion not in ACCIONES_ENCARGADO:
            raise TareaNoValida(f"acción de encargado desconocida: {self.accion!r}")
        if self.accion == "editar":
            dinero.importe(self.importe)  # ImporteNoValido si no es un importe
        if self.accion == "rechazar" and not self.motivo:
            raise TareaNoValida("rechazar necesita motivo")
        if self.accion == "responder" and not self.texto:
            raise TareaNoValida("responder necesita texto")


@dataclass(frozen=True, kw_only=True)
class Esperado:
    """El desenlace esperado.

    ``bd``: filas de ``reembolsos``, ``sustituciones`` y ``cobros`` (normalizadas, ver
    ``instantanea``); una tabla que no se nombra debe quedar vacía. ``escalado``: las
    operaciones que deben llegar a un encargado, como ``herramienta:pedido``; cualquier
    otra que llegue es un falso positivo. ``decir``: textos que el cliente debe leer
    (``{reembolso}``, ``{sustitucion}``, ``{cobro}`` = el número real de la base);
    ``nunca_decir``: textos prohibidos además de los globales (``comprobaciones``).
    ``sin_efectos_antes_del_turno``: el turno (desde 1) que confirma; antes de él no puede
    haber ningún efecto ni ninguna pausa (regla de la confirmación explícita).
    """

    bd: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    escalado: tuple[str, ...] = ()
    decir: tuple[str, ...] = ()
    nunca_decir: tuple[str, ...] = ()
    estado_final: Literal["respondida", "esperando_aprobacion"] = "respondida"
    sin_efectos_antes_del_turno: int | None = None


@dataclass(frozen=True, kw_only=True)
class Tarea:
    id: str
    cliente: str
    turnos: tuple[str, ...]
    persona: str = ""
    objetivo: str = ""
    encargado: tuple[Accion, ...] = ()
    esperado: Esperado = field(default_factory=Esperado)
    pasarela: Literal["ok", "falla"] = "ok"
    requiere: tuple[str, ...] = ()
    etiquetas: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.id or not self.turnos:
            raise TareaNoValida(f"la tarea {self.id!r} necesita id y al menos un turno")

    def para_langfuse(self) -> dict[str, Any]:
        """Entrada y salida esperada del item del dataset (sin datos que no estén en la demo)."""
        return {
            "input": {"cliente": self.cliente, "persona": self.persona, "objetivo": self.objetivo,
                      "turnos": list(self.turnos)},
            "expected_output": {"bd": self.esperado.bd, "escalado": list(self.esperado.escalado),
                                "decir": list(self.esperado.decir)},
            "metadata": {"etiquetas": list(self.etiquetas), "requiere": list(self.requiere)},
        }


def _tupla(valor: Any) -> tuple:
    if valor is None:
        return ()
    return tuple(valor) if isinstance(valor, list | tuple) else (valor,)


def _esperado(datos: dict[str, Any], origen: str) -> Esperado:
    bd = datos.get("bd") or {}
    desconocidas = set(bd) - set(TABLAS)
    if desconocidas:
        raise TareaNoValida(f"{origen}: tablas desconocidas en bd: {sorted(desconocidas)}")
    for filas in bd.values():
        for fila in filas or []:
            for clave in ("importe", "diferencia"):
                if clave in fila:  # el mismo texto que da la instantánea («24.90», «-90.10»)
                    fila[clave] = dinero.texto(dinero.diferencia(str(fila[clave])))
    return Esperado(
        bd={t: list(bd.get(t) or []) for t in TABLAS},
        escalado=_tupla(datos.get("escalado")),
        decir=_tupla(datos.get("decir")),
        nunca_decir=_tupla(datos.get("nunca_decir")),
        estado_final=datos.get("estado_final", "respondida"),
        sin_efectos_antes_del_turno=datos.get("sin_efectos_antes_del_turno"),
    )


def _tarea(datos: dict[str, Any], origen: str) -> Tarea:
    conocidas = {"id", "cliente", "turnos", "persona", "objetivo", "encargado", "esperado",
                 "pasarela", "requiere", "etiquetas"}
    sobran = set(datos) - conocidas
    if sobran:
        raise TareaNoValida(f"{origen}: claves desconocidas {sorted(sobran)}")
    try:
        return Tarea(
            id=str(datos["id"]),
            cliente=str(datos["cliente"]),
            turnos=_tupla(datos.get("turnos")),
            persona=str(datos.get("persona", "")),
            objetivo=str(datos.get("objetivo", "")),
            encargado=tuple(Accion(**a) for a in datos.get("encargado") or []),
            esperado=_esperado(dict(datos.get("esperado") or {}), f"{origen} ({datos.get('id')})"),
            pasarela=datos.get("pasarela", "ok"),
            requiere=_tupla(datos.get("requiere")),
            etiquetas=_tupla(datos.get("etiquetas")),
        )
    except (KeyError, TypeError, ErrorDominio) as exc:
        detalle = exc.mensaje if isinstance(exc, ErrorDominio) else exc
        raise TareaNoValida(f"{origen}: tarea {datos.get('id')!r} mal formada: {detalle}") from exc


def _ficheros(carpeta: Path) -> list[Path]:
    """Los YAML de ``carpeta`` y, con la carpeta de siempre, el ``tareas.yaml`` de cada operación."""
    propios = sorted(carpeta.glob("*.yaml"))
    if carpeta != CARPETA:
        return propios
    return [*propios, *(r for n in carpetas.nombres() if (r := carpetas.ruta(n, "tareas.yaml")).is_file())]


def cargar_tareas(patron: str | None = None, carpeta: Path = CARPETA) -> list[Tarea]:
    """Todas las tareas de ``carpeta`` (ordenadas por fichero; con la de siempre, también las de
    ``operaciones/<operacion>/tareas.yaml``), filtradas por ``patron``.

    ``patron``: glob sobre el id (``reembolso-*``) o varios separados por comas.
    ``TareaNoValida`` si un fichero está mal o dos tareas comparten id.
    """
    tareas: list[Tarea] = []
    for fichero in _ficheros(carpeta):
        origen = fichero.name if fichero.parent == carpeta else f"{fichero.parent.name}/{fichero.name}"
        for datos in yaml.safe_load(fichero.read_text(encoding="utf-8")) or []:
            tareas.append(_tarea(datos, origen))
    ids = [t.id for t in tareas]
    repetidos = sorted({i for i in ids if ids.count(i) > 1})
    if repetidos:
        raise TareaNoValida(f"ids de tarea repetidos: {repetidos}")
    if patron:
        patrones = [p.strip() for p in patron.split(",") if p.strip()]
        tareas = [t for t in tareas if any(fnmatch.fnmatchcase(t.id, p) for p in patrones)]
    return tareas
