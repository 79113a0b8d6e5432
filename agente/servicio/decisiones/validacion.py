"""Valida las decisiones del encargado antes de reanudar: LangChain no lo hace.

En modo por lotes el middleware no comprueba los argumentos editados contra el esquema
de la herramienta y admite que una edición cambie de herramienta, cuya regla de
aprobación nunca se evaluaría (``docs/trampas.md``). Aquí se exige, leyendo el
registro de herramientas (nada depende del nombre de una herramienta):

- tantas decisiones como acciones, en su orden (una decisión puede nombrar su operación con
  ``tool_call_id``; una edición la nombra con ``edited_action.name``): si no casan,
  ``DecisionesDescuadradas`` (422) dice cuántas y en qué orden, y no se decide nada;
- cada tipo permitido a la vez por la pausa
  (``review_configs``) y por la herramienta en el registro (``respond`` solo donde
  ambos lo admiten: finge un resultado sin ejecutar nada);
- un rechazo lleva motivo y una respuesta lleva texto;
- una edición conserva la herramienta y solo cambia sus ``campos_editables``. Un importe
  editado se lee con ``dinero.importe`` (``10.009`` es un 422, nunca se redondea), no
  supera lo propuesto y, si la operación es de un pedido, tampoco lo que queda por
  reembolsar de él. Un campo editable que no sea un importe se rechaza (falla cerrada)
  hasta que aquí se sepa validarlo.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import psycopg

from herramientas import Herramienta, Registro
from nucleo import dinero
from nucleo.errores import (
    DecisionesDescuadradas,
    DecisionNoAplicable,
    DecisionNoValida,
    ImporteNoValido,
)

__all__ = ["CAMPOS_IMPORTE", "MAX_NOTA", "decisiones_permitidas", "validar_decisiones", "validar_nota"]

MAX_NOTA = 2000

CAMPOS_IMPORTE = frozenset({"importe"})  # campos editables que son dinero

# Lo reembolsable sale del libro (el valor de las unidades aún sin compensar), el mismo
# sitio que lee la herramienta: un encargado no aprueba algo que después se rechazaría.
SELECT_REEMBOLSABLE_SQL = """
SELECT reembolsable FROM elegibilidad_pedidos WHERE pedido_id = %(pedido)s
"""


def decisiones_permitidas(config: Mapping[str, Any], herramienta: Herramienta | None) -> list[str]:
    """Las decisiones que admiten a la vez la pausa (``review_config``) y el registro."""
    if herramienta is None:
        return []
    return [t for t in config.get("allowed_decisions", []) if t in herramienta.decisiones]


def validar_decisiones(
    peticion: Mapping[str, Any],
    decisiones: Any,
    *,
    registro: Registro,
    conexion: psycopg.Connection | None = None,
) -> list[dict[str, Any]]:
    """Devuelve las decisiones normalizadas o lanza, en español, ``DecisionNoValida`` (la
    forma: 422) o ``DecisionNoAplicable`` (no encaja con lo pendiente: 409)."""
    acciones = peticion.get("action_requests") or []
    configs = peticion.get("review_configs") or []
    if not isinstance(decisiones, list) or not all(isinstance(d, dict) for d in decisiones):
        raise DecisionNoValida("las decisiones deben ser una lista de objetos")
    _exigir_cuadre(peticion, decisiones, registro)
    normalizadas = []
    for n, (accion, config, decision) in enumerate(zip(acciones, configs, decisiones, strict=True), 1):
        que = f"operación {n} ({accion.get('name')})"
        herramienta = registro.get(accion.get("name"))
        permitidas = decisiones_permitidas(config, herramienta)
        tipo = decision.get("type")
        if tipo not in permitidas:
            raise DecisionNoAplicable(
                f"{que}: la decisión «{tipo}» no está permitida "
                f"(permitidas: {', '.join(permitidas) or 'ninguna'})"
            )
        if tipo == "approve":
            normalizadas.append({"type": "approve"})
        elif tipo in ("reject", "respond"):
            normalizadas.append({"type": tipo, "message": _texto(que, tipo, decision.get("message"))})
        else:
            normalizadas.append(
                _validar_edicion(que, accion, decision, herramienta.campos_editables, conexion)
            )
    return normalizadas


def _exigir_cuadre(peticion: Mapping[str, Any], decisiones: list[dict[str, Any]], registro: Registro) -> None:
    """Una decisión por operación y en su orden; si no, ``DecisionesDescuadradas`` en español."""
    acciones = peticion.get("action_requests") or []
    ids = list(peticion.get("tool_call_ids") or [])
    orden = _orden(acciones, registro)
    if len(decisiones) != len(acciones):
        raise DecisionesDescuadradas(
            f"Esta tarjeta tiene {_cuantas(len(acciones), 'operación', 'operaciones')} y se han enviado "
            f"{_cuantas(len(decisiones), 'decisión', 'decisiones')}: envía una decisión por operación, "
            f"en este orden: {orden}. No se ha decidido nada: la aprobación sigue pendiente.",
            esperadas=len(acciones), recibidas=len(decisiones),
        )
    for n, (accion, decision) in enumerate(zip(acciones, decisiones, strict=True)):
        propio = decision.get("tool_call_id")
        if propio is not None and propio not in ids:
            raise DecisionesDescuadradas(
                f"La decisión {n + 1} nombra una operación que no está en esta tarjeta: envía las "
                f"decisiones en este orden: {orden}. No se ha decidido nada: la aprobación sigue pendiente.",
                posicion=n + 1,
            )
        otra = _otra_posicion(n, acciones, ids, decision)
        if otra is not None:
            raise DecisionesDescuadradas(
                f"La decisión {n + 1} es para la operación {otra + 1} ({_titulo(acciones[otra], registro)}), "
                f"no para la {n + 1} ({_titulo(accion, registro)}): envía las decisiones en este orden: "
                f"{orden}. No se ha decidido nada: la aprobación sigue pendiente.",
                posicion=n + 1,
            )


def _otra_posicion(n: int, acciones: list[Any], ids: list[Any], decision: Mapping[str, Any]) -> int | None:
    """La posición de la operación que nombra la decisión ``n`` si no es la suya (None si lo es
    o si no nombra ninguna); el ``tool_call_id`` ya se sabe de la tarjeta."""
    if (propio := decision.get("tool_call_id")) is not None:
        return None if ids.index(propio) == n else ids.index(propio)
    editada = decision.get("edited_action")
    nombre = editada.get("name") if isinstance(editada, dict) else None
    if decision.get("type") != "edit" or nombre == acciones[n].get("name"):
        return None
    # Una edición que nombra otra operación de la tarjeta está en otra posición; una que
    # nombra una herramienta que no está aquí cambia de herramienta (``_validar_edicion``).
    return next((i for i, a in enumerate(acciones) if a.get("name") == nombre), None)


def _orden(acciones: list[Any], registro: Registro) -> str:
    return ", ".join(f"{n}) {_titulo(a, registro)}" for n, a in enumerate(acciones, 1)) or "ninguna"


def _titulo(accion: Mapping[str, Any], registro: Registro) -> str:
    herramienta = registro.get(accion.get("name"))
    titulo = herramienta.titulo_encargado if herramienta else ""
    return f"{titulo} ({accion.get('name')})" if titulo else str(accion.get("name"))


def _cuantas(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def validar_nota(nota: Any) -> str | None:
    """La nota del encargado para el cliente (sin espacios sobrantes), o None si no hay.

    Acompaña a cualquier decisión: la aplicación la añade al final del mensaje final."""
    if nota is None or (isinstance(nota, str) and not nota.strip()):
        return None
    if not isinstance(nota, str):
        raise DecisionNoValida("la nota debe ser un texto")
    if len(nota) > MAX_NOTA:
        raise DecisionNoValida(f"la nota admite como máximo {MAX_NOTA} caracteres")
    return nota.strip()


def _texto(que: str, tipo: str, texto: Any) -> str:
    if not isinstance(texto, str) or not texto.strip():
        if tipo == "reject":
            raise DecisionNoValida(f"{que}: un rechazo necesita un motivo para el cliente")
        raise DecisionNoValida(f"{que}: la respuesta no puede estar vacía")
    return texto.strip()


def _validar_edicion(
    que: str,
    accion: Mapping[str, Any],
    decision: Mapping[str, Any],
    editables: tuple[str, ...],
    conexion: psycopg.Connection | None,
) -> dict[str, Any]:
    editada = decision.get("edited_action")
    if not isinstance(editada, dict) or not isinstance(editada.get("args"), dict):
        raise DecisionNoValida(f"{que}: una edición necesita edited_action con name y args")
    if editada.get("name") != accion["name"]:
        raise DecisionNoAplicable(f"{que}: una edición no puede cambiar la herramienta")
    original = dict(accion.get("args") or {})
    args = {**original, **editada["args"]}
    cambiados = sorted(k for k in args if k not in editables and args[k] != original.get(k))
    if cambiados:
        raise DecisionNoAplicable(
            f"{que}: solo se puede editar {', '.join(editables) or 'nada'} "
            f"(se cambió {', '.join(cambiados)})"
        )
    for campo in editables:
        if campo not in CAMPOS_IMPORTE:
            raise DecisionNoValida(f"{que}: el campo «{campo}» no se puede validar al editar")
        if campo in editada["args"]:
            args[campo] = dinero.texto(_importe_editado(que, original, args, campo, conexion))
    return {"type": "edit", "edited_action": {"name": accion["name"], "args": args}}


def _importe_editado(
    que: str,
    original: Mapping[str, Any],
    args: Mapping[str, Any],
    campo: str,
    conexion: psycopg.Connection | None,
) -> Decimal:
    try:
        importe = dinero.importe(args.get(campo))
    except ImporteNoValido as exc:
        raise DecisionNoValida(f"{que}: {exc.mensaje}") from None
    propuesto = dinero.importe_o_none(original.get(campo))
    if propuesto is None:
        raise DecisionNoAplicable(f"{que}: la propuesta no tiene un {campo} válido que editar")
    if importe > propuesto:
        raise DecisionNoAplicable(
            f"{que}: el importe {dinero.eur(importe)} supera lo que pidió el cliente "
            f"({dinero.eur(propuesto)})"
        )
    if conexion is not None and original.get("pedido"):
        fila = conexion.execute(SELECT_REEMBOLSABLE_SQL, {"pedido": original["pedido"]}).fetchone()
        if fila is not None and importe > fila["reembolsable"]:
            raise DecisionNoAplicable(
                f"{que}: el importe {dinero.eur(importe)} supera lo que queda por reembolsar "
                f"({dinero.eur(fila['reembolsable'])})"
            )
    return importe
