"""CLI ``agente``: la misma capa de servicio que usa la API HTTP, con salida en español."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from datetime import datetime
from typing import Annotated

import typer

from agente.cli_errores import errores_en_una_linea
from agente.nucleo.ajustes import ajustes
from agente.nucleo.errores import ErrorDominio

app = typer.Typer(help="Agente de atención al cliente para tiendas.", no_args_is_help=True)
db = typer.Typer(help="Base de datos: migraciones, datos de demo, URL, reinicio.", no_args_is_help=True)
app.add_typer(db, name="db")


def _url() -> str:
    from agente.bd import url_basedatos
    from agente.nucleo.bd import comprobar_conexion

    aj = ajustes()
    url = url_basedatos(aj)
    comprobar_conexion(url, ajuste="DATABASE_URL" if aj.database_url else "AGENTE_PGDATA")
    return url


@db.command("migrate")
@errores_en_una_linea
def db_migrate() -> None:
    """Aplica las migraciones pendientes de sql/ (idempotente)."""
    from agente.migraciones import migrar

    aplicadas = migrar(_url())
    if aplicadas:
        typer.echo("Migraciones aplicadas: " + ", ".join(aplicadas))
    else:
        typer.echo("El esquema ya estaba al día: nada que aplicar.")


@db.command("demo")
@errores_en_una_linea
def db_demo() -> None:
    """Carga (o refresca) el catálogo de demostración."""
    import psycopg

    from agente.demo import cargar_demo
    from agente.migraciones import migrar
    from agente.nucleo.bd import KWARGS_CONEXION

    url = _url()
    migrar(url)
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        recuentos = cargar_demo(conexion)
    typer.echo(
        "Demo cargada: "
        + ", ".join(f"{n} {nombre}" for nombre, n in recuentos.items())
    )


@db.command("url")
@errores_en_una_linea
def db_url() -> None:
    """Muestra la URL de conexión (arranca el embebido si hace falta)."""
    typer.echo(_url())


@db.command("reset")
@errores_en_una_linea
def db_reset(
    yes: bool = typer.Option(False, "--yes", help="No pedir confirmación."),
) -> None:
    """Borra TODOS los datos del PostgreSQL embebido y vuelve a migrar."""
    import psycopg

    from agente.migraciones import migrar
    from agente.nucleo.bd import KWARGS_CONEXION

    aj = ajustes()
    if aj.database_url:
        raise ErrorDominio("db reset solo funciona con el PostgreSQL embebido (DATABASE_URL está definido)")
    if not yes and not typer.confirm(f"Se borrarán todos los datos de {aj.pgdata}. ¿Continuar?"):
        typer.echo("Cancelado: no se ha borrado nada.")
        raise typer.Exit(code=1)
    url = _url()
    with psycopg.connect(url, **KWARGS_CONEXION) as conexion:
        conexion.execute("DROP SCHEMA public CASCADE")
        conexion.execute("CREATE SCHEMA public")
    migrar(url)
    typer.echo("Base de datos vaciada y migrada de nuevo.")


@contextmanager
def _servicio():
    from agente.migraciones import migrar
    from agente.servicio.fabrica import crear_servicio

    url = _url()
    migrar(url)
    servicio = crear_servicio(ajustes(), url=url)
    try:
        yield servicio
    finally:
        servicio.cerrar()  # vacía las trazas pendientes antes de salir


def _tabla(
    titulo: str, columnas: list[str], filas: list[list], *, enteras: tuple[str, ...] = ("Hilo",),
    minimos: dict[str, int] | None = None,
) -> None:
    """Tabla de rich. Las columnas ``enteras`` (ids que se copian) nunca se cortan; las de
    ``minimos``, no se estrechan por debajo de ese ancho."""
    import shutil

    from rich.console import Console
    from rich.table import Table

    tabla = Table(title=titulo)
    for columna in columnas:
        ancho = max((len(str(f[columnas.index(columna)] or "")) for f in filas), default=0)
        if columna in enteras:
            tabla.add_column(columna, no_wrap=True, min_width=ancho)
        else:
            tabla.add_column(columna, min_width=(minimos or {}).get(columna))
    for fila in filas:
        tabla.add_row(*[str(v) if v is not None else "" for v in fila])
    Console(width=max(160, shutil.get_terminal_size((160, 24)).columns)).print(tabla)


@app.command("chat")
@errores_en_una_linea
def chat(
    cliente: str = typer.Option(..., "--cliente", help="Id del cliente (p. ej. C-0001)."),
    hilo: str | None = typer.Option(None, "--hilo", help="Continuar una conversación existente."),
) -> None:
    """Conversación por terminal como ese cliente (Ctrl-D para salir)."""
    from agente.cli_bandeja import EscuchaChat, pista_decidir
    from agente.nucleo.errores import AprobacionPendiente, HiloOcupado

    with _servicio() as servicio:
        ctx = servicio.contexto_de_cliente(cliente, canal="terminal")
        thread_id = servicio.resolver_hilo(hilo) if hilo else servicio.iniciar_conversacion(ctx)
        servicio.consulta(thread_id, ctx)  # 403 si el hilo es de otro cliente
        typer.echo(f"Conversación {thread_id} como {ctx.nombre} ({ctx.tienda}). Ctrl-D para salir.")
        # Lo que llegue más tarde (la decisión de un encargado) se imprime en cuanto llega.
        with EscuchaChat(servicio, thread_id, ctx, typer.echo) as escucha:
            while True:
                try:
                    texto = input("tú> ")
                except EOFError:
                    typer.echo("")
                    break
                if not texto.strip():
                    continue
                try:
                    with escucha.turno():
                        respuesta = servicio.conversar(thread_id, texto, ctx)
                except (AprobacionPendiente, HiloOcupado) as exc:
                    typer.echo(f"agente> {exc.mensaje}")
                    continue
                typer.echo(f"agente> {respuesta.mensaje_cliente}")
                if respuesta.estado == "esperando_aprobacion":
                    typer.echo(pista_decidir(thread_id, servicio.encargado_sugerido(ctx.tienda)))


def _resumen_accion(registro, accion: dict) -> str:
    """«reembolsar: el reembolso de 120,00 EUR del pedido P-...» (texto del registro)."""
    herramienta = registro.get(accion.get("name"))
    detalle = herramienta.texto_espera(accion.get("args") or {}) if herramienta else ""
    return f"{accion.get('name')}: {detalle}" if detalle else str(accion.get("name"))


@app.command("aprobaciones")
@errores_en_una_linea
def aprobaciones(
    tienda: str | None = typer.Option(None, "--tienda", help="Solo las de esta tienda."),
    limite: int = typer.Option(50, "--limite", min=1, max=500),
    historial: bool = typer.Option(False, "--historial", help="Las ya decididas (la más reciente primero)."),
    desde: Annotated[datetime | None, typer.Option("--desde", help="Con --historial: decididas desde (AAAA-MM-DD).")] = None,
    hasta: Annotated[datetime | None, typer.Option("--hasta", help="Con --historial: decididas antes de (AAAA-MM-DD).")] = None,
    decision: str | None = typer.Option(None, "--decision", help="Con --historial: approve, edit, reject, respond o caducada."),
    encargado: str | None = typer.Option(None, "--encargado", help="Con --historial: quién firmó (cualquiera de las firmas)."),
    cliente: str | None = typer.Option(None, "--cliente", help="Con --historial: de este cliente."),
    pedido: str | None = typer.Option(None, "--pedido", help="Con --historial: de este pedido."),
) -> None:
    """La cola de aprobaciones pendientes, la más antigua primero, con los motivos; con
    ``--historial``, las decididas, con los mismos filtros que ``GET /api/decisiones``."""
    if historial:
        return _historial(tienda, limite, desde, hasta, decision, encargado, cliente, pedido)
    from agente.nucleo.fechas import fecha_hora

    with _servicio() as servicio:
        filas = servicio.aprobaciones_pendientes(tienda, limite)
        if not filas:
            typer.echo("No hay aprobaciones pendientes.")
            return
        tabla = []
        for fila in filas:
            resumen = "; ".join(
                _resumen_accion(servicio.registro, a) for a in fila["peticion"].get("action_requests", [])
            )
            motivos = "; ".join(m for lista in fila["motivos"] for m in lista)
            tabla.append([
                fila["thread_id"], fila["tienda"], f"{fila['cliente_nombre']} ({fila['cliente_id']})",
                fecha_hora(fila["creada"]), f"{fila['espera_segundos'] // 60} min",
                resumen, motivos, fila["estado"], fila["traza_url"] or "",
            ])
        _tabla("Aprobaciones pendientes",
               ["Hilo", "Tienda", "Cliente", "Creada", "Espera", "Operaciones", "Motivos", "Estado", "Traza"],
               tabla)


def _historial(tienda, limite, desde, hasta, decision, encargado, cliente, pedido) -> None:
    from agente.cli_bandeja import filas_historial
    from agente.nucleo.errores import DecisionNoValida
    from agente.servicio.decididas import Filtros

    try:
        filtros = Filtros(desde=_con_zona(desde), hasta=_con_zona(hasta), tipo=decision, encargado=encargado,
                          cliente=cliente, pedido=pedido, tienda=tienda, por_pagina=limite)
    except ValueError as exc:
        raise DecisionNoValida(str(exc)) from None
    with _servicio() as servicio:
        decisiones, total = servicio.historial_decisiones([tienda] if tienda else None, filtros)
    if not decisiones:
        typer.echo("No hay decisiones que cumplan los filtros.")
        return
    _tabla(f"Decisiones ({len(decisiones)} de {total})",
           ["Decidida", "Hilo", "Tienda", "Cliente", "Firmas", "Decisión", "Operación", "Importe", "Motivo", "Nota"],
           filas_historial(decisiones), minimos={"Decidida": len("(hora de Madrid)")})


def _con_zona(momento: datetime | None) -> datetime | None:
    """Una fecha de la línea de órdenes, en la hora de las tiendas."""
    from zoneinfo import ZoneInfo

    from agente.nucleo.fechas import ZONA_TIENDAS

    if momento is None or momento.tzinfo is not None:
        return momento
    return momento.replace(tzinfo=ZoneInfo(ZONA_TIENDAS))


@app.command("decidir")
@errores_en_una_linea
def decidir(
    hilo: str = typer.Argument(..., help="thread_id de la conversación (o un prefijo único)."),
    accion: str | None = typer.Argument(None, help="aprobar | rechazar | editar | responder"),
    encargado: str | None = typer.Option(None, "--encargado", help="Id del encargado que decide (obligatorio)."),
    motivo: str | None = typer.Option(None, "--motivo", help="Motivo del rechazo (lo lee el cliente)."),
    importe: str | None = typer.Option(None, "--importe", help="Nuevo importe al editar (p. ej. 90)."),
    texto: str | None = typer.Option(None, "--texto", help="Respuesta a una consulta al encargado."),
) -> None:
    """Decide la aprobación pendiente de un hilo (la misma decisión para cada operación).
    Ejemplo: ``agente decidir h-1a2b aprobar --encargado enc-talavera``."""
    from agente.cli_bandeja import ACCIONES, sin_accion
    from agente.nucleo.errores import DecisionNoValida

    if accion is None or encargado is None:
        raise sin_accion(hilo, accion)
    with _servicio() as servicio:
        hilo = servicio.resolver_hilo(hilo)
        pendiente = servicio.aprobacion(hilo)
        acciones = pendiente["peticion"].get("action_requests", [])
        if accion == "aprobar":
            decisiones = [{"type": "approve"} for _ in acciones]
        elif accion == "rechazar":
            decisiones = [{"type": "reject", "message": motivo or ""} for _ in acciones]
        elif accion == "responder":
            decisiones = [{"type": "respond", "message": texto or ""} for _ in acciones]
        elif accion == "editar":
            if importe is None:
                raise DecisionNoValida("editar necesita --importe")
            # El nuevo importe va donde la herramienta lo deja editar; el resto lo valida el servicio.
            decisiones = [
                {"type": "edit", "edited_action": {"name": a["name"], "args": {
                    **a["args"], **({"importe": importe} if _editable(servicio, a, "importe") else {})}}}
                for a in acciones
            ]
        else:
            raise DecisionNoValida(f"acción desconocida «{accion}»: usa {ACCIONES}")
        respuesta = servicio.decidir(hilo, encargado, decisiones)
        if respuesta.estado == "esperando_firmas":
            typer.echo(f"Firma registrada ({respuesta.firmas} de {respuesta.firmas_necesarias}): "
                       "la aprobación sigue pendiente de otra firma.")
            return
        if getattr(respuesta, "fallo", None):
            typer.echo(f"Decisión registrada, pero la operación no se pudo hacer: {respuesta.fallo}")
        else:
            typer.echo("Decisión registrada y aplicada.")
        typer.echo(f"Mensaje al cliente:\n{respuesta.mensaje_cliente}")


def _editable(servicio, accion: dict, campo: str) -> bool:
    herramienta = servicio.registro.get(accion.get("name"))
    return herramienta is not None and campo in herramienta.campos_editables


@app.command("hilo")
@errores_en_una_linea
def hilo(thread_id: str = typer.Argument(..., help="thread_id de la conversación (o un prefijo único).")) -> None:
    """Estado de un hilo: mensajes, siguiente paso, pausa pendiente e historia de checkpoints."""
    import json

    with _servicio() as servicio:
        thread_id = servicio.resolver_hilo(thread_id)
        estado = servicio.estado_hilo(thread_id)
        consulta = estado.consulta
        typer.echo(f"Hilo {thread_id} · cliente {consulta['cliente_id']} · tienda {consulta['tienda']} · "
                   f"estado {consulta['estado']}")
        typer.echo(f"Siguiente paso: {', '.join(estado.siguiente) or '(ninguno: terminado)'}")
        for interrupcion in estado.interrupciones:
            typer.echo(f"Pausa pendiente {interrupcion['id']}:")
            typer.echo(json.dumps(interrupcion["valor"], ensure_ascii=False, indent=2, default=str))
        filas = []
        for m in estado.mensajes:
            llamadas = ", ".join(f"{t['name']}({json.dumps(t['args'], ensure_ascii=False, default=str)})"
                                 for t in getattr(m, "tool_calls", []) or [])
            filas.append([m.type, (str(m.content) or llamadas)[:200], getattr(m, "tool_call_id", "") or ""])
        _tabla("Mensajes", ["Tipo", "Contenido", "tool_call_id"], filas)
        _tabla("Historia de checkpoints (reciente primero)", ["checkpoint_id", "Paso", "Siguiente", "Mensajes"],
               [[h.checkpoint_id, h.paso, ", ".join(h.siguiente), h.mensajes] for h in estado.historia])


@app.command("reconciliar")
@errores_en_una_linea
def reconciliar() -> None:
    """Caduca lo vencido, repara hilos a medias y completa reembolsos y cobros pendientes."""
    with _servicio() as servicio:
        caducadas = servicio.caducar()
        arreglos = servicio.reconciliar()
        pagos = servicio.completar_movimientos(solo_vencidos=False)
        if not arreglos and not caducadas and not pagos:
            typer.echo("Todo en orden: nada que conciliar.")
            return
        for thread_id in caducadas:
            typer.echo(f"{thread_id}: caducada sin revisión")
        for arreglo in arreglos:
            typer.echo(f"{arreglo['thread_id']}: {arreglo['accion']}")
        for referencia in pagos.completados:
            typer.echo(f"{referencia}: completado en la pasarela")
        for referencia in pagos.fallidos:
            marca = " (marcado para una persona)" if referencia in pagos.marcados else ""
            typer.echo(f"{referencia}: sigue pendiente, la pasarela falla{marca}")


@app.command("auditoria")
@errores_en_una_linea
def auditoria(
    pendientes_minutos: Annotated[
        int, typer.Option(help="Minutos a partir de los que un movimiento pendiente es un hallazgo.")
    ] = 60,
) -> None:
    """Comprueba firmas y libro (sale con código 1 si hay algún hallazgo)."""
    from agente.servicio.auditoria import hallazgos

    with _servicio() as servicio:
        informe = servicio.auditoria(pendientes_mas_de_segundos=pendientes_minutos * 60)
    sin_firma = informe["sin_firma"]
    if sin_firma:
        _tabla("Efectos sin la firma requerida",
               ["Tipo", "Número", "Hilo", "tool_call_id", "Tienda", "Importe", "Aprobado por", "Creado"],
               [[f["tipo"], f["numero"], f["thread_id"], f["tool_call_id"], f["tienda"], f["importe"],
                 f["aprobado_por"], f["creado"]] for f in sin_firma])
    typer.echo(f"Efectos sin la firma requerida: {len(sin_firma)}")
    _tabla_firmas(informe["firmas"])
    fallidas = informe["fallidas"]
    if fallidas:
        _tabla("Decisiones aprobadas cuyo efecto no se pudo hacer",
               ["Id", "Hilo", "Tienda", "Encargado", "Decidida", "Error"],
               [[f["id"], f["thread_id"], f["tienda"], f["encargado_id"], f["decidida"], f["fallo"]]
                for f in fallidas])
    typer.echo(f"Decisiones aprobadas cuyo efecto falló: {len(fallidas)}")
    for seccion, clave, titulos in (("Libro", "libro", TITULOS_LIBRO), ("Política", "politica", TITULOS_POLITICA)):
        for comprobacion, filas in informe[clave].items():
            if filas:
                columnas = list(filas[0])
                _tabla(f"{seccion}: {titulos[comprobacion]}", columnas, [[f[c] for c in columnas] for f in filas])
            typer.echo(f"{seccion}, {titulos[comprobacion]}: {len(filas)}")
    if informe["tiempos"]:
        _tabla("Tiempo hasta la decisión (segundos)", ["Tienda", "Decisiones", "p50", "p90", "Máximo"],
               [[t["tienda"], t["decisiones"], f"{t['p50']:.0f}", f"{t['p90']:.0f}", f"{t['maximo']:.0f}"]
                for t in informe["tiempos"]])
    if hallazgos(informe):
        raise typer.Exit(code=1)


def _tabla_firmas(filas: list[dict]) -> None:
    if filas:
        _tabla("Efectos cuyas firmas no cumplen la autoridad guardada",
               ["Hallazgo", "Tipo", "Número", "Hilo", "Tienda", "Importe", "Detalle"],
               [[f["hallazgo"], f["tipo"], f["numero"], f["thread_id"], f["tienda"], f["importe"],
                 f["detalle"]] for f in filas])
    typer.echo(f"Efectos con firmas que no cumplen la autoridad: {len(filas)}")


TITULOS_POLITICA = {
    "ampliacion_sin_firma": "versiones que amplían sin la firma de alguien por encima del autor",
    "limite_propio": "versiones cuyo autor subió su propio límite o pasó de él",
    "efecto_fuera_de_instantanea": "efectos ejecutados con valores distintos de los fijados al pausar",
    "instantanea_alterada": "instantáneas que no coinciden con la versión que nombran",
    "plazo_fuera_de_rango": "aprobaciones con un plazo más largo que el máximo",
}

TITULOS_LIBRO = {
    "unidades": "unidades compensadas dos veces o por encima de lo pagado",
    "pasarela": "movimientos de la pasarela sin su asiento (o al revés, o con otro importe o tipo)",
    "pendientes": "reembolsos o cobros pendientes demasiado tiempo",
    "diferencias": "cambios con la diferencia sin liquidar",
    "marcados": "movimientos marcados para una persona",
}


from agente.cli_evaluacion import registrar as _registrar_evaluacion  # noqa: E402
from agente.cli_operacion import registrar as _registrar_operacion  # noqa: E402
from agente.cli_politica import registrar as _registrar_politica  # noqa: E402
from agente.retencion_cli import registrar as _registrar_retencion  # noqa: E402
from agente.web.cli_web import registrar as _registrar_web  # noqa: E402

_registrar_web(app)
_registrar_retencion(app)
_registrar_operacion(app, db)
_registrar_evaluacion(app)
_registrar_politica(app)


def main() -> None:  # pragma: no cover - punto de entrada alternativo
    app(prog_name="agente")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
