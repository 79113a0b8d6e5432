"""Las órdenes de la bandeja: ``agente aprobaciones`` y ``agente decidir``.

- ``aprobaciones``: la cola pendiente con sus motivos; con ``--historial``, las decididas con
  los filtros de ``GET /api/decisiones`` y todas las firmas de cada decisión (quién, con qué
  rol, cuándo y qué decidió);
- ``decidir``: la misma decisión para cada operación de la pausa, como la persona que ha
  entrado (``agente entrar``) y a través del servidor (``agente.cli.cliente``);
- ``pista_decidir``: lo que ``agente chat`` imprime al pausar, una orden que funciona tal
  cual (id completo y acción) tras entrar como un encargado de la tienda.

``aprobaciones`` es una orden local de operador: lee la base directamente y no actúa como
nadie.

Las horas van en la zona de las tiendas y lo dicen (``nucleo.fechas.fecha_hora``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from agente.cli.comun import con_zona, errores_en_una_linea, escribir_csv, servicio, tabla
from nucleo import dinero
from nucleo.errores import DecisionNoValida
from nucleo.fechas import fecha_hora

__all__ = ["ACCIONES", "COLUMNAS_HISTORIAL", "aprobaciones", "decidir", "filas_historial", "hora", "pista_decidir", "sin_accion"]

ACCIONES = "aprobar | rechazar --motivo TEXTO | editar --importe 90,50 | responder --texto TEXTO"


def pista_decidir(thread_id: str, encargado: str | None) -> str:
    """La orden para decidir, con la sintaxis exacta (se puede copiar y pegar tras entrar
    como ``encargado`` con ``agente entrar``)."""
    quien = encargado or "ID-DEL-ENCARGADO"
    return (f"[pendiente de un encargado: agente decidir {thread_id} aprobar"
            f"  (o en vez de aprobar: {ACCIONES.split(' | ', 1)[1]});"
            f" antes, entra como quien firma: agente entrar (en la demo: agente entrar --demo {quien})]")


def sin_accion(hilo: str, accion: str | None = None) -> DecisionNoValida:
    """El error de ``agente decidir`` sin acción, con la orden completa."""
    return DecisionNoValida(f"falta la acción: agente decidir {hilo} ACCION, con ACCION = {ACCIONES}")


def hora(valor: Any) -> str:
    return fecha_hora(valor) if isinstance(valor, datetime) else ""


_CANALES = {"web": "la web", "cli": "la CLI", "protocolo": "el protocolo"}
_VERBOS = {"approve": "aprobó", "edit": "editó", "reject": "rechazó", "respond": "respondió"}


def _firmas(firmas: list[dict[str, Any]], n: int) -> str:
    """Una línea por firmante: «Lucía Moreno (enc-talavera, encargado) aprobó · 01/12/2026 10:30
    (hora de Madrid)», con lo que decidió en la operación ``n``."""
    from agente.servicio.decisiones.decididas import lo_que_decidio, nombre_decision

    lineas = []
    for f in firmas:
        decidio = lo_que_decidio(f, n)
        texto = _VERBOS.get(decidio["tipo"], nombre_decision(decidio["tipo"]) or "firmó")
        if decidio["importe"]:
            texto += f" a {dinero.eur(decidio['importe'])}"
        if decidio["motivo"]:
            texto += f": {decidio['motivo']}"
        canal = f" · por {_CANALES.get(f.get('canal'), f.get('canal'))}" if f.get("canal") else ""
        lineas.append(f"{f['nombre']} ({f['encargado']}, {f['rol']}) {texto} · {hora(f['fecha'])}{canal}")
    return "\n".join(lineas)


COLUMNAS_HISTORIAL = ["Decidida", "Hilo", "Tienda", "Cliente", "Firmas", "Decisión", "Operación",
                      "Pedido", "Importe", "Motivo", "Nota"]


def filas_historial(decisiones: list[dict[str, Any]]) -> list[list[Any]]:
    """Una fila por operación decidida, como el CSV, en español: la decisión («editada»), la
    operación por su título («Reembolso»), el importe en euros; en «Firmas», cada persona."""
    from agente.servicio.decisiones.decididas import nombre_decision, nombre_operacion

    filas = []
    for d in decisiones:
        for n, a in enumerate(d["acciones"] or [{}]):
            importe = a.get("importe_final") or a.get("importe_propuesto")
            decision = nombre_decision(d["tipo"])
            filas.append([
                hora(d["decidida"]), d["thread_id"], d["tienda"],
                f"{d['cliente']['nombre']} ({d['cliente']['id']})",
                _firmas(d.get("firmas") or [], n) or d["encargado"]["id"],
                f"{decision} (fallida: {d['fallo']})" if d.get("fallo") else decision,
                nombre_operacion(a.get("nombre")), a.get("pedido") or "",
                dinero.eur(importe) if importe else "", a.get("motivo") or "", d["nota"] or "",
            ])
    return filas


def _resumen_accion(registro, accion: dict) -> str:
    """«Reembolso: el reembolso de 120,00 EUR del pedido P-...» (título de la operación y
    texto del registro)."""
    from agente.servicio.decisiones.decididas import nombre_operacion

    herramienta = registro.get(accion.get("name"))
    detalle = herramienta.texto_espera(accion.get("args") or {}) if herramienta else ""
    titulo = nombre_operacion(accion.get("name"))
    return f"{titulo}: {detalle}" if detalle else titulo


@errores_en_una_linea
def aprobaciones(
    tienda: str | None = typer.Option(None, "--tienda", help="Solo las de esta tienda."),
    limite: int = typer.Option(50, "--limite", min=1, max=500, help="Cuántas como mucho."),
    historial: bool = typer.Option(False, "--historial", help="Las ya decididas (la más reciente primero)."),
    desde: Annotated[datetime | None, typer.Option("--desde", help="Con --historial: decididas desde (AAAA-MM-DD).")] = None,
    hasta: Annotated[datetime | None, typer.Option("--hasta", help="Con --historial: decididas antes de (AAAA-MM-DD).")] = None,
    decision: str | None = typer.Option(None, "--decision", help="Con --historial: aprobada, editada, rechazada, respondida o caducada."),
    encargado: str | None = typer.Option(None, "--encargado", help="Con --historial: quién firmó (cualquiera de las firmas)."),
    cliente: str | None = typer.Option(None, "--cliente", help="Con --historial: de este cliente."),
    pedido: str | None = typer.Option(None, "--pedido", help="Con --historial: de este pedido."),
    csv: str | None = typer.Option(None, "--csv", help="Con --historial: escribe el CSV en ese fichero («-»: la salida)."),
    formato: str = typer.Option("hoja", "--formato", help="Con --csv: hoja (hoja de cálculo en español) o maquina (para programas)."),
) -> None:
    """La cola de aprobaciones pendientes, la más antigua primero, con los motivos.

    Con --historial, las ya decididas, con los mismos filtros que la pestaña Historial y el
    canal de cada firma. Orden local de operador: lee la base, no actúa como nadie."""
    if historial:
        return _historial(tienda, limite, desde, hasta, decision, encargado, cliente, pedido, csv, formato)

    with servicio() as abierto:
        if tienda is not None:
            abierto.comprobar_tienda(tienda)  # «tienda desconocida: sevilla», no «no hay nada»
        filas = abierto.aprobaciones_pendientes(tienda, limite)
        if not filas:
            typer.echo("No hay aprobaciones pendientes.")
            return
        salida = []
        for fila in filas:
            resumen = "; ".join(
                _resumen_accion(abierto.registro, a) for a in fila["peticion"].get("action_requests", [])
            )
            motivos = "; ".join(m for lista in fila["motivos"] for m in lista)
            salida.append([
                fila["thread_id"], fila["tienda"], f"{fila['cliente_nombre']} ({fila['cliente_id']})",
                fecha_hora(fila["creada"]), f"{fila['espera_segundos'] // 60} min",
                resumen, motivos, fila["estado"], fila["traza_url"] or "",
            ])
        tabla("Aprobaciones pendientes",
              ["Hilo", "Tienda", "Cliente", "Creada", "Espera", "Operaciones", "Motivos", "Estado", "Traza"],
              salida)


def _historial(tienda, limite, desde, hasta, decision, encargado, cliente, pedido, csv=None, formato="hoja") -> None:
    from agente.servicio.decisiones.decididas import FORMATOS_CSV, Filtros, tipo_de_nombre

    if formato not in FORMATOS_CSV:
        raise DecisionNoValida(f"formato desconocido «{formato}»: usa {' o '.join(FORMATOS_CSV)}")
    try:
        tipo = tipo_de_nombre(decision) if decision is not None else None
        filtros = Filtros(desde=con_zona(desde), hasta=con_zona(hasta), tipo=tipo, encargado=encargado,
                          cliente=cliente, pedido=pedido, tienda=tienda, por_pagina=limite)
    except ValueError as exc:
        raise DecisionNoValida(str(exc)) from None
    with servicio() as abierto:
        if tienda is not None:
            abierto.comprobar_tienda(tienda)
        decisiones, total = abierto.historial_decisiones([tienda] if tienda else None, filtros)
    if csv is not None:
        return _escribir_csv(decisiones, csv, formato)
    if not decisiones:
        typer.echo("No hay decisiones que cumplan los filtros.")
        return
    tabla(f"Decisiones ({len(decisiones)} de {total})", COLUMNAS_HISTORIAL, filas_historial(decisiones),
          enteras=("Hilo", "Pedido", "Importe"),
          minimos={"Decidida": len("(hora de Madrid)"), "Cliente": 20, "Firmas": 48})


def _escribir_csv(decisiones: list[dict[str, Any]], ruta: str, formato: str) -> None:
    """El mismo CSV que ``GET /api/decisiones.csv?formato=...`` (con BOM en «hoja»)."""
    from agente.servicio.decisiones.decididas import como_csv, como_csv_hoja

    texto = como_csv(decisiones) if formato == "maquina" else como_csv_hoja(decisiones)
    escribir_csv(texto, ruta, filas=len(decisiones), que="decisiones", formato=formato)


@errores_en_una_linea
def decidir(
    hilo: str = typer.Argument(..., help="thread_id de la conversación (o un prefijo único de tu bandeja)."),
    accion: str | None = typer.Argument(None, help="aprobar | rechazar | editar | responder"),
    encargado: str | None = typer.Option(None, "--encargado", help="Solo acota: si lo das, tiene que ser quien ha entrado."),
    motivo: str | None = typer.Option(None, "--motivo", help="Motivo del rechazo (lo lee el cliente)."),
    importe: str | None = typer.Option(None, "--importe", help="Nuevo importe al editar, con coma o punto (p. ej. 90,50)."),
    texto: str | None = typer.Option(None, "--texto", help="Respuesta a una consulta al encargado."),
    nota: str | None = typer.Option(None, "--nota", help="Nota para el cliente, al final del mensaje final."),
) -> None:
    """Decide la aprobación pendiente de un hilo (la misma decisión para cada operación), como
    la persona que ha entrado con «agente entrar», a través del servidor.

    Ejemplo: agente decidir h-1a2b aprobar"""
    from agente.cli.cliente import como_persona

    if accion is None:
        raise sin_accion(hilo, accion)
    if importe is not None:
        importe = dinero.texto(dinero.importe_escrito(importe))  # «300,50» -> «300.50»
    if accion not in ("aprobar", "rechazar", "responder", "editar"):
        raise DecisionNoValida(f"acción desconocida «{accion}»: usa {ACCIONES}")
    if accion == "editar" and importe is None:
        raise DecisionNoValida("editar necesita --importe")
    if accion == "rechazar" and not (motivo or "").strip():
        raise DecisionNoValida("rechazar necesita --motivo: un rechazo necesita un motivo para el cliente")
    with como_persona() as yo:
        yo.comprobar_que_es(encargado, "--encargado")
        hilo = _resolver_hilo(yo, hilo)
        acciones = yo.get(f"/api/aprobaciones/{hilo}")["acciones"]
        if accion == "aprobar":
            decisiones = [{"type": "approve"} for _ in acciones]
        elif accion == "rechazar":
            decisiones = [{"type": "reject", "message": motivo or ""} for _ in acciones]
        elif accion == "responder":
            decisiones = [{"type": "respond", "message": texto or ""} for _ in acciones]
        else:
            # El nuevo importe va donde la herramienta lo deja editar; el resto lo valida el servidor.
            decisiones = [
                {"type": "edit", "edited_action": {"name": a["nombre"], "args": {
                    **a["args"], **({"importe": importe} if "importe" in a["campos_editables"] else {})}}}
                for a in acciones
            ]
        respuesta = yo.post(f"/api/aprobaciones/{hilo}/decision",
                            json={"decisiones": decisiones, **({"nota": nota} if nota else {})})
    if respuesta["estado"] == "esperando_firmas":
        typer.echo(f"Firma registrada ({respuesta['firmas']} de {respuesta['firmas_necesarias']}): "
                   "la aprobación sigue pendiente de otra firma.")
        return
    if respuesta.get("fallo"):
        typer.echo(f"Decisión registrada, pero la operación no se pudo hacer: {respuesta['fallo']}")
    else:
        typer.echo("Decisión registrada y aplicada.")
    typer.echo(f"Mensaje al cliente:\n{respuesta['mensaje_cliente']}")


MIN_PREFIJO = 4


def _resolver_hilo(yo, texto: str) -> str:
    """El thread_id entero de un prefijo único entre las pendientes de tu bandeja (uno que no
    está en ella va tal cual: el servidor dice si no existe o es de otra tienda)."""
    texto = (texto or "").strip()
    if not texto:
        raise DecisionNoValida("falta el id del hilo")
    ids = [a["thread_id"] for a in yo.get("/api/aprobaciones", params={"limite": 200})]
    if texto in ids:
        return texto
    if len(texto) < MIN_PREFIJO:
        raise DecisionNoValida(f"el prefijo «{texto}» es demasiado corto: escribe al menos {MIN_PREFIJO} caracteres")
    candidatos = [i for i in ids if i.startswith(texto)]
    if len(candidatos) > 1:
        raise DecisionNoValida(f"varios hilos pendientes empiezan por «{texto}»: {', '.join(sorted(candidatos))}")
    return candidatos[0] if candidatos else texto
