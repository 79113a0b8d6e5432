"""Firmas escalonadas: la autoridad de una pausa y la recogida de firmas hasta cumplirla.

- ``requisito_de_pausa``: al pausar, la autoridad de cada acción sale de su veredicto
  guardado (la calculó la política con la versión de la matriz de la tienda en ese
  momento) y la de la pausa es la más exigente. Se guarda en la fila de la cola y no se
  vuelve a calcular, salvo al editar (para el importe editado, con la MISMA versión).
- ``firmar``: dentro de la transacción de la decisión (fila de la cola bloqueada). La misma
  persona dos veces es ``YaFirmada`` (409); una firma que no cuenta es ``Prohibido`` (403,
  con el límite en el mensaje); si aún faltan firmas se guarda y devuelve ``FirmaParcial``;
  si se cumple (o alguien rechaza), devuelve la decisión combinada que se reanuda una vez.
- ``mi_firma``: para la bandeja, ANTES de firmar: si la firma de quien mira contaría, con la
  misma comprobación (``_comprobar``) y los mismos textos que ``firmar``, y qué falta.

Regla de la combinación, por acción: un rechazo de cualquiera termina la aprobación (las
acciones que esa firma no rechaza solo se aplican si ya tienen sus firmas; si no, se
rechazan también); si no, vale la última edición (una edición posterior no puede subir
el importe ya firmado) y, sin ediciones, la última aprobación o respuesta.

Editar a la baja tras una firma: cualquiera que pueda firmar el importe nuevo lo baja; el
requisito se recalcula para el importe nuevo con la misma versión de la matriz y las
firmas ya dadas (por un importe mayor) cuentan para el menor: si con ellas ya se cumple,
la edición cierra la aprobación.

Quien pide es siempre el cliente (el agente propone por él): ningún firmante puede ser
quien pidió, así que no hay «solicitante que se aprueba a sí mismo» que comprobar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from agente.servicio.resultados import Encargado
from herramientas import Registro
from nucleo import dinero
from nucleo.errores import DecisionNoValida, Prohibido, YaFirmada
from politicas.lectura_matriz import VersionesMatriz, leer_matriz, leer_matriz_por_id
from politicas.matriz_autoridad import (
    ROLES_POR_DEFECTO,
    Matriz,
    Requisito,
    admite_firma,
    autoridad_necesaria,
    firmas_completas,
    puede_firmar,
)

__all__ = ["FirmaParcial", "MatricesLeidas", "firmar", "mi_firma", "requisito_de_pausa", "requisito_publico"]

SELECT_AUTORIDAD_SQL = """
SELECT tool_call_id, requiere_encargado, autoridad_importe, autoridad_firmas, autoridad_rol,
       autoridad_matriz_id, autoridad_regla, motivos
FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = ANY(%(ids)s)
"""
SELECT_FIRMAS_SQL = """
SELECT encargado_id, rol, decisiones FROM firmas_aprobacion
WHERE thread_id = %(thread_id)s AND interrupt_id = %(interrupt_id)s
ORDER BY id
"""
INSERT_FIRMA_SQL = """
INSERT INTO firmas_aprobacion (thread_id, interrupt_id, encargado_id, rol, tienda, decisiones, requisito, canal)
VALUES (%(thread_id)s, %(interrupt_id)s, %(encargado_id)s, %(rol)s, %(tienda)s, %(decisiones)s, %(requisito)s,
        %(canal)s)
"""
ACTUALIZAR_REQUISITO_SQL = """
UPDATE aprobaciones_pendientes SET requisito = %(requisito)s WHERE thread_id = %(thread_id)s
"""
SIN_FIRMAS = "no reunió las firmas necesarias antes del rechazo de otra operación"
YA_FIRMADA = "ya has firmado esta aprobación: la firma que falta tiene que ser de otra persona"
NO_BASTA = "tu firma no basta para esta aprobación"


@dataclass(frozen=True)
class FirmaParcial:
    """Una firma recogida que aún no basta: la aprobación sigue en la cola."""

    thread_id: str
    firmas: int
    firmas_necesarias: int
    estado: str = "esperando_firmas"


def _nivel(roles: Sequence[str], rol: str) -> int:
    return list(roles).index(rol) if rol in roles else len(roles)


def _accion(tool_call_id: str, requisito: Requisito) -> dict[str, Any]:
    return {
        "tool_call_id": tool_call_id,
        "regla": requisito.regla,
        "importe": None if requisito.importe is None else dinero.texto(requisito.importe),
        "firmas": requisito.firmas,
        "rol_minimo": requisito.rol_minimo,
        "matriz_id": requisito.matriz_id,
        "version_matriz": requisito.version_matriz,
    }


def _resumen(acciones: list[dict[str, Any]], roles: Sequence[str]) -> dict[str, Any]:
    """La autoridad de la pausa: la de su acción más exigente (firmas, rol, importe)."""
    if not acciones:
        return {"firmas_necesarias": 1, "rol_minimo": roles[0], "importe": None, "regla": None,
                "matriz_id": None, "version_matriz": None, "acciones": []}
    mas = max(acciones, key=lambda a: (a["firmas"], _nivel(roles, a["rol_minimo"]),
                                       Decimal(a["importe"] or "0")))
    return {"firmas_necesarias": mas["firmas"], "rol_minimo": mas["rol_minimo"],
            "importe": mas["importe"], "regla": mas["regla"], "matriz_id": mas["matriz_id"],
            "version_matriz": mas["version_matriz"], "acciones": acciones}


class MatricesLeidas:
    """Las versiones de la matriz que hacen falta en una pausa o una decisión, leídas una vez
    por transacción (la pausa las comparte con sus avisos)."""

    def __init__(self, conexion: psycopg.Connection, *, versiones: VersionesMatriz | None = None) -> None:
        self._conexion = conexion
        self._leidas: dict[Any, Matriz | None] = {}
        self._versiones = versiones  # las del proceso (Ejecutor.versiones_matriz)

    def por_id(self, matriz_id: int | None) -> Matriz | None:
        if matriz_id is None:
            return None
        if matriz_id not in self._leidas:
            self._leidas[matriz_id] = (
                self._versiones.leer(self._conexion, matriz_id) if self._versiones is not None
                else leer_matriz_por_id(self._conexion, matriz_id)
            )
        return self._leidas[matriz_id]

    def ya_leida(self, matriz_id: int | None) -> Matriz | None:
        """La versión si ya se leyó; nunca va a la base."""
        return self._leidas.get(matriz_id) if matriz_id is not None else None

    def vigente(self, tienda: str) -> Matriz | None:
        clave = ("vigente", tienda)
        if clave not in self._leidas:
            self._leidas[clave] = leer_matriz(self._conexion, tienda=tienda)
        return self._leidas[clave]


def requisito_de_pausa(
    conexion: psycopg.Connection, *, thread_id: str, tienda: str, llamadas: Sequence[Mapping[str, Any]],
    registro: Registro, matrices: MatricesLeidas | None = None,
    motivos: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """La autoridad de una pausa (para ``aprobaciones_pendientes.requisito``), desde los
    veredictos guardados de sus ``llamadas`` con firma (tool_calls del último AIMessage).
    ``motivos``: si se da, se llena con los motivos de cada veredicto leído (los avisos de
    la pausa los enseñan sin volver a leerlos).

    Una llamada con firma sin veredicto guardado exige el rol más alto (falla cerrada).
    """
    ids = [t["id"] for t in llamadas]
    filas = {f["tool_call_id"]: f for f in conexion.execute(
        SELECT_AUTORIDAD_SQL, {"thread_id": thread_id, "ids": ids}).fetchall()}
    if motivos is not None:
        motivos.update({i: tuple(f["motivos"] or ()) for i, f in filas.items()})
    matrices = matrices or MatricesLeidas(conexion)
    roles: Sequence[str] = ROLES_POR_DEFECTO
    acciones = []
    for llamada in llamadas:
        fila = filas.get(llamada["id"])
        if fila is not None and fila["requiere_encargado"] is False:
            continue
        if fila is None or fila["autoridad_firmas"] is None:
            herramienta = registro.get(llamada["name"])
            regla = fila["autoridad_regla"] if fila else (herramienta.regla if herramienta else None)
            matriz = matrices.vigente(tienda)
            if fila is not None:  # veredicto de antes de las firmas escalonadas: una de encargado
                requisito = Requisito(fila["autoridad_importe"], regla=regla)
            elif matriz is not None:
                requisito = autoridad_necesaria(matriz, regla, None)
            else:
                requisito = Requisito(None, rol_minimo=roles[-1], regla=regla)
        else:
            matriz = matrices.por_id(fila["autoridad_matriz_id"])
            requisito = Requisito(
                fila["autoridad_importe"], fila["autoridad_firmas"], fila["autoridad_rol"],
                regla=fila["autoridad_regla"], matriz_id=fila["autoridad_matriz_id"],
                version_matriz=matriz.version if matriz else None,
            )
        if matriz is not None:
            roles = matriz.roles
        acciones.append(_accion(llamada["id"], requisito))
    return _resumen(acciones, roles)


def requisito_publico(requisito: Mapping[str, Any] | None) -> dict[str, Any]:
    """El requisito tal como lo enseña la API (``requisito`` de una aprobación)."""
    requisito = dict(requisito or {})
    firmas = int(requisito.get("firmas_necesarias") or 1)
    rol = requisito.get("rol_minimo") or ROLES_POR_DEFECTO[0]
    return {
        "firmas_necesarias": firmas,
        "rol_minimo": rol,
        "importe": requisito.get("importe"),
        "texto": Requisito(None, firmas, rol).texto(),
        "version_matriz": requisito.get("version_matriz"),
    }


# -- recoger una firma ---------------------------------------------------------------------


def _importe_de(decision: Mapping[str, Any]) -> Decimal | None:
    if decision.get("type") != "edit":
        return None
    return dinero.importe_o_none((decision["edited_action"].get("args") or {}).get("importe"))


def _requisito_accion(accion: Mapping[str, Any], importe: Decimal | None, matriz: Matriz | None) -> dict:
    """La autoridad de una acción tras una edición a ``importe`` (misma versión de la matriz)."""
    if importe is None or matriz is None or accion.get("regla") not in matriz.limites:
        return dict(accion)
    requisito = autoridad_necesaria(matriz, accion["regla"], importe)
    return {**accion, **_accion(accion["tool_call_id"], requisito)}


def _comprobar(
    matriz: Matriz | None, accion: Mapping[str, Any], rol: str, previas: Sequence[str]
) -> tuple[bool, str]:
    """¿Cuenta la firma de ``rol`` para la acción? Y ¿queda completa con ella?"""
    if matriz is None:  # pausa de antes de la matriz: una firma de cualquiera de la tienda
        return True, ""
    importe, regla = accion.get("importe"), accion.get("regla")
    if importe is None and regla in matriz.limites:
        # Sin importe en una regla con límites: la matriz exige el rol más alto; se
        # respeta el requisito guardado (p. ej. una consulta al encargado).
        permitido = rol in matriz.roles and matriz.nivel(rol) >= _nivel(matriz.roles, accion["rol_minimo"])
        motivo = "" if permitido else f"esta operación necesita {accion['rol_minimo']} o superior"
        return permitido, motivo
    if previas and firmas_completas(matriz, regla, importe, previas):
        # Una edición a la baja que ya cubren las firmas dadas (firmaron un importe mayor,
        # que vale para el menor): basta con que quien edita pueda firmar el importe nuevo.
        permiso = puede_firmar(matriz, rol, regla, importe)
    else:
        permiso = admite_firma(matriz, rol, regla, importe, previas=previas)
    return bool(permiso), permiso.motivo


def _completa(matriz: Matriz | None, accion: Mapping[str, Any], roles: Sequence[str]) -> bool:
    if matriz is None:
        return len(roles) >= 1
    if accion.get("importe") is None and accion.get("regla") in matriz.limites:
        return len(roles) >= accion["firmas"] and any(
            r in matriz.roles and matriz.nivel(r) >= _nivel(matriz.roles, accion["rol_minimo"]) for r in roles
        )
    return firmas_completas(matriz, accion.get("regla"), accion.get("importe"), roles)


def firmar(
    conexion: psycopg.Connection, *, fila: Mapping[str, Any], firmante: Encargado,
    decisiones: list[dict[str, Any]], matrices: MatricesLeidas | None = None, canal: str | None = None,
) -> FirmaParcial | list[dict[str, Any]]:
    """Recoge la firma de ``firmante`` (decisiones ya validadas) en la pausa ``fila``
    (bloqueada ``FOR UPDATE`` por quien llama). Devuelve ``FirmaParcial`` si aún faltan
    firmas, o las decisiones combinadas con las que reanudar una vez. ``canal``: por dónde
    llegó la firma (``web``, ``cli``, ``protocolo``; informativo, queda en la auditoría).

    Raises:
        YaFirmada: la misma persona ya firmó esta aprobación (409).
        Prohibido: su firma no cuenta (su límite no cubre el importe...): nada cambia (403).
        DecisionNoValida: una edición sube el importe que otra persona ya firmó (422).
    """
    clave = {"thread_id": fila["thread_id"], "interrupt_id": fila["interrupt_id"]}
    previas = conexion.execute(SELECT_FIRMAS_SQL, clave).fetchall()
    if any(p["encargado_id"] == firmante.encargado_id for p in previas):
        raise YaFirmada(YA_FIRMADA)
    requisito = dict(fila.get("requisito") or {})
    acciones = list(requisito.get("acciones") or [])
    ids = list((fila.get("peticion") or {}).get("tool_call_ids") or [])
    por_id = {a["tool_call_id"]: a for a in acciones}
    matrices = matrices or MatricesLeidas(conexion)
    roles_previos = [p["rol"] for p in previas]
    combinadas: list[dict[str, Any]] = []
    nuevas_acciones: list[dict[str, Any]] = []
    rechaza = any(d["type"] == "reject" for d in decisiones)
    completas = []
    for n, decision in enumerate(decisiones):
        accion = por_id.get(ids[n]) if n < len(ids) else None
        if decision["type"] == "reject":
            combinadas.append(decision)
            if accion:
                nuevas_acciones.append(accion)
            continue
        anteriores = [p["decisiones"][n] for p in previas if n < len(p["decisiones"])]
        ultima = next((d for d in reversed([*anteriores, decision]) if d["type"] != "approve"), decision)
        if accion is None:  # sin requisito guardado (pausa antigua): basta una firma
            combinadas.append(ultima)
            completas.append(True)
            continue
        matriz = matrices.por_id(accion.get("matriz_id"))
        importe = _importe_de(decision)
        ya_firmado = dinero.importe_o_none(accion.get("importe"))
        if importe is not None and previas and ya_firmado is not None and importe > ya_firmado:
            raise DecisionNoValida(
                f"operación {n + 1}: el importe {dinero.eur(importe)} supera el ya firmado "
                f"({dinero.eur(ya_firmado)})"
            )
        accion = _requisito_accion(accion, importe, matriz)
        permitido, motivo = _comprobar(matriz, accion, firmante.rol, roles_previos)
        if not permitido and not rechaza:
            raise Prohibido(motivo or NO_BASTA)
        completas.append(permitido and _completa(matriz, accion, [*roles_previos, firmante.rol]))
        nuevas_acciones.append(accion)
        combinadas.append(ultima if completas[-1] or not rechaza else
                          {"type": "reject", "message": SIN_FIRMAS})
    roles = ROLES_POR_DEFECTO
    nuevo = _resumen(nuevas_acciones, roles) if acciones else requisito
    conexion.execute(INSERT_FIRMA_SQL, {
        **clave, "encargado_id": firmante.encargado_id, "rol": firmante.rol, "tienda": fila["tienda"],
        "decisiones": Jsonb(decisiones), "requisito": Jsonb(nuevo),
        "canal": canal,
    })
    if rechaza or all(completas):
        return combinadas
    if nuevo != requisito:
        conexion.execute(ACTUALIZAR_REQUISITO_SQL, {"thread_id": fila["thread_id"], "requisito": Jsonb(nuevo)})
    return FirmaParcial(
        thread_id=fila["thread_id"], firmas=len(previas) + 1,
        firmas_necesarias=int(nuevo.get("firmas_necesarias") or 1),
    )


# -- antes de firmar: ¿contaría mi firma? ----------------------------------------------------


def _quien_falta(matriz: Matriz | None, accion: Mapping[str, Any], roles_previos: Sequence[str]) -> str:
    """«1 firma (gerente o regional)»: lo que le falta a la acción con las firmas dadas."""
    faltan = max(1, int(accion.get("firmas") or 1) - len(roles_previos))
    texto = f"{faltan} firma" + ("s" if faltan > 1 else "")
    roles = matriz.roles if matriz is not None else ROLES_POR_DEFECTO
    minimo = _nivel(roles, accion.get("rol_minimo") or roles[0])
    if minimo == 0 or any(_nivel(roles, r) >= minimo for r in roles_previos if r in roles):
        return texto  # ya la cubre una firma dada: vale la de cualquiera
    arriba = list(roles[minimo:])
    quien = arriba[0] if len(arriba) == 1 else ", ".join(arriba[:-1]) + " o " + arriba[-1]
    return f"{texto} ({quien})"


def mi_firma(matrices: MatricesLeidas, fila: Mapping[str, Any], firmante: Encargado) -> dict[str, Any]:
    """Si la firma de ``firmante`` (aprobando tal cual) contaría ahora en la pausa ``fila`` de
    la bandeja (con ``firmas``), con la misma comprobación que ``firmar`` (``_comprobar``):
    ``{"puede", "motivo", "ya_firmada", "falta"}``. Un rechazo cuenta siempre (salvo si ya
    firmó); ``falta``: las firmas que quedan («1 firma (gerente o regional)») si ya hay alguna."""
    previas = list(fila.get("firmas") or [])
    roles_previos = [p["rol"] for p in previas]
    acciones = list((fila.get("requisito") or {}).get("acciones") or [])
    falta = None
    if previas:
        mas = max(acciones, key=lambda a: int(a.get("firmas") or 1), default={"firmas": 1})
        falta = _quien_falta(matrices.por_id(mas.get("matriz_id")), mas, roles_previos)
    if any(p["encargado"] == firmante.encargado_id for p in previas):
        return {"puede": False, "motivo": YA_FIRMADA, "ya_firmada": True, "falta": falta}
    for accion in acciones:
        permitido, motivo = _comprobar(matrices.por_id(accion.get("matriz_id")), accion, firmante.rol, roles_previos)
        if not permitido:
            return {"puede": False, "motivo": motivo or NO_BASTA, "ya_firmada": False, "falta": falta}
    return {"puede": True, "motivo": None, "ya_firmada": False, "falta": falta}
