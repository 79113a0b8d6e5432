"""Órdenes de operación: ``agente reconciliar``, ``agente auditoria``, ``agente movimientos``,
``agente limpiar --dias N`` y ``agente secreto``.

Se pueden programar en todos los servidores: la conciliación y la limpieza toman cada hilo
con su candado, y la limpieza la ejecuta uno solo a la vez.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from agente.cli.comun import (
    con_zona,
    errores_en_una_linea,
    escribir_csv,
    servicio,
    tabla,
    url_migrada,
)
from nucleo.operaciones import VALE_VENTANA_DIAS

__all__ = ["TITULO_AFIRMACIONES", "TITULOS_LIBRO", "TITULOS_POLITICA", "TITULOS_SERIE", "auditoria", "limpiar",
           "movimientos", "reconciliar", "secreto"]

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
    "fallos_tardios": "reembolsos o cobros que el proveedor dio por hechos y después por fallidos",
    "cancelaciones": "cancelaciones sin su reembolso, sin sus unidades o de un pedido no cancelado",
}

# Lo que el agente dijo al cliente que pasó y no está en la base (``auditoria.verdad``).
TITULO_AFIRMACIONES = "Mensajes del agente (7 días) que afirman algo que no pasó"

# Lo que un orden en serie no habría dejado pasar sin firma (``auditoria_serie``).
TITULOS_SERIE = {
    "vales_en_la_ventana": f"vales sin firma de un cliente que ya tenía otro en {VALE_VENTANA_DIAS} días",
    "reenvios_repetidos": "reenvíos sin firma de una línea ya reenviada",
    "devoluciones_de_mas": "reembolsos sin firma con el cliente ya en el máximo de devoluciones de su ventana",
    "compensaciones_encadenadas": "compensaciones sin firma de un pedido o una línea ya compensados",
    "sobrecompensacion": "líneas compensadas sin firma por encima de lo pagado",
    "cancelado_y_enviado": "pedidos cancelados y a la vez enviados o entregados",
    "reembolsado_y_reabierto": "pedidos reembolsados que han vuelto a pendiente o enviado",
}


@errores_en_una_linea
def reconciliar() -> None:
    """Caduca lo vencido, repara hilos a medias y completa reembolsos y cobros pendientes.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    with servicio() as abierto:
        caducadas = abierto.caducar()
        arreglos = abierto.reconciliar()
        pagos = abierto.completar_movimientos(solo_vencidos=False)
        if not arreglos and not caducadas and not pagos:
            typer.echo("Todo en orden: nada que conciliar.")
            return
        for thread_id in caducadas:
            typer.echo(f"{thread_id}: caducada sin revisión")
        for arreglo in arreglos:
            typer.echo(f"{arreglo['thread_id']}: {arreglo['accion']}")
        for referencia in pagos.completados:
            typer.echo(f"{referencia}: completado en la pasarela")
        for referencia in pagos.en_curso:
            typer.echo(f"{referencia}: en curso en el proveedor (lo termina su webhook)")
        for referencia in pagos.caducados:
            typer.echo(f"{referencia}: el enlace de pago caducó; el cambio queda anulado")
        for referencia in pagos.fallidos:
            marca = " (marcado para una persona)" if referencia in pagos.marcados else ""
            typer.echo(f"{referencia}: sigue pendiente, la pasarela falla{marca}")


@errores_en_una_linea
def auditoria(
    pendientes_minutos: Annotated[
        int, typer.Option(help="Minutos a partir de los que un movimiento pendiente es un hallazgo.")
    ] = 60,
) -> None:
    """Comprueba firmas, libro, política, orden en serie y lo que el agente dijo (código 1 si hay algún hallazgo).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""
    from agente.servicio.auditoria.informe import hallazgos

    with servicio() as abierto:
        informe = abierto.auditoria(pendientes_mas_de_segundos=pendientes_minutos * 60)
    sin_firma = informe["sin_firma"]
    if sin_firma:
        tabla("Efectos sin la firma requerida",
              ["Tipo", "Número", "Hilo", "tool_call_id", "Tienda", "Importe", "Aprobado por", "Creado"],
              [[f["tipo"], f["numero"], f["thread_id"], f["tool_call_id"], f["tienda"], f["importe"],
                f["aprobado_por"], f["creado"]] for f in sin_firma])
    typer.echo(f"Efectos sin la firma requerida: {len(sin_firma)}")
    _tabla_firmas(informe["firmas"])
    fallidas = informe["fallidas"]
    if fallidas:
        tabla("Decisiones aprobadas cuyo efecto no se pudo hacer",
              ["Id", "Hilo", "Tienda", "Encargado", "Decidida", "Error"],
              [[f["id"], f["thread_id"], f["tienda"], f["encargado_id"], f["decidida"], f["fallo"]]
               for f in fallidas])
    typer.echo(f"Decisiones aprobadas cuyo efecto falló: {len(fallidas)}")
    for seccion, clave, titulos in (("Libro", "libro", TITULOS_LIBRO), ("Política", "politica", TITULOS_POLITICA),
                                    ("En serie", "serie", TITULOS_SERIE)):
        for comprobacion, filas in informe[clave].items():
            if filas:
                columnas = list(filas[0])
                tabla(f"{seccion}: {titulos[comprobacion]}", columnas, [[f[c] for c in columnas] for f in filas])
            typer.echo(f"{seccion}, {titulos[comprobacion]}: {len(filas)}")
    afirmaciones = informe.get("afirmaciones", [])
    if afirmaciones:
        tabla(TITULO_AFIRMACIONES, ["Hallazgo", "Hilo", "Mensaje", "Frase", "Detalle"],
              [[f["hallazgo"], f["thread_id"], f["mensaje_id"], f["frase"], f["detalle"]] for f in afirmaciones])
    typer.echo(f"{TITULO_AFIRMACIONES}: {len(afirmaciones)}")
    if informe["tiempos"]:
        tabla("Tiempo hasta la decisión (segundos)", ["Tienda", "Decisiones", "p50", "p90", "Máximo"],
              [[t["tienda"], t["decisiones"], f"{t['p50']:.0f}", f"{t['p90']:.0f}", f"{t['maximo']:.0f}"]
               for t in informe["tiempos"]])
    if informe.get("canales"):
        tabla("Firmas por canal (web, cli, protocolo)", ["Tienda", "Canal", "Aprobaciones", "Política"],
              [[c["tienda"], c["canal"], c["aprobaciones"], c["politica"]] for c in informe["canales"]])
    if hallazgos(informe):
        raise typer.Exit(code=1)


def _tabla_firmas(filas: list[dict]) -> None:
    if filas:
        tabla("Efectos cuyas firmas no cumplen la autoridad guardada",
              ["Hallazgo", "Tipo", "Número", "Hilo", "Tienda", "Importe", "Detalle"],
              [[f["hallazgo"], f["tipo"], f["numero"], f["thread_id"], f["tienda"], f["importe"],
                f["detalle"]] for f in filas])
    typer.echo(f"Efectos con firmas que no cumplen la autoridad: {len(filas)}")


@errores_en_una_linea
def limpiar(
    dias: int = typer.Option(
        30, "--dias", min=1, help="Días sin actividad tras los que se borran los checkpoints."
    ),
) -> None:
    """Borra los checkpoints de conversaciones sin actividad hace más de N días.

    Nunca toca una conversación que espera a un encargado ni las tablas de negocio o
    de auditoría. Se puede programar en todos los servidores: solo uno la ejecuta.

    Orden local de operador: usa la base directamente y no actúa como ninguna persona.
    """
    from agente.servicio.operador.plataforma import limpiar_checkpoints

    informe = limpiar_checkpoints(url_migrada(), dias=dias)
    if informe.omitida:
        typer.echo("Otro servidor está haciendo la limpieza ahora mismo: no se ha hecho nada.")
        return
    typer.echo(
        f"Checkpoints borrados de {informe.limpiados} conversaciones sin actividad "
        f"desde hace más de {dias} días."
    )
    if informe.ocupados:
        typer.echo(f"{len(informe.ocupados)} conversaciones estaban en uso: se limpiarán la próxima vez.")


def secreto() -> None:
    """Imprime un AGENTE_SECRETO nuevo y fuerte (32 bytes aleatorios en hexadecimal).

    Orden local de operador: no usa la base ni el servidor, ni actúa como ninguna persona."""
    from nucleo.secretos import secreto_nuevo

    typer.echo(secreto_nuevo())


@errores_en_una_linea
def movimientos(
    tienda: str | None = typer.Option(None, "--tienda", help="Solo esta tienda (sin ella, todas)."),
    desde: Annotated[datetime | None, typer.Option("--desde", help="Desde (AAAA-MM-DD, incluido).")] = None,
    hasta: Annotated[datetime | None, typer.Option("--hasta", help="Antes de (AAAA-MM-DD, excluido).")] = None,
    tipo: str | None = typer.Option(None, "--tipo", help="reembolso, diferencia_devuelta, cobro, cobro_devuelto, "
                                    "cancelacion, cambio, reenvio o vale."),
    estado: str | None = typer.Option(None, "--estado", help="completado, pendiente, fallido o anulado."),
    csv: str | None = typer.Option(None, "--csv", help="Escribe el CSV en ese fichero («-»: la salida)."),
    formato: str = typer.Option("hoja", "--formato", help="Con --csv: hoja (hoja de cálculo en español) o maquina."),
) -> None:
    """Todo el dinero y la mercancía que se movieron, automáticos o firmados, con los totales por
    tipo (los de la pestaña «Movimientos»; el importe final, solo de los completados).

    Orden local de operador: usa la base directamente y no actúa como ninguna persona."""

    from agente.servicio.auditoria.movimientos import Filtros
    from agente.servicio.auditoria.movimientos_csv import como_csv, como_csv_hoja
    from agente.servicio.decisiones.decididas import FORMATOS_CSV
    from nucleo.errores import DecisionNoValida

    if formato not in FORMATOS_CSV:
        raise DecisionNoValida(f"formato desconocido «{formato}»: usa {' o '.join(FORMATOS_CSV)}")
    try:
        filtros = Filtros(desde=con_zona(desde), hasta=con_zona(hasta), tipo=tipo, estado=estado,
                                     tienda=tienda, por_pagina=10_000)
    except ValueError as exc:
        raise DecisionNoValida(str(exc)) from None
    with servicio() as abierto:
        if tienda is not None:
            abierto.comprobar_tienda(tienda)
        filas, total, totales = abierto.movimientos(None, filtros)
    if csv is not None:
        texto = como_csv(filas) if formato == "maquina" else como_csv_hoja(filas)
        escribir_csv(texto, csv, filas=len(filas), que="movimientos", formato=formato)
        return
    if not totales:
        typer.echo("No hay movimientos que cumplan los filtros.")
        return
    tabla(f"Movimientos por tipo ({total})", ["Tipo", "Movimientos", "Importe", "Importe final", "Pendientes",
                                              "Fallidos", "Anulados"],
          [[t["titulo"], t["movimientos"], t["importe"] or "", t["importe_final"] or "", t["pendientes"],
            t["fallidos"], t["anulados"]] for t in totales], enteras=("Tipo",))
