"""Valida las decisiones del encargado antes de reanudar: LangChain no lo hace.

En modo por lotes el middleware no comprueba los argumentos editados contra el
esquema de la herramienta y admite que una edición cambie de herramienta (cuya regla
de aprobación nunca se evaluaría). Aquí se exige: tantas decisiones como acciones;
cada tipo permitido para su herramienta; la edición conserva herramienta y pedido y su
importe es > 0, <= lo pedido y <= lo que queda por reembolsar; un rechazo lleva motivo;
``respond`` solo para ``consultar_encargado``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from agente.nucleo.errores import DecisionNoValida

SELECT_REEMBOLSABLE_SQL = """
SELECT p.importe - coalesce((SELECT sum(r.importe) FROM reembolsos r WHERE r.pedido_id = p.id), 0)
       AS reembolsable
FROM pedidos p WHERE p.id = %(pedido)s
"""


def _importe(valor: Any, que: str) -> Decimal:
    try:
        importe = Decimal(str(valor)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError, TypeError):
        raise DecisionNoValida(f"{que}: el importe «{valor}» no es un número válido") from None
    if not importe.is_finite():
        raise DecisionNoValida(f"{que}: el importe «{valor}» no es un número válido")
    return importe


def _euros(importe: Decimal) -> str:
    return f"{importe:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".") + " EUR"


def validar_decisiones(
    peticion: dict[str, Any], decisiones: Any, *, conexion=None
) -> list[dict[str, Any]]:
    """Devuelve las decisiones normalizadas o lanza ``DecisionNoValida`` (en español)."""
    acciones = peticion.get("action_requests") or []
    configs = peticion.get("review_configs") or []
    if not isinstance(decisiones, list) or not all(isinstance(d, dict) for d in decisiones):
        raise DecisionNoValida("las decisiones deben ser una lista de objetos")
    if len(decisiones) != len(acciones):
        raise DecisionNoValida(
            f"hay {len(acciones)} operación(es) pendiente(s) y se han enviado "
            f"{len(decisiones)} decisión(es)"
        )
    normalizadas = []
    for n, (accion, config, decision) in enumerate(zip(acciones, configs, decisiones, strict=True), 1):
        nombre = accion["name"]
        que = f"operación {n} ({nombre})"
        tipo = decision.get("type")
        permitidas = config.get("allowed_decisions", [])
        if tipo not in permitidas:
            raise DecisionNoValida(
                f"{que}: la decisión «{tipo}» no está permitida (permitidas: {', '.join(permitidas)})"
            )
        if tipo == "approve":
            normalizadas.append({"type": "approve"})
        elif tipo == "reject":
            motivo = decision.get("message")
            if not isinstance(motivo, str) or not motivo.strip():
                raise DecisionNoValida(f"{que}: un rechazo necesita un motivo para el cliente")
            normalizadas.append({"type": "reject", "message": motivo.strip()})
        elif tipo == "respond":
            texto = decision.get("message")
            if nombre != "consultar_encargado":
                raise DecisionNoValida(f"{que}: solo se puede responder a una consulta al encargado")
            if not isinstance(texto, str) or not texto.strip():
                raise DecisionNoValida(f"{que}: la respuesta no puede estar vacía")
            normalizadas.append({"type": "respond", "message": texto.strip()})
        elif tipo == "edit":
            normalizadas.append(_validar_edicion(que, accion, decision, conexion))
    return normalizadas


def _validar_edicion(que: str, accion: dict, decision: dict, conexion) -> dict[str, Any]:
    editada = decision.get("edited_action")
    if not isinstance(editada, dict) or not isinstance(editada.get("args"), dict):
        raise DecisionNoValida(f"{que}: una edición necesita edited_action con name y args")
    if editada.get("name") != accion["name"]:
        raise DecisionNoValida(f"{que}: una edición no puede cambiar la herramienta")
    original = accion.get("args") or {}
    args = {**original, **editada["args"]}
    if args.get("pedido") != original.get("pedido"):
        raise DecisionNoValida(f"{que}: una edición no puede cambiar el pedido")
    cambiados = {k for k in args if k not in ("importe",) and args.get(k) != original.get(k)}
    if cambiados:
        raise DecisionNoValida(f"{que}: solo se puede editar el importe (se cambió {', '.join(sorted(cambiados))})")
    importe = _importe(args.get("importe"), que)
    pedido_importe = _importe(original.get("importe"), que)
    if importe <= 0:
        raise DecisionNoValida(f"{que}: el importe debe ser mayor que cero")
    if importe > pedido_importe:
        raise DecisionNoValida(
            f"{que}: el importe {_euros(importe)} supera lo que pidió el cliente ({_euros(pedido_importe)})"
        )
    if conexion is not None:
        fila = conexion.execute(SELECT_REEMBOLSABLE_SQL, {"pedido": original.get("pedido")}).fetchone()
        if fila is not None and importe > fila["reembolsable"]:
            raise DecisionNoValida(
                f"{que}: el importe {_euros(importe)} supera lo que queda por reembolsar "
                f"({_euros(fila['reembolsable'])})"
            )
    args["importe"] = str(importe)
    return {"type": "edit", "edited_action": {"name": accion["name"], "args": args}}
