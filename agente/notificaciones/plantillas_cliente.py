"""El correo al cliente: qué pasó, en palabras llanas, y los enlaces de vuelta y de baja.

Se pinta al entregar, desde los ``datos`` guardados al encolar (``avisos_cliente``). Solo
lo que el cliente ya conoce: su nombre, la tienda, el tipo de operación, su número de
pedido y los importes; nunca ids internos (hilo, llamada, decisión) ni SKUs. El texto de
la conversación no se copia: puede traer lo que escribió el modelo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agente.notificaciones.plantillas import Mensaje
from herramientas import REGISTRO
from nucleo import dinero

__all__ = ["con_operaciones", "operaciones_decididas", "pintar_cliente"]


def _eur(valor: Any) -> str | None:
    try:
        return dinero.eur(dinero.importe(valor)) if valor not in (None, "") else None
    except Exception:  # un importe ilegible no rompe el aviso
        return None


def _operacion(op: Mapping[str, Any]) -> str:
    """«tu solicitud de reembolso del pedido P-...»."""
    titulo = (op.get("titulo") or "").strip()
    que = f"tu solicitud de {titulo[0].lower()}{titulo[1:]}" if titulo else "tu solicitud"
    if op.get("pedido"):
        que += f" del pedido {op['pedido']}"
    return que


def _decision(datos: Mapping[str, Any], tienda: str) -> tuple[str, list[str]]:
    lineas: list[str] = []
    resultados = set()
    for op in datos.get("operaciones") or []:
        que, pedido_eur, final_eur = _operacion(op), _eur(op.get("importe")), _eur(op.get("importe_final"))
        resultado = op.get("resultado")
        if datos.get("por_sistema"):
            resultados.add("caducada")
            lineas.append(f"Nadie de {tienda} ha podido revisar a tiempo {que}, así que ha caducado "
                          "sin hacerse. Puedes volver a pedirlo cuando quieras.")
        elif resultado == "approve":
            resultados.add("aprobada")
            lineas.append(f"Un encargado de {tienda} ha aprobado {que}"
                          + (f" por {pedido_eur}." if pedido_eur else "."))
        elif resultado == "edit":
            resultados.add("aprobada")
            cambio = f" por {final_eur}" + (f" en lugar de {pedido_eur}" if pedido_eur else "") if final_eur else ""
            lineas.append(f"Un encargado de {tienda} ha aprobado {que}{cambio}.")
        elif resultado == "reject":
            resultados.add("rechazada")
            motivo = f" Motivo: {op['motivo'].strip().rstrip('.')}." if op.get("motivo") else ""
            lineas.append(f"Un encargado de {tienda} ha rechazado {que}.{motivo} Si tienes algo más que "
                          "aportar, escríbenos en la conversación y lo revisamos.")
        else:
            resultados.add("respondida")
            lineas.append(f"{tienda} ha respondido a {que}.")
    if datos.get("fallo"):
        lineas.append("La operación no se ha podido completar; una persona de la tienda lo revisará "
                      "y te escribirá en la conversación.")
    if datos.get("nota"):
        lineas.append(f"Nota del encargado: {datos['nota']}")
    if not lineas:
        lineas.append(f"{tienda} ha revisado tu solicitud.")
    if resultados == {"caducada"}:
        asunto = "tu solicitud ha caducado sin revisión"
    elif len(resultados) == 1 and "respondida" not in resultados:
        asunto = f"tu solicitud está {resultados.pop()}"
    else:
        asunto = "ya tenemos respuesta a tu solicitud"
    return asunto, lineas


def _pago(datos: Mapping[str, Any]) -> tuple[str, list[str]]:
    importe, pedido = _eur(datos.get("importe")) or "el importe", datos.get("pedido")
    del_pedido = f" del pedido {pedido}" if pedido else ""
    concepto = datos.get("concepto")
    if datos.get("tipo") == "cobro":
        return "hemos cobrado la diferencia de tu cambio", [
            f"Hemos cobrado la diferencia de {importe} del cambio de producto{del_pedido}."]
    if concepto == "diferencia":
        return "te hemos devuelto la diferencia de tu cambio", [
            f"Ya te hemos devuelto la diferencia de {importe} del cambio de producto{del_pedido} "
            "a tu medio de pago original."]
    if concepto == "anulacion":
        return "te hemos devuelto lo cobrado por un cambio", [
            f"Ya te hemos devuelto los {importe} que te cobramos por el cambio de producto{del_pedido}, "
            "que no se pudo completar."]
    return "tu reembolso ya está hecho", [
        f"Ya está hecho tu reembolso de {importe}{del_pedido}: lo verás en tu medio de pago "
        "original en unos días."]


def _marcado(datos: Mapping[str, Any]) -> tuple[str, list[str]]:
    importe, pedido = _eur(datos.get("importe")) or "", datos.get("pedido")
    que = "tu cobro" if datos.get("tipo") == "cobro" else "tu reembolso"
    que += f" de {importe}" if importe else ""
    que += f" del pedido {pedido}" if pedido else ""
    if datos.get("rechazado"):  # el proveedor lo rechazó: no «tardando», la verdad
        dinero = "no se te ha cobrado" if datos.get("tipo") == "cobro" else "todavía no te hemos devuelto ese dinero"
        return f"{'tu cobro' if datos.get('tipo') == 'cobro' else 'tu reembolso'} no se ha podido completar", [
            f"{que[0].upper()}{que[1:]} no se ha podido completar: {dinero}. Una persona de la "
            "tienda lo está revisando y te escribirá en la conversación."]
    return "tu pago está tardando más de lo normal", [
        f"{que[0].upper()}{que[1:]} está tardando más de lo normal. Una persona de la tienda lo "
        "está revisando y te escribirá en la conversación."]


def _caducado(datos: Mapping[str, Any]) -> tuple[str, list[str]]:
    importe, pedido = _eur(datos.get("importe")) or "", datos.get("pedido")
    de = f" de {importe}" if importe else ""
    del_pedido = f" del pedido {pedido}" if pedido else ""
    return "el enlace de pago de tu cambio ha caducado", [
        f"El enlace para pagar la diferencia{de} del cambio de producto{del_pedido} ha caducado "
        "sin pagarse: el cambio queda anulado y no se te ha cobrado nada. Si aún lo quieres, "
        "pídenos el cambio otra vez en la conversación."]


def _fallo_tardio(datos: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Lo que dimos por hecho y el proveedor de pagos deshizo después."""
    importe, pedido = _eur(datos.get("importe")) or "", datos.get("pedido")
    del_pedido = f" del pedido {pedido}" if pedido else ""
    de = f" de {importe}" if importe else ""
    if datos.get("tipo") == "cobro":
        return "el pago de tu cambio no se ha completado", [
            f"Te dijimos que habíamos cobrado la diferencia{de} del cambio de producto{del_pedido}, "
            "pero tu banco ha rechazado después el pago: no se te ha cobrado. Una persona de la "
            "tienda lo está revisando y te escribirá en la conversación."]
    return "tu reembolso no se ha completado", [
        f"Te dijimos que tu reembolso{de}{del_pedido} estaba hecho, pero el proveedor de pagos "
        "nos avisa de que ha fallado después: todavía no te hemos devuelto ese dinero. Una "
        "persona de la tienda lo está revisando y te escribirá en la conversación."]


def pintar_cliente(
    datos: Mapping[str, Any], *, enlace: str, enlace_baja: str, horas_enlace: float
) -> Mensaje:
    """El correo de un aviso al cliente (``datos`` de la cola de avisos)."""
    datos = con_operaciones(datos)
    tienda = datos.get("tienda_nombre") or "la tienda"
    suceso = datos.get("suceso")
    if suceso == "decision":
        asunto, lineas = _decision(datos, tienda)
    elif suceso == "pago":
        asunto, lineas = _pago(datos)
    elif suceso == "marcado":
        asunto, lineas = _marcado(datos)
    elif suceso == "fallo_tardio":
        asunto, lineas = _fallo_tardio(datos)
    elif suceso == "caducado":
        asunto, lineas = _caducado(datos)
    else:
        asunto, lineas = "tienes una respuesta nueva", [
            f"{tienda} te ha respondido en tu conversación."]
    nombre = (datos.get("cliente_nombre") or "").split(" ")[0]
    horas = f"{horas_enlace:g} horas" if horas_enlace != 1 else "1 hora"
    texto = [
        f"Hola{', ' + nombre if nombre else ''}:", "",
        *lineas, "",
        "Tienes la respuesta completa en tu conversación con la tienda. Para verla y seguir "
        f"escribiendo, abre este enlace (sirve durante {horas} y solo para esta conversación):",
        enlace, "",
        "Si ya ha caducado, entra en el chat de la tienda como siempre.", "",
        "--",
        f"Te escribimos porque tenías una conversación pendiente con {tienda} y no estabas en el chat.",
        f"Si no quieres recibir más correos como este, date de baja aquí: {enlace_baja}",
    ]
    return Mensaje(asunto=f"{tienda}: {asunto}", texto="\n".join(texto), enlace=enlace)


def con_operaciones(datos: Mapping[str, Any]) -> Mapping[str, Any]:
    """Los datos de la plantilla con ``operaciones`` (qué se pidió y qué se decidió, en datos
    llanos) calculadas al entregar desde la decisión guardada: el turno no las calcula."""
    decision = datos.get("decision")
    if "operaciones" in datos or not decision:
        return datos
    return {**datos, "operaciones": operaciones_decididas(decision["peticion"], decision["decisiones"])}


def operaciones_decididas(peticion: Mapping[str, Any], decisiones: list[Mapping[str, Any]]) -> list[dict]:
    """Cada operación pedida con lo decidido, en datos llanos: título, pedido, importe
    pedido y aprobado, resultado y motivo (ni ids de llamadas ni SKUs)."""
    operaciones = []
    for accion, decision in zip(peticion.get("action_requests") or [], decisiones, strict=False):
        herramienta = REGISTRO.get(accion.get("name"))
        args = accion.get("args") or {}
        tipo = decision.get("type")
        editados = ((decision.get("edited_action") or {}).get("args") or {}) if tipo == "edit" else {}
        operaciones.append({
            "titulo": herramienta.titulo_encargado if herramienta else "",
            "pedido": args.get("pedido"),
            "importe": None if args.get("importe") is None else str(args.get("importe")),
            "importe_final": None if editados.get("importe") is None else str(editados["importe"]),
            "resultado": tipo,
            "motivo": decision.get("message") if tipo in ("reject", "respond") else None,
        })
    return operaciones
