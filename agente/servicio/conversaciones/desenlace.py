"""Lo que se guarda al terminar una ejecución: una pausa se encola, una respuesta cierra el turno.

Cada desenlace es una sola sentencia atómica (``cola.encolar`` o
``mensajes.cerrar_turno``): el cliente nunca ve una respuesta sin su estado, ni una pausa
sin su fila en la cola. Lo usan el turno del cliente, la decisión y el conciliador.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage

from agente.middleware.limites import limite_alcanzado
from agente.notificaciones.avisos_cliente import AvisoCliente, avisar_cliente
from agente.servicio import textos
from agente.servicio.aprobaciones import avisos_firma as avisos
from agente.servicio.aprobaciones import cola, firmas
from agente.servicio.conversaciones import mensajes
from agente.servicio.conversaciones.ejecucion import Ejecutor
from agente.servicio.resultados import Ejecucion, Respuesta
from nucleo.contexto import ContextoCliente

__all__ = ["JuntoAlCierre", "cerrar_ejecucion", "disculpa", "encolar_pausa", "mensaje_final"]

# Lo que se confirma con el desenlace: (conexión en la transacción del cierre, estado).
JuntoAlCierre = Callable[[psycopg.Connection, str], None]

SIN_RESPUESTA = "Lo siento, no he podido completar tu consulta. Una persona de la tienda te atenderá."

SELECT_VEREDICTOS_SQL = """
SELECT tool_call_id, requiere_encargado, motivos, umbrales FROM evaluaciones_politica
WHERE thread_id = %(thread_id)s AND tool_call_id = ANY(%(ids)s)
"""


def mensaje_final(mensajes_estado: list[Any]) -> str:
    """La última respuesta del modelo en este turno (sin llamadas a herramientas).

    Una respuesta en blanco («\n», espacios) no es una respuesta: el cliente leería un
    mensaje vacío (lo encontró el modelo del caos, ``tests/integracion/test_caos.py``)."""
    for mensaje in reversed(mensajes_estado):
        if isinstance(mensaje, AIMessage) and not mensaje.tool_calls and mensaje.content:
            texto = mensaje.text if hasattr(mensaje, "text") else str(mensaje.content)
            if texto.strip():
                return texto
        if isinstance(mensaje, HumanMessage):
            break
    return SIN_RESPUESTA


def encolar_pausa(
    ejecutor: Ejecutor,
    thread_id: str,
    ctx: ContextoCliente,
    interrupcion: Any,
    *,
    trace_id: str | None,
    mensajes_estado: list[Any] | None = None,
    texto: str | None = None,
    junto_al_cierre: JuntoAlCierre | None = None,
) -> dict[str, Any]:
    """Encola la pausa del hilo; sin ``mensajes_estado`` (o sin traza) los lee del estado.
    ``junto_al_cierre``: como en ``cerrar_ejecucion``, con el estado ``esperando_aprobacion``."""
    if mensajes_estado is None or trace_id is None:
        estado = ejecutor.estado(thread_id)
        mensajes_estado = estado.values.get("messages", [])
        # La metadata de la ejecución se copia en cada checkpoint: ahí sigue la traza.
        trace_id = trace_id or (estado.metadata or {}).get("trace_id")
    ultimo = next((m for m in reversed(mensajes_estado) if isinstance(m, AIMessage)), None)
    con_firma = ejecutor.registro.decisiones_permitidas()
    # Una pausa que sale de la herramienta (la revalidación del efecto) nombra su llamada; la
    # de LangChain es la de todas las llamadas con firma del último mensaje del modelo.
    propias = (interrupcion.value or {}).get("tool_call_ids") if isinstance(interrupcion.value, dict) else None
    llamadas = [t for t in (ultimo.tool_calls if ultimo else [])
                if t["name"] in con_firma and (propias is None or t["id"] in propias)]
    # Sin modo pipeline: sobre el socket local un viaje cuesta menos que la maquinaria de
    # pipeline de psycopg (``python -m bench.transacciones``), y cada error sale en su sentencia.
    with ejecutor.pool.connection() as c, c.transaction():
        # La autoridad se fija aquí, una vez, desde los veredictos guardados; los avisos a
        # quien puede firmar se encolan en la misma transacción (nunca rompen la pausa).
        matrices = firmas.MatricesLeidas(c, versiones=ejecutor.versiones_matriz)
        motivos: dict[str, tuple[str, ...]] = {}
        requisito = firmas.requisito_de_pausa(
            c, thread_id=thread_id, tienda=ctx.tienda, llamadas=llamadas, registro=ejecutor.registro,
            matrices=matrices, motivos=motivos,
        )
        peticion = cola.encolar(
            c,
            thread_id=thread_id,
            tienda=ctx.tienda,
            cliente_id=ctx.cliente_id,
            interrupt_id=interrupcion.id,
            peticion=dict(interrupcion.value),
            contexto=ctx.como_json(),
            trace_id=trace_id,
            llamadas=llamadas,
            texto=texto,
            requisito=requisito,
            # Las bandejas abiertas la ven al momento: el NOTIFY va en la sentencia de la cola.
            notificar=(mensajes.CANAL_NOTIFY, mensajes.PREFIJO_BANDEJA + ctx.tienda),
        )
        avisos.avisar_pausa(c, thread_id=thread_id, interrupt_id=interrupcion.id, ctx=ctx,
                            peticion=peticion, requisito=requisito,
                            matriz=matrices.ya_leida(requisito.get("matriz_id")), motivos=motivos)
        if junto_al_cierre is not None:
            junto_al_cierre(c, "esperando_aprobacion")
        return peticion


def cerrar_ejecucion(
    ejecutor: Ejecutor,
    thread_id: str,
    ctx: ContextoCliente,
    ejecucion: Ejecucion,
    *,
    trace_id: str | None,
    avisar: bool,
    desencolar: bool = True,
    nota: str | None = None,
    aviso_cliente: AvisoCliente | None = None,
    junto_al_cierre: JuntoAlCierre | None = None,
    retenidos: list[dict[str, Any]] | None = None,
) -> Respuesta:
    """Guarda el desenlace de ``ejecucion`` y devuelve lo que se le dice al cliente.

    ``avisar``: el cliente no está esperando esta respuesta (decisión, caducidad,
    conciliación): se le avisa por ``NOTIFY``. ``desencolar=False`` ahorra el borrado de la
    cola cuando ya se sabe que no hay fila. ``nota``: la del encargado que decidió, al final
    del mensaje (la escribe la aplicación, no el modelo: llega tal cual).
    Con ``avisar``, si el cliente no tiene el chat conectado, un aviso a su correo en la
    misma transacción que la respuesta (``aviso_cliente``; sin él, «respuesta nueva»).
    ``junto_al_cierre(conexion, estado)``: sentencias que se confirman con el desenlace, en
    su transacción (la decisión aplicada): viajan con el cierre, sin viaje ni commit propios.
    ``retenidos``: con una lista, el cierre de una respuesta marca como entregados, en la
    misma sentencia, los mensajes que el cliente escribió mientras esperaba, y los añade a
    ella tras el commit (``retenidos.responder_retenidos`` los contesta).
    """
    ejecutor.comprobar(thread_id)  # fencing: sin el candado del hilo no se escribe el desenlace
    pausa = ejecucion.pausa
    if pausa is not None:
        texto = textos.con_nota(textos.mensaje_espera(
            pausa.value, ejecutor.registro, _nombres_de_productos(ejecutor, textos.skus_de(pausa.value))), nota)
        def con_avisos(c: psycopg.Connection, estado: str) -> None:
            # El NOTIFY del chat en la transacción de la pausa: sale al confirmarla.
            if avisar:
                mensajes.avisar(c, thread_id)
            if junto_al_cierre is not None:
                junto_al_cierre(c, estado)

        peticion = encolar_pausa(
            ejecutor, thread_id, ctx, pausa, trace_id=trace_id,
            mensajes_estado=ejecucion.mensajes, texto=texto, junto_al_cierre=con_avisos,
        )
        _registrar_veredictos(ejecutor, thread_id, peticion, trace_id)
        return Respuesta("esperando_aprobacion", texto, thread_id, trace_id)
    mensajes_estado = ejecucion.mensajes
    ultimo = mensajes_estado[-1] if mensajes_estado else None
    estado = "necesita_persona" if limite_alcanzado(ultimo) else "abierta"
    texto = textos.con_nota(mensaje_final(mensajes_estado), nota)
    respuesta_de = getattr(ultimo, "id", None)
    if not avisar and junto_al_cierre is None and retenidos is None:
        with ejecutor.pool.connection() as c:
            mensajes.cerrar_turno(c, thread_id, texto, estado=estado, desencolar=desencolar,
                                  respuesta_de=respuesta_de)
        return Respuesta("respondida", texto, thread_id, trace_id)
    aviso = aviso_cliente or AvisoCliente(
        suceso="respuesta", clave=f"respuesta:{respuesta_de or hashlib.sha256(texto.encode()).hexdigest()}",
        urgente=True,
    )
    # El cierre, su NOTIFY, el aviso al cliente (en un savepoint: si falla, la respuesta
    # queda igual) y lo que va junto al cierre, en una transacción (sin pipeline: ver arriba).
    with ejecutor.pool.connection() as c:
        with c.transaction():
            cierre = mensajes.cerrar_turno(
                c, thread_id, texto, estado=estado, desencolar=desencolar, respuesta_de=respuesta_de,
                entregar_retenidos=retenidos is not None, avisar=avisar,
            )
            if avisar:
                avisar_cliente(c, thread_id, aviso)
            if junto_al_cierre is not None:
                junto_al_cierre(c, "respondida")
        fila = cierre.fetchone() if retenidos is not None else None
    if fila is not None:
        retenidos.extend(fila["retenidos"] or [])
    return Respuesta("respondida", texto, thread_id, trace_id)


def disculpa(ejecutor: Ejecutor, thread_id: str, trace_id: str | None) -> Respuesta:
    """El turno falló (proveedor caído...): disculpa corta y el hilo pasa a una persona."""
    ejecutor.comprobar(thread_id)
    with ejecutor.pool.connection() as c:
        mensajes.cerrar_turno(
            c, thread_id, textos.DISCULPA, estado="necesita_persona", desencolar=False
        )
    return Respuesta("respondida", textos.DISCULPA, thread_id, trace_id)


def _registrar_veredictos(
    ejecutor: Ejecutor, thread_id: str, peticion: dict[str, Any], trace_id: str | None
) -> None:
    """Los motivos de la política, como evento de la traza (solo con trazas activas)."""
    if not trace_id or not ejecutor.trazador.activo:
        return
    ids = list(peticion.get("tool_call_ids", []))
    with ejecutor.pool.connection() as c:
        filas = c.execute(SELECT_VEREDICTOS_SQL, {"thread_id": thread_id, "ids": ids}).fetchall()
    por_id = {f["tool_call_id"]: f for f in filas}
    # tool_call_ids va en el orden de action_requests (lo arma cola.encolar).
    for tool_call_id, accion in zip(ids, peticion.get("action_requests", []), strict=False):
        fila = por_id.get(tool_call_id)
        if fila is None:
            continue
        ejecutor.trazador.registrar_veredicto(
            trace_id=trace_id,
            herramienta=accion.get("name"),
            tool_call_id=fila["tool_call_id"],
            requiere_encargado=fila["requiere_encargado"],
            motivos=fila["motivos"],
            umbrales=fila["umbrales"],
        )


SELECT_NOMBRES_PRODUCTO_SQL = "SELECT sku, nombre FROM productos WHERE sku = ANY(%(skus)s)"


def _nombres_de_productos(ejecutor: Ejecutor, skus: list[str]) -> dict[str, str]:
    """SKU -> nombre del producto (lo que lee el cliente); vacío si la pausa no nombra ninguno."""
    if not skus:
        return {}
    with ejecutor.pool.connection() as c:
        return {f["sku"]: f["nombre"] for f in c.execute(SELECT_NOMBRES_PRODUCTO_SQL, {"skus": skus}).fetchall()}
